/**
 * Peak memory of `context-engine compact` (issue #13 req 6: ≤ 3× the file
 * size) on a ~100 MB pi session built in the temp directory by
 * concatenating the two real pi sessions
 * (`../shared/transcripts/pi/before-compaction.jsonl` and
 * `large-session.jsonl`) alternately, tool-call ids renamed per copy so none
 * repeats. The CLI runs in a child process (`node packages/cli/src/bin.ts
 * compact FILE --model gpt-4o --out …`); its peak RSS is read from
 * `/usr/bin/time -v` when present, else from the child's own
 * `process.resourceUsage().maxRSS` at exit. Also printed: `--help`, which loads the
 * CLI's modules and does nothing else (the fixed cost). `node bench/run.ts compact-memory`.
 * Prints; never asserts.
 */
import { spawnSync } from "node:child_process"
import { createWriteStream, existsSync, readFileSync, statSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { fileURLToPath } from "node:url"

const root = join(fileURLToPath(new URL(".", import.meta.url)), "..")
const shared = join(root, "../shared/transcripts")
const TARGET_BYTES = 100 * 1024 * 1024
const bin = join(root, "packages/cli/src/bin.ts")

/** Writes (once) a ≥ 100 MB pi session alternating the two real pi sessions, ids renamed per copy. */
export const makeLargePiSession = async (): Promise<string> => {
  const path = join(tmpdir(), "context-engine-compact-memory-100mb.jsonl")
  if (existsSync(path) && statSync(path).size >= TARGET_BYTES) return path
  const bodies = ["pi/before-compaction.jsonl", "pi/large-session.jsonl"].map((name) => {
    const [header, ...rest] = readFileSync(join(shared, name), "utf8").split("\n")
    return { header: header!, body: rest.join("\n") }
  })
  const out = createWriteStream(path)
  out.write(`${bodies[0]!.header}\n`)
  let written = Buffer.byteLength(bodies[0]!.header) + 1
  for (let copy = 0; written < TARGET_BYTES; copy++) {
    const body = bodies[copy % bodies.length]!.body
    const chunk = body.replaceAll('"toolu_', `"toolu_r${copy}_`).replaceAll('"call_', `"call_r${copy}_`)
    const text = chunk.endsWith("\n") ? chunk : `${chunk}\n`
    out.write(text)
    written += Buffer.byteLength(text)
  }
  await new Promise<void>((resolve) => out.end(resolve))
  return path
}

/** Peak RSS (MiB) and wall time of `node args…`. */
const peakOf = (args: ReadonlyArray<string>): { peakMiB: number; ms: number; status: number | null } => {
  const start = performance.now()
  if (existsSync("/usr/bin/time")) {
    const run = spawnSync("/usr/bin/time", ["-v", process.execPath, ...args], { encoding: "utf8", maxBuffer: 1 << 26 })
    const kb = /Maximum resident set size \(kbytes\): (\d+)/.exec(run.stderr)?.[1]
    if (run.status !== 0) console.log(`child failed (${run.status}): ${run.stderr.slice(-2000)}`)
    return { peakMiB: Number(kb) / 1024, ms: performance.now() - start, status: run.status }
  }
  const probe = `process.on("exit",()=>process.stderr.write("\\nMAXRSS "+process.resourceUsage().maxRSS+"\\n"))`
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(probe)}`, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 26
  })
  const kb = /MAXRSS (\d+)/.exec(run.stderr)?.[1]
  return { peakMiB: Number(kb) / 1024, ms: performance.now() - start, status: run.status }
}

export default async function (): Promise<void> {
  const file = await makeLargePiSession()
  const fileMiB = statSync(file).size / 2 ** 20
  console.log(`session: ${file} (${fileMiB.toFixed(1)} MiB)`)
  const load = peakOf([bin, "--help"])
  const out = join(tmpdir(), "context-engine-compact-memory-out.json")
  const compact = peakOf([bin, "compact", file, "--model", "gpt-4o", "--out", out])
  console.table([
    {
      run: "context-engine --help (loads every command's modules)",
      "peak RSS (MiB)": Math.round(load.peakMiB),
      "× file size": ""
    },
    {
      run: `compact (exit ${compact.status}, ${(compact.ms / 1000).toFixed(1)} s)`,
      "peak RSS (MiB)": Math.round(compact.peakMiB),
      "× file size": (compact.peakMiB / fileMiB).toFixed(2)
    }
  ])
  console.log(`target (issue #13 req 6): peak RSS ≤ 3× the file size = ${Math.round(3 * fileMiB)} MiB`)
}
