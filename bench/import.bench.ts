/**
 * Transcript import on a 100 MB pi session (the real
 * `../shared/transcripts/pi/before-compaction.jsonl` repeated with renamed
 * tool-call ids) and on each real transcript: throughput and peak RSS of the
 * streaming importer next to two peers in the same run —
 *
 * - `naive`: `readFileSync` + `split("\n")` + `JSON.parse` per line, keeping
 *   the parsed records (what a quick script does; no conversion at all);
 * - `whole-text`: our importer fed the whole file as one string
 *   (`Import.importTextSync`), i.e. the same conversion without streaming.
 *
 * Each large run is a separate child process, so each peak RSS is its own.
 * `node bench/run.ts import`.
 */
import { spawnSync } from "node:child_process"
import { createWriteStream, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { Import } from "../packages/transcripts/src/index.ts"

const shared = join(fileURLToPath(new URL(".", import.meta.url)), "../../shared/transcripts")
const TARGET_BYTES = 100 * 1024 * 1024
const CHILD_FLAG = "--import-bench-child"

type Mode = "stream" | "naive" | "whole-text"

interface ChildResult {
  mode: Mode
  ms: number
  entries: number
  peakRssMb: number
  baselineRssMb: number
}

const runChild = async (mode: Mode, file: string): Promise<ChildResult> => {
  const baselineRssMb = process.memoryUsage().rss / 2 ** 20
  const start = performance.now()
  let entries = 0
  if (mode === "stream") entries = (await Import.importFilePromise(file)).transcript.entries.length
  else if (mode === "whole-text") entries = Import.importTextSync(readFileSync(file, "utf8")).transcript.entries.length
  else
    entries = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.length > 0)
      .map((line) => JSON.parse(line) as unknown).length
  const ms = performance.now() - start
  return { mode, ms, entries, peakRssMb: process.resourceUsage().maxRSS / 1024, baselineRssMb }
}

if (process.argv[2] === CHILD_FLAG) {
  const [mode, file] = [process.argv[3] as Mode, process.argv[4]!]
  process.stdout.write(JSON.stringify(await runChild(mode, file)))
  process.exit(0)
}

/** Writes a ≥ 100 MB pi session by repeating the real one with unique tool-call ids. */
const makeLargeSession = async (): Promise<string> => {
  const path = join(tmpdir(), "context-engine-import-bench-100mb.jsonl")
  const source = readFileSync(join(shared, "pi/before-compaction.jsonl"), "utf8")
  const [header, ...rest] = source.split("\n")
  const body = rest.join("\n")
  const out = createWriteStream(path)
  out.write(`${header}\n`)
  let written = Buffer.byteLength(header!) + 1
  for (let copy = 0; written < TARGET_BYTES; copy++) {
    const chunk = body.replaceAll('"toolu_', `"toolu_r${copy}_`)
    out.write(chunk.endsWith("\n") ? chunk : `${chunk}\n`)
    written += Buffer.byteLength(chunk)
  }
  await new Promise<void>((resolve) => out.end(resolve))
  return path
}

const child = (mode: Mode, file: string): ChildResult => {
  const result = spawnSync(process.execPath, [fileURLToPath(import.meta.url), CHILD_FLAG, mode, file], {
    encoding: "utf8",
    maxBuffer: 1 << 20
  })
  if (result.status !== 0) throw new Error(`bench child ${mode} failed: ${result.stderr}`)
  return JSON.parse(result.stdout) as ChildResult
}

export default async function (): Promise<void> {
  const large = await makeLargeSession()
  const mb = statSync(large).size / 2 ** 20
  console.log(`100 MB pi session: ${large} (${mb.toFixed(1)} MiB)`)
  const runs = (["stream", "whole-text", "naive"] as const).map((mode) => child(mode, large))
  const stream = runs[0]!
  console.table(
    runs.map((run) => ({
      mode: run.mode,
      entries: run.entries,
      "time (ms)": Math.round(run.ms),
      "MiB/s": (mb / (run.ms / 1000)).toFixed(1),
      "peak RSS (MiB)": Math.round(run.peakRssMb),
      "RSS over baseline (MiB)": Math.round(run.peakRssMb - run.baselineRssMb),
      "peak RSS / file size": ((run.peakRssMb - run.baselineRssMb) / mb).toFixed(2),
      "peak RSS vs stream": (run.peakRssMb / stream.peakRssMb).toFixed(2)
    }))
  )

  const rows = []
  for (const name of [
    "pi/before-compaction.jsonl",
    "pi/large-session.jsonl",
    "claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
    "claude-code-console/bookminder-day-020.md",
    "gemini-cli-console/bookminder-day-016.md",
    "aider/aider-dev-chat-history.md",
    "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj",
    "swe-agent/pydicom__pydicom-1458.traj"
  ]) {
    const file = join(shared, name)
    await Import.importFilePromise(file) // warm-up
    const times: Array<number> = []
    let entries = 0
    for (let i = 0; i < 5; i++) {
      const start = performance.now()
      entries = (await Import.importFilePromise(file)).transcript.entries.length
      times.push(performance.now() - start)
    }
    const median = times.sort((a, b) => a - b)[2]!
    const size = statSync(file).size / 2 ** 20
    rows.push({
      file: name.length > 48 ? `${name.slice(0, 47)}…` : name,
      MiB: size.toFixed(2),
      entries,
      "median ms (5 runs)": median.toFixed(1),
      "MiB/s": (size / (median / 1000)).toFixed(1)
    })
  }
  console.table(rows)
}
