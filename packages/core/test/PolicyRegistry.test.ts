import { Errors, ModelCatalog, ModelPolicy, PolicyLimits, PolicyRegistry } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect, Exit, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { loadCase } from "./support/shared.ts"

const run = <A, E>(effect: Effect.Effect<A, E>): Exit.Exit<A, E> => Effect.runSyncExit(effect)

const failure = <A, E>(effect: Effect.Effect<A, E>): E => {
  const exit = run(effect)
  if (Exit.isSuccess(exit)) throw new Error(`expected a failure, got ${JSON.stringify(exit.value)}`)
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (!reason) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return reason.error
}

const inputRoom = (policy: ModelPolicy.ModelPolicy) =>
  policy.contextWindowTokens - policy.reserveTokens - policy.toolLoopReserveTokens - policy.safetyMarginTokens

/** The invariants DESIGN.md's budget formula needs from any policy. */
const expectPossible = (policy: ModelPolicy.ModelPolicy) => {
  expect(Schema.is(ModelPolicy.ModelPolicy)(policy)).toBe(true)
  expect(policy.maxOutputTokens).toBeLessThanOrEqual(policy.contextWindowTokens)
  expect(policy.reserveTokens).toBeLessThan(policy.contextWindowTokens)
  expect(inputRoom(policy)).toBeGreaterThan(0)
  expect(policy.keepRecentTokens).toBeLessThan(inputRoom(policy))
  for (const value of [
    policy.reserveTokens,
    policy.keepRecentTokens,
    policy.toolLoopReserveTokens,
    policy.safetyMarginTokens
  ]) {
    expect(Number.isInteger(value) && value >= 0).toBe(true)
  }
}

