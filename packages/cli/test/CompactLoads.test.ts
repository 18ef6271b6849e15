/**
 * What `context-engine compact` loads (issue #13 req 6, the fixed part of its
 * memory): with the offline summarizer it loads neither the AI SDK
 * (provider-adapters, `ai`) nor tiktoken's WASM — observed through a
 * module-resolution hook in the CLI's process.
 */
import { spawnSync } from "node:child_process"
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"

const hooks = join(dirname(fileURLToPath(import.meta.url)), "support/loadedPackages.mjs")
const bin = join(repoRoot, "packages/cli/src/bin.ts")

const loadedBy = (args: ReadonlyArray<string>) => {
  const run = spawnSync(process.execPath, ["--import", hooks, bin, ...args], { encoding: "utf8", timeout: 240_000 })
  expect(run.status, run.stderr).toBe(0)
  const line = /LOADED (.+)/.exec(run.stderr)?.[1]
  expect(line).toBeDefined()
  return JSON.parse(line!) as { packages: ReadonlyArray<string> }
}

describe("what compact loads", { timeout: 300_000 }, () => {
  it("compact --model gpt-4o (offline summarizer): no AI SDK, no tiktoken", () => {
    const out = join(mkdtempSync(join(tmpdir(), "compact-loads-")), "out.json")
    const loaded = loadedBy(["compact", transcript("pi/before-compaction.jsonl"), "--model", "gpt-4o", "--out", out])
    expect(loaded.packages).toContain("@context-engine/engines")
    expect(loaded.packages).toContain("gpt-tokenizer")
    expect(loaded.packages).not.toContain("@context-engine/provider-adapters")
    expect(loaded.packages).not.toContain("ai")
    expect(loaded.packages.filter((name) => name.startsWith("@ai-sdk/"))).toEqual([])
    expect(loaded.packages).not.toContain("tiktoken")
  })

  it("a model summarizer does load the AI SDK (the hook sees it)", () => {
    // the summarizer's model is resolved before the import: without its API key it fails (exit 2) after loading
    // the adapters
    const { ANTHROPIC_API_KEY: _key, ...env } = process.env
    const run = spawnSync(
      process.execPath,
      [
        "--import",
        hooks,
        bin,
        "compact",
        transcript("pi/before-compaction.jsonl"),
        "--summarizer",
        "anthropic:claude-sonnet-4-5"
      ],
      { encoding: "utf8", timeout: 240_000, env }
    )
    expect(run.status, run.stderr).toBe(2)
    const loaded = JSON.parse(/LOADED (.+)/.exec(run.stderr)?.[1] ?? "{}") as { packages?: ReadonlyArray<string> }
    expect(loaded.packages).toContain("@context-engine/provider-adapters")
  })
})
