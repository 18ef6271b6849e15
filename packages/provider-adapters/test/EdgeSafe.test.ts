/**
 * DESIGN.md: the main entries load anywhere the AI SDK runs, edge runtimes
 * included, so none of them may reach a Node built-in. Two proofs:
 *
 * 1. each main entry is bundled by esbuild for a neutral platform (no Node
 *    resolution, no Node globals) and its module graph is searched for
 *    `node:` imports and `createRequire` — except on the module object
 *    `process.getBuiltinModule("node:module")` returns, which exists only in
 *    Node (the synchronous rank-table load of `Tokenizers`; edge runtimes
 *    take its dynamic import);
 * 2. a compaction that writes a checkpoint is bundled and run in a fresh
 *    `node:vm` context that holds only web-standard globals (no `process`,
 *    `require`, `Buffer` or `module`), as an edge isolate does.
 */
import { runInNewContext } from "node:vm"
import { build, type Metafile } from "esbuild"
import { describe, expect, it } from "vitest"

const here = new URL(".", import.meta.url).pathname

const bundle = async (contents: string, format: "esm" | "iife", extra: { packages?: "external" } = {}) => {
  const result = await build({
    ...extra,
    stdin: { contents, resolveDir: here, loader: "ts", sourcefile: "edge-entry.ts" },
    bundle: true,
    write: false,
    metafile: true,
    platform: "neutral",
    format,
    target: "es2023",
    mainFields: ["module", "main"],
    conditions: ["worker", "import"],
    // `node:*` is left unresolved so the test can name who imports it (instead of
    // a resolve error). The AI SDK (`ai`, `@ai-sdk/*`) is the environment the
    // entries must load in ("wherever the AI SDK runs"), not part of the proof.
    external: ["node:*", "ai", "@ai-sdk/*"],
    logLevel: "silent"
  })
  return { code: result.outputFiles[0]!.text, metafile: result.metafile }
}

/** `importer → node:module` for every Node built-in the bundle reaches. */
const nodeImports = (metafile: Metafile): Array<string> =>
  Object.entries(metafile.inputs).flatMap(([input, { imports }]) =>
    imports.filter((imported) => imported.path.startsWith("node:")).map((imported) => `${input} → ${imported.path}`)
  )

const mainEntries = [
  "@context-engine/core",
  "@context-engine/strategies",
  "@context-engine/engines",
  "@context-engine/provider-adapters"
]

// Bundling a package with its dependencies takes seconds on a shared machine.
describe("edge-safe main entries", { timeout: 60_000 }, () => {
  it.each(mainEntries)("%s bundles for a neutral platform without any node: import or createRequire", async (entry) => {
    const { code, metafile } = await bundle(`export * from "${entry}"`, "esm")
    expect(nodeImports(metafile)).toEqual([])
    expect(code.replaceAll('getBuiltinModule("node:module").createRequire(', "")).not.toContain("createRequire")
    // The bundle really contains the package (not an empty re-export).
    expect(Object.keys(metafile.inputs).some((input) => input.includes("/src/index.ts"))).toBe(true)
  })

  it("the node subpath is where the Node built-ins went", async () => {
    // Dependencies stay external: only the project's own imports are listed.
    const { metafile } = await bundle(`export * from "../../core/src/node.ts"`, "esm", { packages: "external" })
    const imported = nodeImports(metafile).map((line) => line.split(" → ")[1])
    expect(imported).toEqual(expect.arrayContaining(["node:fs", "node:fs/promises", "node:path"]))
  })

  it("runs a compaction that writes a checkpoint in a context with only web-standard globals", async () => {
    const program = `
      import { PolicyRegistry } from "@context-engine/core"
      import { TieredSummaryEngine } from "@context-engine/engines"
      const policy = PolicyRegistry.resolveSync({
        model: "gpt-4o", contextWindowTokens: 6000, maxOutputTokens: 500, keepRecentTokens: 1500
      })
      const messages = [{ role: "system", content: "You are a coding agent." }]
      for (let turn = 0; turn < 12; turn++) {
        messages.push({ role: "user", content: "Step " + turn + ": inspect src/module_" + turn + ".ts" })
        messages.push({ role: "assistant", content: "module_" + turn + " exports handler" + turn + ". " + "x ".repeat(600) })
      }
      const entries = messages.map((message, index) => ({
        id: "m" + index,
        parentId: index === 0 ? null : "m" + (index - 1),
        timestamp: "2026-03-01T00:00:00.000Z",
        schemaVersion: 1,
        kind: "message",
        message
      }))
      globalThis.done = TieredSummaryEngine.makeAsync()
        .compact({ entries, policy, manual: true })
        .then((result) => ({
          stages: result.stages.map((stage) => stage.stage),
          fits: result.fits,
          checkpointKinds: result.entriesToAppend.map((entry) => entry.kind),
          beforeTokens: result.before.totalTokens,
          afterTokens: result.after.totalTokens
        }))
    `
    const { code, metafile } = await bundle(program, "iife")
    expect(nodeImports(metafile)).toEqual([])
    const edge: Record<string, unknown> = {
      console,
      URL,
      TextEncoder,
      TextDecoder,
      crypto: globalThis.crypto,
      setTimeout,
      clearTimeout,
      queueMicrotask,
      structuredClone,
      AbortController,
      AbortSignal,
      performance
    }
    runInNewContext(code, edge)
    const result = (await edge.done) as {
      stages: Array<string>
      fits: boolean
      checkpointKinds: Array<string>
      beforeTokens: number
      afterTokens: number
    }
    expect(result.checkpointKinds).toContain("checkpoint")
    expect(result.fits).toBe(true)
    expect(result.afterTokens).toBeLessThan(result.beforeTokens)
  })
})