describe("built-in catalog", () => {
  it("every catalog id resolves to a possible policy with the catalog's facts", () => {
    for (const entry of ModelCatalog.entries) {
      expect(entry.source).toMatch(/^https:\/\//)
      for (const id of entry.ids) {
        const policy = PolicyRegistry.lookupSync(id)
        expectPossible(policy)
        expect(policy.contextWindowTokens).toBe(entry.contextWindowTokens)
        expect(policy.maxOutputTokens).toBe(entry.maxOutputTokens)
        expect(policy.tokenizer).toBe(entry.tokenizer)
      }
    }
  })

  it.each([
    // [id, window, max output] as the provider documents them
    ["claude-opus-4-5", 200_000, 64_000],
    ["claude-sonnet-4-5", 200_000, 64_000],
    ["claude-sonnet-4-20250514", 200_000, 64_000],
    ["claude-3-5-sonnet-20240620", 200_000, 8_192],
    ["claude-opus-4-1-20250805", 200_000, 32_000],
    ["gpt-5", 400_000, 128_000],
    ["gpt-5.1", 400_000, 128_000],
    ["gpt-4.1", 1_047_576, 32_768],
    ["gpt-4o", 128_000, 16_384],
    ["o4-mini", 200_000, 100_000],
    ["gemini-2.5-pro", 1_048_576, 65_536],
    ["gemini-3-pro-preview", 1_048_576, 65_536]
  ])("%s has the documented window and output limit", (id, window, output) => {
    const policy = PolicyRegistry.lookupSync(id)
    expect([policy.contextWindowTokens, policy.maxOutputTokens]).toEqual([window, output])
  })

  it("uses Pi's DEFAULT_COMPACTION_SETTINGS where the window allows (reserve 16384, keep 20000)", () => {
    const policy = PolicyRegistry.lookupSync("claude-sonnet-4-5")
    expect(policy.reserveTokens).toBe(16_384)
    expect(policy.keepRecentTokens).toBe(20_000)
  })

  it("never reserves more output than the model can write", () => {
    const policy = PolicyRegistry.lookupSync("claude-3-5-sonnet-20240620")
    expect(policy.reserveTokens).toBeLessThanOrEqual(8_192)
  })
})

describe("lookup", () => {
  it.each([
    ["claude-sonnet-4-5-20250929", "claude-sonnet-4-5"],
    ["anthropic/claude-opus-4-5-20251101", "claude-opus-4-5"],
    ["openai:gpt-5", "gpt-5"],
    ["openai/gpt-4.1-mini-2025-04-14", "gpt-4.1-mini"],
    ["us.anthropic.claude-sonnet-4-5-20250929-v1:0", "claude-sonnet-4-5"],
    ["claude-sonnet-4-5@20250929", "claude-sonnet-4-5"],
    ["models/gemini-2.5-flash", "gemini-2.5-flash"],
    ["meta-llama/Llama-3.3-70B-Instruct", "llama-3.3"],
    ["llama3.1:8b", "llama3.1"],
    ["Qwen/Qwen2.5-Coder-32B-Instruct", "qwen2.5"],
    ["gpt-5.1-codex-max", "gpt-5.1-codex"]
  ])("%s resolves like %s", (id, canonical) => {
    const policy = PolicyRegistry.lookupSync(id)
    const expected = PolicyRegistry.lookupSync(canonical)
    expect({ ...policy, model: "" }).toEqual({ ...expected, model: "" })
    expect(policy.model).toBe(id)
  })

  it("prefers an exact id over a shorter prefix", () => {
    expect(PolicyRegistry.lookupSync("gpt-4o-2024-05-13").maxOutputTokens).toBe(4_096)
    expect(PolicyRegistry.lookupSync("gpt-4o-2024-08-06").maxOutputTokens).toBe(16_384)
  })

  it("does not treat '.' as a version boundary: gpt-5.9 is not gpt-5", () => {
    const error = failure(PolicyRegistry.lookup("gpt-5.9"))
    expect(error).toBeInstanceOf(PolicyRegistry.UnknownModel)
  })

  it("fails for an unknown model with the nearest known ids", () => {
    const error = failure(PolicyRegistry.lookup("claude-sonet-4-5"))
    expect(error).toBeInstanceOf(PolicyRegistry.UnknownModel)
    const unknown = error as PolicyRegistry.UnknownModel
    expect(unknown.model).toBe("claude-sonet-4-5")
    expect(unknown.nearest[0]).toBe("claude-sonnet-4-5")
    expect(unknown.message).toContain("claude-sonnet-4-5")
  })

  it("falls back to the documented generic policy only when asked", () => {
    const policy = Effect.runSync(PolicyRegistry.lookupOrFallback("some-inhouse-model"))
    expect(policy.contextWindowTokens).toBe(PolicyLimits.FALLBACK_CONTEXT_WINDOW_TOKENS)
    expect(policy.tokenizer).toBe("estimate:generic")
    expectPossible(policy)
    // a known model is not replaced by the fallback
    expect(Effect.runSync(PolicyRegistry.lookupOrFallback("gpt-5")).contextWindowTokens).toBe(400_000)
  })
})

describe("catalogIdOf", () => {
  it("names the catalog entry lookup uses: the id itself, the longest boundary prefix, or none", () => {
    expect(PolicyRegistry.catalogIdOf("gpt-4o")).toBe("gpt-4o")
    expect(PolicyRegistry.catalogIdOf("gpt-4o-2024-08-06")).toBe("gpt-4o")
    expect(PolicyRegistry.catalogIdOf("gpt-4o-mini-2024-07-18")).toBe("gpt-4o-mini")
    expect(PolicyRegistry.catalogIdOf("anthropic/claude-sonnet-4.5")).toBe("claude-sonnet-4-5")
    expect(PolicyRegistry.catalogIdOf("acme-7b")).toBeUndefined()
    // The entry named is the one whose facts the lookup returns.
    const entry = ModelCatalog.entries.find((candidate) => candidate.ids.includes("gpt-4o"))!
    expect(PolicyRegistry.lookupSync("gpt-4o-2024-08-06").contextWindowTokens).toBe(entry.contextWindowTokens)
  })
})

describe("resolve", () => {
  it("merges an override over the model's policy and re-derives what was not set", () => {
    const wide = PolicyRegistry.resolveSync({ model: "claude-sonnet-4-5", contextWindowTokens: 1_000_000 })
    expect(wide.contextWindowTokens).toBe(1_000_000)
    expect(wide.maxOutputTokens).toBe(64_000)
    expect(wide.tokenizer).toBe("estimate:anthropic")
    // shrinking the window must not leave Pi's 20000-token tail behind as an impossible value
    const narrow = PolicyRegistry.resolveSync({
      model: "claude-sonnet-4-5",
      contextWindowTokens: 24_000,
      maxOutputTokens: 4_000
    })
    expectPossible(narrow)
  })

  it("a window below the model's output limit lowers the limit to half the window, as the CLI's --context-window does", () => {
    // claude-sonnet-4-5 writes up to 64,000 tokens; an 8,000-token deployment cannot leave it that
    const small = PolicyRegistry.resolveSync({ model: "claude-sonnet-4-5", contextWindowTokens: 8_000 })
    expect([small.contextWindowTokens, small.maxOutputTokens, small.reserveTokens]).toEqual([8_000, 4_000, 4_000])
    expectPossible(small)
    // the same through a registry override of the window alone (a policy file)
    const registry = Effect.runSync(
      PolicyRegistry.make({ models: { "claude-sonnet-4-5": { contextWindowTokens: 8_000 } } })
    )
    expect(PolicyRegistry.lookupSync("claude-sonnet-4-5", registry).maxOutputTokens).toBe(4_000)
    // an output limit given beside the window is taken as given: above the window it is refused with the numbers
    const refused = failure(
      PolicyRegistry.resolve({ model: "claude-sonnet-4-5", contextWindowTokens: 8_000, maxOutputTokens: 64_000 })
    )
    expect(refused).toBeInstanceOf(Errors.PolicyInvalid)
    expect([(refused as Errors.PolicyInvalid).field, (refused as Errors.PolicyInvalid).value]).toEqual([
      "maxOutputTokens",
      64_000
    ])
    expect((refused as Errors.PolicyInvalid).message).toContain("8000")
    // a window above the output limit leaves it alone
    expect(PolicyRegistry.resolveSync({ model: "gpt-4o", contextWindowTokens: 64_000 }).maxOutputTokens).toBe(16_384)
  })

  it("needs a known model or a window; a window alone gets the CLI's output limit (4,096, at most half the window)", () => {
    expect(failure(PolicyRegistry.resolve({}))).toBeInstanceOf(PolicyRegistry.UnknownModel)
    const missing = failure(PolicyRegistry.resolve({ model: "m", maxOutputTokens: 1_000 }))
    expect(missing).toBeInstanceOf(Errors.PolicyInvalid)
    expect((missing as Errors.PolicyInvalid).field).toBe("contextWindowTokens")
    // wqa5 item 6: the library accepts what `--model m --context-window 2k` accepts, with the same numbers
    const small = PolicyRegistry.resolveSync({ model: "m", contextWindowTokens: 2_000 })
    expect([small.contextWindowTokens, small.maxOutputTokens, small.reserveTokens]).toEqual([2_000, 1_000, 1_000])
    expect(small.tokenizer).toBe("estimate:generic")
    expectPossible(small)
    expect(PolicyRegistry.resolveSync({ contextWindowTokens: 10_000 }).maxOutputTokens).toBe(4_096)
    // the same rule for a policy file's key the catalog does not know
    const registry = Effect.runSync(PolicyRegistry.make({ models: { "my-model": { contextWindowTokens: 8_000 } } }))
    expect(PolicyRegistry.lookupSync("my-model", registry).maxOutputTokens).toBe(4_000)
  })

  it.each([
    [{ contextWindowTokens: -5 }, "contextWindowTokens", -5],
    [{ maxOutputTokens: 0 }, "maxOutputTokens", 0],
    [{ reserveTokens: 1.5 }, "reserveTokens", 1.5],
    [{ keepRecentTokens: Number.NaN }, "keepRecentTokens", Number.NaN],
    [{ safetyMarginTokens: 1e12 }, "safetyMarginTokens", 1e12],
    [{ contextWindowTokens: 200_000_000 }, "contextWindowTokens", 200_000_000],
    [{ promptCacheTtlMs: -1 }, "promptCacheTtlMs", -1],
    [{ reserveTokens: 200_000 }, "reserveTokens", 200_000],
    [{ maxOutputTokens: 300_000 }, "maxOutputTokens", 300_000],
    [{ keepRecentTokens: 190_000 }, "keepRecentTokens", 190_000],
    [
      { reserveTokens: 100_000, toolLoopReserveTokens: 60_000, safetyMarginTokens: 40_000 },
      "reserveTokens + toolLoopReserveTokens + safetyMarginTokens",
      200_000
    ]
  ])("rejects %o as PolicyInvalid naming %s", (override, field, value) => {
    const error = failure(PolicyRegistry.resolve({ model: "claude-sonnet-4-5", ...override }))
    expect(error).toBeInstanceOf(Errors.PolicyInvalid)
    const invalid = error as Errors.PolicyInvalid
    expect(invalid.field).toBe(field)
    expect(invalid.value).toEqual(value)
    expect(invalid.model).toBe("claude-sonnet-4-5")
    expect(invalid.reason.length).toBeGreaterThan(0)
  })

  it("property: any window ≥ 3 with output ≤ window derives a possible policy", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 3, max: PolicyLimits.MAX_TOKENS })
          .chain((window) =>
            fc.tuple(
              fc.constant(window),
              fc.integer({ min: 1, max: window }),
              fc.constantFrom(...ModelPolicy.TokenizerId.literals)
            )
          ),
        ([window, output, tokenizer]) => {
          const policy = PolicyRegistry.resolveSync({
            model: "x",
            contextWindowTokens: window,
            maxOutputTokens: output,
            tokenizer
          })
          expectPossible(policy)
          expect(policy.reserveTokens).toBeLessThanOrEqual(Math.min(output, PolicyLimits.DEFAULT_RESERVE_TOKENS))
          expect(policy.keepRecentTokens).toBeLessThanOrEqual(PolicyLimits.DEFAULT_KEEP_RECENT_TOKENS)
        }
      )
    )
  })

  it("property: a negative, fractional or absurd number in any field is PolicyInvalid naming that field and value", () => {
    const fields = [
      "contextWindowTokens",
      "maxOutputTokens",
      "reserveTokens",
      "keepRecentTokens",
      "toolLoopReserveTokens",
      "safetyMarginTokens",
      "promptCacheTtlMs"
    ] as const
    const bad = fc.oneof(
      fc.integer({ min: -1e9, max: -1 }),
      fc.double({ min: 0.001, max: 1e6, noNaN: true }).filter((n) => !Number.isInteger(n)),
      fc.integer({ min: PolicyLimits.MAX_PROMPT_CACHE_TTL_MS + 1, max: Number.MAX_SAFE_INTEGER }),
      fc.constantFrom(Number.NaN, Number.POSITIVE_INFINITY, Number.NEGATIVE_INFINITY)
    )
    fc.assert(
      fc.property(fc.constantFrom(...fields), bad, (field, value) => {
        const error = failure(PolicyRegistry.resolve({ model: "gpt-5", [field]: value }))
        expect(error).toBeInstanceOf(Errors.PolicyInvalid)
        expect((error as Errors.PolicyInvalid).field).toBe(field)
        expect(Object.is((error as Errors.PolicyInvalid).value, value)).toBe(true)
      })
    )
  })
})

