/**
 * The request path through the middleware, measured (issue #10 req 9): how
 * many project source files run, and how many package crossings they make,
 * for one `generateText` request that writes a checkpoint.
 *
 * Run: `pnpm bench:request-path` (prints the figures; `-- --list` adds the
 * files and the crossings). Two requests are measured: cold (the first of a
 * process) and warm (a later request of an open session).
 *
 * Method: V8 precise coverage through `node:inspector` (the same counters
 * `NODE_V8_COVERAGE` writes). Everything is imported and the middleware
 * built first; the counters are then reset (`Profiler.takePreciseCoverage`
 * resets them) and the request runs. A file "runs" when one of its functions
 * was called during the request; a file is "loaded" when importing the two
 * entries evaluated it (what ran before the first reset), so the figures
 * separate code the request needed from code an import pulled in (package
 * `index.ts` files re-export every module). A package crossing is an import edge
 * between two files that ran, from one `packages/<name>` to another
 * (`@context-engine/x` namespace imports resolved through the package's
 * `index.ts` to the module file).
 */
import { readFileSync } from "node:fs"
import { Session } from "node:inspector/promises"
import { dirname, join, relative, resolve } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import type { ModelMessage } from "ai"
import { MockLanguageModelV4 } from "ai/test"

const root = resolve(dirname(fileURLToPath(import.meta.url)), "..")
const session = new Session()
session.connect()
await session.post("Profiler.enable")
await session.post("Profiler.startPreciseCoverage", { callCount: true, detailed: false })

const { TieredSummaryEngine } = await import("../packages/engines/src/index.ts")
const { contextEngineMiddleware } = await import("../packages/provider-adapters/src/index.ts")
const { generateText, wrapLanguageModel } = await import("ai")

const model = new MockLanguageModelV4({
  provider: "anthropic.messages",
  modelId: "claude-test",
  doGenerate: async () => ({
    content: [{ type: "text", text: "done" }],
    finishReason: { unified: "stop", raw: undefined },
    usage: {
      inputTokens: { total: 5_000, noCache: 5_000, cacheRead: 0, cacheWrite: 0 },
      outputTokens: { total: 1, text: 1, reasoning: 0 }
    },
    warnings: []
  })
})
const makeMiddleware = () =>
  contextEngineMiddleware({
    engine: TieredSummaryEngine.make(),
    policy: {
      model: "claude-test",
      contextWindowTokens: 8_000,
      maxOutputTokens: 1_000,
      reserveTokens: 1_000,
      keepRecentTokens: 2_000,
      toolLoopReserveTokens: 0,
      safetyMarginTokens: 200,
      tokenizer: "o200k_base"
    }
  })
// Plain conversation (no tool output for the cheap stages to trim), so the request needs a checkpoint.
const conversation = (turns: number): Array<ModelMessage> => [
  ...Array.from({ length: turns }, (_, turn) => [
    {
      role: "user" as const,
      content: `Task ${turn}: explain src/module${turn}.ts. ${"Some context for the task. ".repeat(40)}`
    },
    {
      role: "assistant" as const,
      content: `module${turn} exports value${turn}. ${"It does this and that. ".repeat(60)}`
    }
  ]).flat(),
  { role: "user", content: "Which modules export a value?" }
]

/** Runs `request` with the coverage counters reset first; the files whose functions ran, and the checkpoints written. */
const measured = async (middleware: ReturnType<typeof makeMiddleware>, messages: Array<ModelMessage>) => {
  const wrapped = wrapLanguageModel({ model, middleware })
  // Resets the counters: what ran before is not counted. What it reports ran since the last reset: the first
  // time, everything loaded (the entries' imports and their module code).
  const { result: before } = await session.post("Profiler.takePreciseCoverage")
  await generateText({ model: wrapped, system: "You are a coding agent.", messages })
  const { result } = await session.post("Profiler.takePreciseCoverage")
  const transcript = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
  return { before, result, checkpoints: transcript.entries().filter((entry) => entry.kind === "checkpoint").length }
}

