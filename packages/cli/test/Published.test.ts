import { spawnSync } from "node:child_process"
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { beforeAll, describe, expect, it } from "vitest"

/**
 * Works as published: packs every package with plain `pnpm pack` from a
 * checkout without `dist/` (its `prepack` script builds; `pnpm pack` applies
 * `publishConfig` and turns `workspace:*` into versions),
 * installs the tarballs into an empty folder with npm, then runs the CLI with
 * `npx` and a small AI SDK app with plain `node` and with `tsc`. Needs the npm
 * registry for the third-party dependencies (effect, ai, …).
 */
const packages = readdirSync(join(repoRoot, "packages")).filter((name) =>
  existsSync(join(repoRoot, "packages", name, "package.json"))
)
const rootPackage = JSON.parse(readFileSync(join(repoRoot, "package.json"), "utf8")) as {
  devDependencies: Record<string, string>
}

const sh = (command: string, args: ReadonlyArray<string>, cwd: string, timeoutMs = 300_000) => {
  const result = spawnSync(command, args, {
    cwd,
    encoding: "utf8",
    timeout: timeoutMs,
    env: { ...process.env, CI: "true" }
  })
  if (result.status !== 0)
    throw new Error(
      `${command} ${args.join(" ")} (in ${cwd}) exited ${result.status}:\n${result.stdout}\n${result.stderr}`
    )
  return result.stdout
}

const APP = `import { TieredSummaryEngine } from "@context-engine/engines"
import { contextEngineMiddleware } from "@context-engine/provider-adapters"
import { generateText, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"

const prompts: Array<number> = []
const model = wrapLanguageModel({
  model: new MockLanguageModelV4({
    modelId: "claude-sonnet-4-5",
    doGenerate: async (options) => {
      prompts.push(options.prompt.length)
      return {
        content: [{ type: "text", text: "done" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
          outputTokens: { total: 1, text: 1, reasoning: 0 }
        },
        warnings: []
      }
    }
  }),
  middleware: contextEngineMiddleware({ engine: TieredSummaryEngine.makeAsync() })
})
const result = await generateText({ model, prompt: "Say done." })
console.log(JSON.stringify({ text: result.text, prompts }))
`

describe("the packed packages, installed with npm into an empty folder", { timeout: 900_000 }, () => {
  const work = mkdtempSync(join(tmpdir(), "published-"))
  const tarballs = join(work, "tarballs")
  const app = join(work, "app")

  beforeAll(() => {
    mkdirSync(tarballs)
    mkdirSync(app)
    for (const name of packages) {
      const dir = join(repoRoot, "packages", name)
      // as a fresh checkout has it: a new user packs without building first
      rmSync(join(dir, "dist"), { recursive: true, force: true })
      sh("pnpm", ["pack", "--pack-destination", tarballs], dir)
    }
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }))
    const files = readdirSync(tarballs).map((file) => join(tarballs, file))
    sh(
      "npm",
      [
        "install",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
        ...files,
        `ai@${rootPackage.devDependencies.ai}`,
        `typescript@${rootPackage.devDependencies.typescript}`,
        `@types/node@${rootPackage.devDependencies["@types/node"]}`
      ],
      app,
      600_000
    )
  }, 900_000)

  it("packs one tarball per package, each with built JavaScript and the cli bin pointing at it", () => {
    expect(readdirSync(tarballs)).toHaveLength(packages.length)
    const cli = JSON.parse(readFileSync(join(app, "node_modules/@context-engine/cli/package.json"), "utf8")) as {
      bin: Record<string, string>
    }
    expect(cli.bin["context-engine"]).toBe("./dist/bin.js")
    expect(existsSync(join(app, "node_modules/@context-engine/cli/dist/bin.js"))).toBe(true)
  })

  it("npx context-engine compact compacts a shared transcript", () => {
    const out = join(app, "compacted.json")
    const stdout = sh(
      "npx",
      // gpt-4o (128K): in its own 200K window the session is resolved by the cheap tiers, without a checkpoint
      [
        "--no-install",
        "context-engine",
        "compact",
        transcript("pi/before-compaction.jsonl"),
        "--model",
        "gpt-4o",
        "--out",
        out
      ],
      app
    )
    expect(stdout).toContain("Checkpoint")
    const written = JSON.parse(readFileSync(out, "utf8")) as { messages: Array<unknown>; checkpoint: unknown }
    expect(written.messages.length).toBeGreaterThan(0)
    expect(written.checkpoint).not.toBeNull()
  })

  it("a small AI SDK app runs with plain node and type-checks with tsc", () => {
    writeFileSync(join(app, "app.ts"), APP)
    writeFileSync(
      join(app, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2023",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          strict: true,
          outDir: "dist",
          skipLibCheck: true,
          types: ["node"]
        },
        include: ["app.ts"]
      })
    )
    sh(join(app, "node_modules/.bin/tsc"), ["-p", "tsconfig.json"], app)
    const output = JSON.parse(sh("node", ["dist/app.js"], app).trim()) as { text: string; prompts: Array<number> }
    expect(output.text).toBe("done")
    expect(output.prompts).toEqual([1])
  })
})