describe("fromCasePolicy", () => {
  const cases = ["C01", "C02", "C03", "C04", "C05", "C07", "C08", "C09", "C10", "C11"]

  it.each(cases)("maps %s's policy to a possible policy", (id) => {
    const policy = loadCase<{ policy: Cases.CasePolicy }>(id).policy
    const resolved = Cases.policySync(policy, id)
    expectPossible(resolved)
    expect(resolved.model).toBe(id)
    expect(resolved.contextWindowTokens).toBe(policy.contextWindow)
    expect(resolved.maxOutputTokens).toBe(policy.maxOutputTokens)
    if (policy.keepRecentTokens !== undefined) expect(resolved.keepRecentTokens).toBe(policy.keepRecentTokens)
    if (policy.reserveTokens !== undefined) expect(resolved.reserveTokens).toBe(policy.reserveTokens)
    else expect(resolved.reserveTokens).toBeLessThanOrEqual(policy.maxOutputTokens)
  })

  it("rejects an impossible case policy", () => {
    const error = failure(Cases.policy({ contextWindow: 1000, maxOutputTokens: 4000 }))
    expect(error).toBeInstanceOf(Errors.PolicyInvalid)
    expect((error as Errors.PolicyInvalid).field).toBe("maxOutputTokens")
  })
})

