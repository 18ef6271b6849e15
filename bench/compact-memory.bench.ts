/**
 * Peak memory of `context-engine compact` (issue #13 req 6: ≤ 3× the file
 * size) on a ~100 MB pi session built in the temp directory by
 * concatenating the two real pi sessions
 * (`../shared/transcripts/pi/before-compaction.jsonl` and
 * `large-session.jsonl`) alternately, tool-call ids renamed per copy so none
 * repeats. The CLI runs in a child process (`compact FILE --model gpt-4o
 * --out …`; a file this size is compacted rolling, `RollingCompact.ts`), twice: built
 * (`packages/cli/dist/bin.js`, what `npx context-engine` runs; needs `pnpm build`) and from the
 * TypeScript sources (`node packages/cli/src/bin.ts`, type stripping); then the built CLI with the
 * whole transcript in memory (`--window-mib 0`), for the peak and CPU time the rolling path is
 * compared with. Its peak RSS and CPU time are read
 * from `/usr/bin/time -v` when present, else from the child's own
 * `process.resourceUsage()` at exit. Also printed: `--help`, which loads the
 * CLI's modules and does nothing else (the fixed cost), and the load average.
 * `node bench/run.ts compact-memory`.
 * Prints; never asserts.
 */
import { spawnSync } from "node:child_process"
import { createWriteStream, existsSync, readFileSync, statSync } from "node:fs"
import { loadavg, tmpdir } from "node:os"
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

interface Run {
  readonly peakMiB: number
  readonly cpuSeconds: number
  readonly ms: number
  readonly status: number | null
}

/** Peak RSS (MiB), CPU time (user + system) and wall time of `node args…`. */
const peakOf = (args: ReadonlyArray<string>): Run => {
  const start = performance.now()
  if (existsSync("/usr/bin/time")) {
    const run = spawnSync("/usr/bin/time", ["-v", process.execPath, ...args], { encoding: "utf8", maxBuffer: 1 << 26 })
    const field = (name: string) => Number(new RegExp(`${name}: ([\\d.]+)`).exec(run.stderr)?.[1])
    if (run.status !== 0) console.log(`child failed (${run.status}): ${run.stderr.slice(-2000)}`)
    return {
      peakMiB: field("Maximum resident set size \\(kbytes\\)") / 1024,
      cpuSeconds: field("User time \\(seconds\\)") + field("System time \\(seconds\\)"),
      ms: performance.now() - start,
      status: run.status
    }
  }
  const probe = `process.on("exit",()=>{const u=process.resourceUsage();process.stderr.write("\\nMAXRSS "+u.maxRSS+" CPU "+(u.userCPUTime+u.systemCPUTime)+"\\n")})`
  const run = spawnSync(process.execPath, ["--import", `data:text/javascript,${encodeURIComponent(probe)}`, ...args], {
    encoding: "utf8",
    maxBuffer: 1 << 26
  })
  const found = /MAXRSS (\d+) CPU (\d+)/.exec(run.stderr)
  return {
    peakMiB: Number(found?.[1]) / 1024,
    cpuSeconds: Number(found?.[2]) / 1e6,
    ms: performance.now() - start,
    status: run.status
  }
}

/**
 * The two ways to run the CLI: the published one (`dist/bin.js`, built by `pnpm build`; the workspace
 * packages resolved to their `dist/` by `dist-hooks.mjs`, as `publishConfig.exports` does) — what a user
 * runs — and the TypeScript sources through Node's type stripping (`pnpm start`, the repo's own scripts).
 */
const clis = (): ReadonlyArray<{
  readonly name: string
  readonly args: ReadonlyArray<string>
  readonly extra?: ReadonlyArray<string>
}> => {
  const built = join(root, "packages/cli/dist/bin.js")
  const sources = { name: "TS sources (packages/cli/src/bin.ts)", args: [bin] }
  if (!existsSync(built)) {
    console.log("packages/cli/dist/bin.js is missing: run `pnpm build` to measure the published CLI too")
    return [sources]
  }
  const hooks = join(root, "bench/dist-hooks.mjs")
  return [
    { name: "built (dist/bin.js, as published)", args: ["--import", hooks, built] },
    sources,
    // the whole transcript in memory (`--window-mib 0`): the peak and CPU the rolling default is compared with
    { name: "built, in memory (--window-mib 0)", args: ["--import", hooks, built], extra: ["--window-mib", "0"] }
  ]
}

export default async function (): Promise<void> {
  const file = await makeLargePiSession()
  const fileMiB = statSync(file).size / 2 ** 20
  console.log(
    `session: ${file} (${fileMiB.toFixed(1)} MiB); load average ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}`
  )
  const out = join(tmpdir(), "context-engine-compact-memory-out.json")
  const rows = clis().flatMap(({ name, args, extra = [] }) => {
    const load = peakOf([...args, "--help"])
    const compact = peakOf([...args, "compact", file, "--model", "gpt-4o", "--out", out, ...extra])
    return [
      {
        cli: name,
        run: "--help (loads every command's modules)",
        "peak RSS (MiB)": Math.round(load.peakMiB),
        "× file size": "",
        "CPU (s)": load.cpuSeconds.toFixed(1)
      },
      {
        cli: name,
        run: `compact (exit ${compact.status}, wall ${(compact.ms / 1000).toFixed(1)} s)`,
        "peak RSS (MiB)": Math.round(compact.peakMiB),
        "× file size": (compact.peakMiB / fileMiB).toFixed(2),
        "CPU (s)": compact.cpuSeconds.toFixed(1)
      }
    ]
  })
  console.table(rows)
  console.log(`target (issue #13 req 6): peak RSS ≤ 3× the file size = ${Math.round(3 * fileMiB)} MiB`)
  console.log(
    `load average after: ${loadavg()
      .map((n) => n.toFixed(1))
      .join(" ")}`
  )
}
