import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ModelsDevCatalog, PolicyRegistry } from "@context-engine/core"
import { PolicyFile } from "@context-engine/core/node"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"

describe("2026 catalog and AI Gateway ids", () => {
  it.each([
    // [id as a caller writes it, window, max output] from the provider pages cited in ModelCatalog2026.ts
    ["claude-sonnet-4-6", 1_000_000, 128_000],
    ["anthropic/claude-sonnet-4.6", 1_000_000, 128_000],
    ["anthropic/claude-opus-4.8", 1_000_000, 128_000],
    ["claude-opus-5-5", 1_000_000, 128_000],
    ["anthropic/claude-sonnet-4.5", 200_000, 64_000],
    ["claude-haiku-4-5-20251001", 200_000, 64_000],
    ["gpt-5.5", 1_000_000, 128_000],
    ["openai/gpt-5.5", 1_000_000, 128_000],
    ["google/gemini-3-flash", 1_048_576, 65_536],
    ["gemini-3-flash-preview", 1_048_576, 65_536],
    ["xai/grok-4.3", 1_000_000, 131_072],
    ["xai/grok-4", 256_000, 8_192],
    ["meta/llama-4-maverick", 1_000_000, 8_192],
    ["mistral/mistral-large-3", 256_000, 8_192]
  ])("%s resolves to a %i-token window and %i output tokens", (id, window, output) => {
    const policy = PolicyRegistry.lookupSync(id)
    expect(policy.contextWindowTokens).toBe(window)
    expect(policy.maxOutputTokens).toBe(output)
  })

  it("Claude 4.6 and later are reasoning models with the Anthropic estimate", () => {
    const policy = PolicyRegistry.lookupSync("anthropic/claude-opus-4.6")
    expect(policy.reasoning).toBe(true)
    expect(policy.tokenizer).toBe("estimate:anthropic")
  })
})

const modelsDev = {
  acme: {
    id: "acme",
    models: {
      "acme-large": { id: "acme-large", reasoning: true, limit: { context: 300_000, output: 20_000 } },
      "acme-embed": { id: "acme-embed", limit: { context: 8_192, output: 0 } }
    }
  },
  openai: {
    id: "openai",
    models: { "gpt-9": { id: "gpt-9", reasoning: true, limit: { context: 2_000_000, output: 100_000 } } }
  },
  anthropic: {
    id: "anthropic",
    models: { "claude-sonnet-4-5": { id: "claude-sonnet-4-5", limit: { context: 1_000_000, output: 64_000 } } }
  }
}

const tempFile = (name: string, content: unknown): string => {
  const path = join(mkdtempSync(join(tmpdir(), "catalog-")), name)
  writeFileSync(path, JSON.stringify(content))
  return path
}

describe("models.dev catalog files", () => {
  it("adds unknown models with their provider's tokenizer, refreshes known ones, lists skipped models", async () => {
    const overrides = Effect.runSync(ModelsDevCatalog.toOverrides(modelsDev, "test"))
    expect(overrides.skipped.map((skip) => skip.id)).toEqual(["acme/acme-embed"])
    const registry = await PolicyFile.loadPolicyFilePromise(undefined, { catalog: tempFile("api.json", modelsDev) })
    const acme = PolicyRegistry.lookupSync("acme/acme-large", registry)
    expect([acme.contextWindowTokens, acme.maxOutputTokens, acme.reasoning, acme.tokenizer]).toEqual([
      300_000,
      20_000,
      true,
      "estimate:generic"
    ])
    expect(PolicyRegistry.lookupSync("gpt-9", registry).tokenizer).toBe("o200k_base")
    const sonnet = PolicyRegistry.lookupSync("claude-sonnet-4-5", registry)
    expect(sonnet.contextWindowTokens).toBe(1_000_000)
    expect(sonnet.tokenizer).toBe("estimate:anthropic")
  })

  it("a policy file's `catalog` is merged below the file's own models", async () => {
    const catalog = tempFile("models.json", modelsDev)
    const policy = join(catalog, "..", "policy.json")
    writeFileSync(
      policy,
      JSON.stringify({ catalog: "models.json", models: { "acme-large": { contextWindowTokens: 100_000 } } })
    )
    const registry = await PolicyFile.loadPolicyFilePromise(policy)
    expect(PolicyRegistry.lookupSync("acme-large", registry).contextWindowTokens).toBe(100_000)
    expect(PolicyRegistry.lookupSync("gpt-9", registry).contextWindowTokens).toBe(2_000_000)
  })

  it("rejects a file that is not a models.dev catalog with InvalidInput", async () => {
    const error = await PolicyFile.loadPolicyFilePromise(undefined, {
      catalog: tempFile("bad.json", { hello: 1 })
    }).catch((failure: unknown) => failure)
    expect((error as { _tag: string })._tag).toBe("InvalidInput")
    expect(String((error as Error).message)).toContain("models.dev")
  })
})