describe("registry", () => {
  it("layers overrides: defaults, then shorter keys, then longer keys", () => {
    const registry = Effect.runSync(
      PolicyRegistry.make({
        defaults: { safetyMarginTokens: 1_000 },
        models: { claude: { toolLoopReserveTokens: 2_000 }, "claude-sonnet-4-5": { toolLoopReserveTokens: 3_000 } }
      })
    )
    const sonnet = PolicyRegistry.lookupSync("claude-sonnet-4-5-20250929", registry)
    expect([sonnet.safetyMarginTokens, sonnet.toolLoopReserveTokens]).toEqual([1_000, 3_000])
    const haiku = PolicyRegistry.lookupSync("claude-haiku-4-5", registry)
    expect([haiku.safetyMarginTokens, haiku.toolLoopReserveTokens]).toEqual([1_000, 2_000])
    expect(PolicyRegistry.lookupSync("gpt-5", registry).toolLoopReserveTokens).not.toBe(2_000)
  })

  it("rejects an override that makes a catalog model impossible", () => {
    const error = failure(PolicyRegistry.make({ models: { claude: { reserveTokens: 250_000 } } }))
    expect(error).toBeInstanceOf(Errors.PolicyInvalid)
    expect((error as Errors.PolicyInvalid).field).toBe("reserveTokens")
  })
})
