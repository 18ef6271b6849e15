/**
 * Many processes, one transcript: appends per second with 1, 2 and 4 writer
 * processes appending acknowledged single entries to the same session, and
 * the latency of the active view read afterwards (median of 5 reads of the
 * whole session, one process), for the JSONL, SQLite and PostgreSQL stores —
 * printed as ratios to the JSONL store in the same run. PostgreSQL runs when
 * `DATABASE_URL` is set (schema `ce_bench_writers_<pid>`, dropped afterwards).
 * `pnpm bench store`.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as PostgresTranscriptStore from "../packages/store-postgres/src/PostgresTranscriptStore.ts"
import { type Kind, openStore, runWriters } from "./store-writer.ts"

const APPENDS_PER_PROCESS = 200
const WRITERS = [1, 2, 4]
const VIEW_READS = 5

const median = (values: ReadonlyArray<number>): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

export default async function (): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), "store-writers-bench-"))
  const databaseUrl = process.env.DATABASE_URL
  const schema = `ce_bench_writers_${process.pid}`
  const kinds: Array<[Kind, string]> = [
    ["jsonl", join(root, "jsonl")],
    ["sqlite", join(root, "sqlite", "store.db")],
    ...(databaseUrl ? [["postgres", `${databaseUrl}#${schema}`] as [Kind, string]] : [])
  ]
  const results = new Map<string, { appendsPerSecond: number; viewMs: number }>()
  try {
    for (const [kind, location] of kinds) {
      // Create the schema/database once before the writers race to.
      await (await openStore(kind, location)).close()
      for (const writers of WRITERS) {
        const sessionId = `writers-${writers}`
        const elapsedMs = await runWriters(kind, location, sessionId, writers, APPENDS_PER_PROCESS)
        const store = await openStore(kind, location)
        const reads: Array<number> = []
        for (let read = 0; read < VIEW_READS; read++) {
          const start = performance.now()
          const active = await store.activeView(sessionId)
          reads.push(performance.now() - start)
          if (active.view.items.length !== writers * APPENDS_PER_PROCESS) throw new Error(`${kind}: entries lost`)
        }
        await store.close()
        results.set(`${kind}/${writers}`, {
          appendsPerSecond: (writers * APPENDS_PER_PROCESS) / (elapsedMs / 1000),
          viewMs: median(reads)
        })
      }
    }
  } finally {
    rmSync(root, { recursive: true, force: true })
    if (databaseUrl) await PostgresTranscriptStore.dropSchema(databaseUrl, schema)
  }
  const rows = kinds.flatMap(([kind]) =>
    WRITERS.map((writers) => {
      const result = results.get(`${kind}/${writers}`)!
      const jsonl = results.get(`jsonl/${writers}`)!
      return {
        store: kind,
        "writer processes": writers,
        "appends/s": Math.round(result.appendsPerSecond),
        "× jsonl appends/s": (result.appendsPerSecond / jsonl.appendsPerSecond).toFixed(2),
        "activeView ms": result.viewMs.toFixed(1),
        "× jsonl activeView": (result.viewMs / jsonl.viewMs).toFixed(2)
      }
    })
  )
  console.log(
    `${APPENDS_PER_PROCESS} acknowledged single-entry appends per writer process on one session; activeView: median of ${VIEW_READS} reads of the resulting session`
  )
  console.table(rows)
  if (!databaseUrl) console.log("postgres: not run (DATABASE_URL is not set; see README, 'Store tests')")
}
