import { ModelId } from "@context-engine/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const idPart = fc.stringMatching(/^[a-z0-9][a-z0-9.]{0,12}$/)
/** Without "." so that no generated id looks like a Bedrock `vendor.` prefix itself. */
const bareId = fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,12}$/)

describe("ModelId", () => {
  it("property: a key matches itself and any extension after a boundary, never after '.' or a letter", () => {
    fc.assert(
      fc.property(idPart, idPart, fc.constantFrom("-", "_", ":", "@"), (key, suffix, boundary) => {
        expect(ModelId.keyMatches(key, key)).toBe(true)
        expect(ModelId.keyMatches(`${key}${boundary}${suffix}`, key)).toBe(true)
        expect(ModelId.keyMatches(`${key}.${suffix}`, key)).toBe(false)
        expect(ModelId.keyMatches(`${key}x${suffix}`, key)).toBe(false)
      })
    )
  })

  it("property: provider prefixes are stripped, the bare id is kept", () => {
    fc.assert(
      fc.property(
        bareId,
        fc.constantFrom("anthropic/", "openai:", "openrouter/anthropic/", "models/", "us.anthropic."),
        (id, prefix) => {
          expect(ModelId.normalizeId(`${prefix}${id}`)).toBe(id)
          expect(ModelId.normalizeId(id.toUpperCase())).toBe(id)
        }
      )
    )
  })

  it("keeps Ollama tags whose name is not a provider", () => {
    expect(ModelId.normalizeId("qwen3:32b")).toBe("qwen3:32b")
    expect(ModelId.candidateIds("ollama:qwen3:32b")).toContain("qwen3:32b")
  })

  it("suggests the closest ids first", () => {
    expect(ModelId.nearestIds("gpt-5.2", ["o3", "gpt-5.1", "claude-opus-4-5", "gpt-4o"], 2)).toEqual([
      "gpt-5.1",
      "gpt-4o"
    ])
  })
})
