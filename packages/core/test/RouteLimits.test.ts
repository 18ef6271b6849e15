/**
 * Route limits (shared case C20): the input budget is the smallest of the
 * window budget, the input cap and the server compaction point (each less
 * the safety margin), the bound is named, impossible limits are refused with
 * the field, and request bytes are UTF-8 bytes of the JSON.
 */
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Budget from "../src/Budget.ts"
import * as PolicyLimits from "../src/PolicyLimits.ts"
import * as PolicyRegistry from "../src/PolicyRegistry.ts"
import * as RequestBytes from "../src/RequestBytes.ts"

const policy = PolicyLimits.derive("route-test", {
  contextWindowTokens: 400_000,
  maxOutputTokens: 128_000,
  tokenizer: "o200k_base"
})
const overhead = { systemTokens: 0, toolSchemaTokens: 0 }

describe("route limits", () => {
  it("the input budget is the smallest limit less the margin, and names it (GPT-5: 272K input of a 400K window)", () => {
    const window = Budget.make(policy, overhead)
    expect(window.bindingLimit).toBe("context-window")
    const capped = Budget.make({ ...policy, maxInputTokens: 272_000 }, overhead)
    expect(capped.inputBudgetTokens).toBe(272_000 - policy.safetyMarginTokens)
    expect(capped.bindingLimit).toBe("max-input-tokens")
    const server = Budget.make({ ...policy, maxInputTokens: 272_000, serverCompactionAtTokens: 205_000 }, overhead)
    expect(server.inputBudgetTokens).toBe(205_000 - policy.safetyMarginTokens)
    expect(server.bindingLimit).toBe("server-compaction")
    // A cap above the window budget changes nothing.
    const loose = Budget.make({ ...policy, maxInputTokens: 390_000 }, overhead)
    expect(loose.inputBudgetTokens).toBe(window.inputBudgetTokens)
    expect(loose.bindingLimit).toBe("context-window")
  })

  it("impossible limits are refused with the field and why", () => {
    expect(PolicyLimits.check({ ...policy, maxInputTokens: 0 })).toMatchObject({ field: "maxInputTokens" })
    expect(PolicyLimits.check({ ...policy, serverCompactionAtTokens: 1.5 })).toMatchObject({
      field: "serverCompactionAtTokens"
    })
    expect(PolicyLimits.check({ ...policy, maxRequestBodyBytes: -1 })).toMatchObject({ field: "maxRequestBodyBytes" })
    expect(PolicyLimits.check({ ...policy, maxInputTokens: policy.safetyMarginTokens })).toMatchObject({
      field: "maxInputTokens",
      reason: expect.stringContaining("safety margin")
    })
    // keepRecentTokens must fit under the smallest limit.
    expect(PolicyLimits.check({ ...policy, maxInputTokens: 25_000 })).toMatchObject({ field: "keepRecentTokens" })
    // The tokens held back are named part by part (QA s5 item 8: "after 36384 reserved" beside a header's "reserve 16,384").
    expect(PolicyLimits.check({ ...policy, keepRecentTokens: policy.contextWindowTokens - 1 })?.reason).toContain(
      `window less ${policy.reserveTokens + policy.toolLoopReserveTokens + policy.safetyMarginTokens} held back (reserve ${policy.reserveTokens} + tool-loop reserve ${policy.toolLoopReserveTokens} + safety margin ${policy.safetyMarginTokens})`
    )
    const exit = Effect.runSyncExit(
      PolicyRegistry.fallback("route-test", {
        contextWindowTokens: 32_000,
        maxOutputTokens: 4_000,
        maxInputTokens: 16_000
      })
    )
    expect(Exit.isSuccess(exit) && exit.value.maxInputTokens).toBe(16_000)
    // The derived keep-recent tail fits the capped input room.
    expect(Exit.isSuccess(exit) && exit.value.keepRecentTokens).toBeLessThan(16_000 / 2)
  })

  it("request bytes are UTF-8 bytes (checked against Buffer.byteLength)", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary" }), (text) => {
        expect(RequestBytes.utf8Bytes(text)).toBe(Buffer.byteLength(text, "utf8"))
      }),
      { numRuns: 300 }
    )
    expect(RequestBytes.utf8Bytes("\uD800x")).toBe(Buffer.byteLength("\uD800x", "utf8"))
  })

  it("a 413 with no stated limit teaches the largest common cap below the refused size", () => {
    expect(RequestBytes.learnedCap(5_601_640)).toBe(4 * 1024 * 1024)
    expect(RequestBytes.learnedCap(40_000_000)).toBe(32_000_000)
    expect(RequestBytes.learnedCap(800_000)).toBe(400_000)
  })
})
