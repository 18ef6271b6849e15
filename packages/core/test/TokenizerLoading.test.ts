import { spawnSync } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { createRequire } from "node:module"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"
import { afterAll, describe, expect, it } from "vitest"

/**
 * Rank tables load on demand (issue #13 req 6: `compact` with gpt-4o never
 * loads `cl100k_base`, ≈ 20 MiB of RSS), and a bundle without
 * `gpt-tokenizer` on disk counts after `Tokenizers.load`.
 */
const support = join(dirname(fileURLToPath(import.meta.url)), "support")
const work = mkdtempSync(join(tmpdir(), "tokenizer-loading-"))
afterAll(() => rmSync(work, { recursive: true, force: true }))

// without NODE_PATH (pnpm sets it to its store): the bundle's folder has no node_modules to resolve from
const { NODE_PATH: _nodePath, ...env } = process.env

const runNode = (script: string): Array<Record<string, unknown>> => {
  const run = spawnSync(process.execPath, [script], { encoding: "utf8", timeout: 120_000, env })
  expect(run.stderr).toBe("")
  expect(run.status).toBe(0)
  return run.stdout
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line) as Record<string, unknown>)
}

describe("rank tables", { timeout: 180_000 }, () => {
  it("importing core loads none; the first count of an encoding loads only its table", () => {
    const steps = runNode(join(support, "tokenizerLoadingChild.ts"))
    expect(steps).toEqual([
      { step: "imported", tables: [] },
      { step: "o200k_base", tables: ["o200k_base"], count: 2 },
      { step: "cl100k_base", tables: ["o200k_base", "cl100k_base"], count: 2 }
    ])
  })

  it("an edge-style bundle (browser platform, no node_modules) counts after Tokenizers.load and fails clearly before", async () => {
    const fromVitest = createRequire(createRequire(import.meta.url).resolve("vitest/package.json"))
    const fromVite = createRequire(fromVitest.resolve("vite/package.json"))
    const rolldown = (await import(pathToFileURL(fromVite.resolve("rolldown")).href)) as {
      build: (options: unknown) => Promise<unknown>
    }
    const file = join(work, "bundle.mjs")
    await rolldown.build({
      input: join(support, "tokenizerBundleChild.ts"),
      platform: "browser",
      logLevel: "silent",
      output: { file, format: "esm", codeSplitting: false }
    })
    const [result] = runNode(file)
    expect(result).toMatchObject({
      before: { tag: "TokenizerNotLoaded", message: expect.stringContaining('await Tokenizers.load("o200k_base")') },
      after: 2
    })
  })
})