// Cold: the first request of a process and of its session writes a checkpoint (policy resolution, session
// creation and first-use caches included). Warm: a later request of a session that is open already (one
// small request before it, which writes nothing) writes the checkpoint — the steady state of a long run.
const cold = await measured(makeMiddleware(), conversation(12))
const warmMiddleware = makeMiddleware()
await generateText({
  model: wrapLanguageModel({ model, middleware: warmMiddleware }),
  system: "You are a coding agent.",
  messages: conversation(1)
})
const warm = await measured(warmMiddleware, conversation(12))
await session.post("Profiler.stopPreciseCoverage")

const packagesDir = join(root, "packages")
const isProjectSource = (script: { readonly url: string }) =>
  script.url.startsWith(pathToFileURL(packagesDir).href) && script.url.includes("/src/")
/** Project files the entries' imports loaded: everything that ran before the cold request. */
const loaded = new Set(cold.before.filter(isProjectSource).map((script) => fileURLToPath(script.url)))
const report = (label: string, { result, checkpoints }: Awaited<ReturnType<typeof measured>>, list: boolean) => {
  const ran = new Set(
    result
      .filter(isProjectSource)
      .filter((script) => script.functions.some((fn) => fn.ranges.some((range) => range.count > 0)))
      .map((script) => fileURLToPath(script.url))
  )
  const packageOf = (file: string): string => relative(packagesDir, file).split("/")[0]!

  /** `export * as Name from "./File.ts"` of a package's index: namespace name → module file. */
  const indexOf = (pkg: string): Map<string, string> => {
    const index = join(packagesDir, pkg, "src", "index.ts")
    const map = new Map<string, string>()
    for (const match of readFileSync(index, "utf8").matchAll(/export \* as (\w+) from "(\.[^"]+)"/g))
      map.set(match[1]!, resolve(dirname(index), match[2]!))
    return map
  }

  const crossings: Array<string> = []
  for (const file of ran) {
    // Code only: JSDoc examples also import from `@context-engine/…`.
    const source = readFileSync(file, "utf8").replace(/\/\*[\s\S]*?\*\//g, "")
    for (const match of source.matchAll(/import\s+(type\s+)?\{([^}]*)\}\s+from\s+"@context-engine\/([\w-]+)"/g)) {
      if (match[1]) continue
      const names = match[2]!
        .split(",")
        .map((name) => name.trim())
        .filter((name) => name.length > 0 && !name.startsWith("type "))
        .map((name) => name.split(/\s+as\s+/)[0]!)
      if (match[3] === packageOf(file)) continue
      const index = indexOf(match[3]!)
      for (const name of names) {
        const target = index.get(name)
        if (target && ran.has(target)) crossings.push(`${relative(root, file)} → ${relative(root, target)}`)
      }
    }
  }

  const byPackage = new Map<string, number>()
  for (const file of ran) byPackage.set(packageOf(file), (byPackage.get(packageOf(file)) ?? 0) + 1)
  console.log(`${label} — request wrote a checkpoint: ${checkpoints > 0 ? "yes" : "NO"}`)
  console.log(`project files run: ${ran.size} (${[...byPackage].map(([pkg, n]) => `${pkg} ${n}`).join(", ")})`)
  console.log(`project files loaded by importing the entries: ${loaded.size} (the request ran ${ran.size})`)
  console.log(`package crossings (import edges between files that ran): ${crossings.length}`)
  console.log(
    `package pairs crossed: ${
      new Set(
        crossings.map((edge) =>
          edge
            .split(" → ")
            .map((side) => side.split("/")[1])
            .join(" → ")
        )
      ).size
    }`
  )
  if (list) {
    for (const file of [...ran].sort()) console.log(`  ${relative(root, file)}`)
    for (const file of [...loaded].filter((file) => !ran.has(file)).sort())
      console.log(`  loaded, not run: ${relative(root, file)}`)
    for (const edge of crossings.sort()) console.log(`  ${edge}`)
  }
}
const list = process.argv.includes("--list")
report("cold (first request of the process)", cold, list)
report("warm (a later request of an open session)", warm, list)
if (!list) console.log("(--list prints the files and the crossings)")
