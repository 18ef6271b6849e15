/**
 * Rank tables load per encoding, on first use (issue #13 req 6): importing
 * the packages loads none, a compaction under a gpt-4o policy (o200k_base)
 * loads o200k_base only — never cl100k_base's table. Where the table cannot
 * be loaded synchronously (no `process.getBuiltinModule`, as on an edge
 * runtime) counting an encoding not loaded fails with `EncodingNotLoaded`
 * until `Tokenizers.ensureLoaded` resolves; the counts are tiktoken's.
 */
import { Errors, PolicyRegistry, Tokenizers } from "@context-engine/core"
import { Tiktoken } from "@context-engine/core/node"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"

const entries = Array.from({ length: 24 }, (_, index) => ({
  id: `m${index}`,
  parentId: index === 0 ? null : `m${index - 1}`,
  timestamp: "2026-03-01T00:00:00.000Z",
  schemaVersion: 1 as const,
  kind: "message" as const,
  message:
    index % 2 === 0
      ? { role: "user" as const, content: `Step ${index}: inspect src/module_${index}.ts` }
      : { role: "assistant" as const, content: `module_${index} exports handler${index}. ${"x ".repeat(600)}` }
}))

describe("rank tables load per encoding, on first use", () => {
  it("importing the packages loads none; a compaction under a gpt-4o policy loads o200k_base only", async () => {
    expect(Tokenizers.loadedEncodings()).toEqual([])
    const policy = PolicyRegistry.resolveSync({
      model: "gpt-4o",
      contextWindowTokens: 6000,
      maxOutputTokens: 500,
      keepRecentTokens: 1500
    })
    expect(policy.tokenizer).toBe("o200k_base")
    const result = await TieredSummaryEngine.makeAsync().compact({ entries, policy, manual: true })
    expect(result.entriesToAppend.map((entry) => entry.kind)).toContain("checkpoint")
    expect(result.after.totalTokens).toBeLessThan(result.before.totalTokens)
    expect(Tokenizers.loadedEncodings()).toEqual(["o200k_base"])
  })

  it("without process.getBuiltinModule an encoding not loaded fails with EncodingNotLoaded until ensureLoaded", async () => {
    const node = process as { getBuiltinModule?: unknown }
    const getBuiltinModule = node.getBuiltinModule
    node.getBuiltinModule = undefined
    try {
      expect(() => Tokenizers.get("cl100k_base").count("hello world")).toThrow(Errors.EncodingNotLoaded)
      expect(Tokenizers.loadedEncodings()).toEqual(["o200k_base"])
      await Tokenizers.ensureLoaded("cl100k_base")
      expect(Tokenizers.loadedEncodings()).toEqual(["o200k_base", "cl100k_base"])
      const text = "The quick brown fox — naïve café 🦊 <|endoftext|> 12345"
      const reference = Tiktoken.make("cl100k_base")
      try {
        expect(Tokenizers.get("cl100k_base").count(text)).toBe(reference.count(text))
      } finally {
        reference.free()
      }
    } finally {
      node.getBuiltinModule = getBuiltinModule
    }
  })
})
