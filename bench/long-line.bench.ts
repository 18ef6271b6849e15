/**
 * #12 req 1: a single-line JSONL transcript reads in time proportional to
 * its size. Reads one 4 MiB line and one 40 MiB line through the JSONL store
 * (`JsonlTranscriptStore.load`) and the importers' line splitter
 * (`LineSource.fromFile`), cold, and prints the 40 MiB / 4 MiB time ratio of
 * each: about 10 is linear (the store used to re-copy the unfinished line
 * per 64 KiB chunk: quadratic, 27 s for 40 MiB). `node bench/run.ts long-line`.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import * as JsonlTranscriptStore from "../packages/core/src/JsonlTranscriptStore.ts"
import * as LineSource from "../packages/transcripts/src/importers/LineSource.ts"

const line = (textBytes: number): string =>
  JSON.stringify({
    id: "e1",
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    schemaVersion: 1,
    kind: "message",
    message: { role: "user", content: [{ type: "text", text: "a".repeat(textBytes) }] }
  })

const time = async (run: () => Promise<unknown>): Promise<number> => {
  const start = performance.now()
  await run()
  return performance.now() - start
}

export default async (): Promise<void> => {
  const directory = mkdtempSync(join(tmpdir(), "long-line-bench-"))
  try {
    const rows: Array<[string, number, number]> = []
    const results: Record<string, Record<number, number>> = { store: {}, splitter: {} }
    for (const mib of [4, 40]) {
      writeFileSync(join(directory, `s${mib}.jsonl`), `${line(mib * 1024 * 1024)}\n`)
      const store = JsonlTranscriptStore.open({ directory })
      results.store![mib] = await time(() => store.load(`s${mib}`, { strict: true }))
      results.splitter![mib] = await time(() =>
        LineSource.fromFile(
          join(directory, `s${mib}.jsonl`),
          { line: () => undefined, end: () => undefined },
          {
            totalBytes: 0
          }
        )
      )
    }
    for (const [name, byMib] of Object.entries(results)) rows.push([name, byMib[4]!, byMib[40]!])
    console.log("reader     4 MiB ms   40 MiB ms   ratio (linear ≈ 10)")
    for (const [name, small, large] of rows)
      console.log(
        `${name.padEnd(10)} ${small.toFixed(0).padStart(8)}   ${large.toFixed(0).padStart(9)}   ${(large / small).toFixed(1)}`
      )
  } finally {
    rmSync(directory, { recursive: true, force: true })
  }
}
