/**
 * Transcript store: append throughput with fsync (one acknowledged append
 * per entry, and one batch) and cold load time of the real 2.4 MB pi
 * transcript (`../shared/transcripts/pi/before-compaction.jsonl`, converted
 * minimally: message records → message entries), for the JSONL and SQLite
 * stores (and PostgreSQL when `DATABASE_URL` is set; its schema
 * `ce_bench_<pid>` is dropped afterwards), with the in-memory store as a
 * reference point. Cold = a fresh store instance (no in-process cache;
 * the OS page cache is warm); `load / JSON.parse` compares with reading and
 * `JSON.parse`-ing the same JSONL file line by line, i.e. the cost of schema
 * decoding and the per-line checks. `node bench/run.ts store`.
 */
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Entry } from "../packages/core/src/Entry.ts"
import * as InMemoryTranscriptStore from "../packages/core/src/InMemoryTranscriptStore.ts"
import * as JsonlTranscriptStore from "../packages/core/src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../packages/core/src/SqliteTranscriptStore.ts"
import type { AsyncTranscriptStore } from "../packages/core/src/TranscriptStore.ts"
import { piEntries } from "../packages/core/test/support/piEntries.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import * as PostgresTranscriptStore from "../packages/store-postgres/src/PostgresTranscriptStore.ts"

const APPENDS = 500
const COLD_LOADS = 5

const median = (values: ReadonlyArray<number>): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

const timed = async <A>(run: () => Promise<A>): Promise<number> => {
  const start = performance.now()
  await run()
  return performance.now() - start
}

interface Kind {
  readonly name: string
  readonly open: (directory: string) => AsyncTranscriptStore | Promise<AsyncTranscriptStore>
}

export default async function (): Promise<void> {
  const source = transcript("pi/before-compaction.jsonl")
  const bytes = readFileSync(source).length
  const entries: Array<Entry> = piEntries(source)
  const root = mkdtempSync(join(tmpdir(), "store-bench-"))
  const memory: InMemoryTranscriptStore.Records = new Map()
  const kinds: ReadonlyArray<Kind> = [
    { name: "jsonl", open: (directory) => JsonlTranscriptStore.open({ directory }) },
    { name: "sqlite", open: (directory) => SqliteTranscriptStore.open({ filename: join(directory, "store.db") }) },
    ...(process.env.DATABASE_URL
      ? [
          {
            name: "postgres",
            open: () =>
              PostgresTranscriptStore.open({ url: process.env.DATABASE_URL!, schema: `ce_bench_${process.pid}` })
          }
        ]
      : []),
    { name: "memory", open: () => InMemoryTranscriptStore.open(memory) }
  ]
  const rows: Array<Record<string, string | number>> = []
  let parseMs = 0
  try {
    for (const kind of kinds) {
      const directory = join(root, kind.name)
      const store = await kind.open(directory)
      // One acknowledged (fsynced) append per entry: the agent-loop pattern.
      const single = entries.slice(0, APPENDS)
      const singleMs = await timed(async () => {
        for (const entry of single) await store.append("appends", [entry])
      })
      // The whole transcript in one append (an import).
      const batchMs = await timed(() => store.append("pi", entries))
      await store.close()
      if (kind.name === "jsonl") {
        // Reference: the same JSONL file read and JSON.parsed line by line, without schema decoding or checks.
        const file = JsonlTranscriptStore.sessionPath(directory, "pi")
        const parses: Array<number> = []
        for (let run = 0; run <= COLD_LOADS; run++) {
          parses.push(
            await timed(async () =>
              readFileSync(file, "utf8")
                .split("\n")
                .filter(Boolean)
                .map((line) => JSON.parse(line))
            )
          )
        }
        parseMs = median(parses.slice(1))
      }
      // One warm-up load (JIT), then cold store instances.
      const warm = await kind.open(directory)
      await warm.load("pi")
      await warm.close()
      const loads: Array<number> = []
      const views: Array<number> = []
      for (let run = 0; run < COLD_LOADS; run++) {
        const cold = await kind.open(directory)
        loads.push(await timed(() => cold.load("pi", { strict: true })))
        views.push(await timed(() => cold.activeView("pi")))
        await cold.close()
      }
      rows.push({
        store: kind.name,
        "appends/s (1 entry, fsync)": Math.round(single.length / (singleMs / 1000)),
        "ms per append": (singleMs / single.length).toFixed(2),
        "entries/s (1 batch)": Math.round(entries.length / (batchMs / 1000)),
        "cold load ms": median(loads).toFixed(1),
        "cold activeView ms": median(views).toFixed(1),
        "load / JSON.parse": (median(loads) / parseMs).toFixed(2)
      })
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
    if (process.env.DATABASE_URL)
      await PostgresTranscriptStore.dropSchema(process.env.DATABASE_URL, `ce_bench_${process.pid}`)
  }
  console.log(
    `pi transcript: ${(bytes / 1e6).toFixed(2)} MB, ${entries.length} entries; ${APPENDS} single appends; median of ${COLD_LOADS} cold loads; bare read + JSON.parse of the JSONL store file ${parseMs.toFixed(1)} ms`
  )
  console.table(rows)
  const jsonl = rows.find((row) => row.store === "jsonl")!
  for (const other of rows.filter((row) => row.store === "sqlite" || row.store === "postgres")) {
    const ratio = (key: string) => (Number(other[key]) / Number(jsonl[key])).toFixed(2)
    console.log(
      `${other.store} / jsonl: appends/s ${ratio("appends/s (1 entry, fsync)")}x, batch entries/s ${ratio("entries/s (1 batch)")}x, cold load time ${ratio("cold load ms")}x, cold activeView ${ratio("cold activeView ms")}x`
    )
  }
  if (!process.env.DATABASE_URL) console.log("postgres: not run (DATABASE_URL is not set; see README, 'Store tests')")
}
