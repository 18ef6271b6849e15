/**
 * The real pi transcript (../shared/transcripts/pi/before-compaction.jsonl,
 * ~470K o200k tokens) through the sliding-window engine for a 200K and a
 * 128K window: the result fits when measured exactly by a fresh measurer,
 * every invariant holds, and a second pass needs nothing.
 */

import type { ContextEngine, ModelPolicy } from "@context-engine/core"
import { ContextView, Entry, Measurer, Tokenizers, ToolPairing } from "@context-engine/core"
import { Cases, deepFreeze } from "@context-engine/core/testing"
import { Invariants } from "@context-engine/strategies"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { piMessages } from "../../core/test/support/piTranscript.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"

const messages = piMessages("pi/before-compaction.jsonl")
const entries: Array<Entry.Entry> = deepFreeze(
  messages.map((message, index) => ({
    id: `p${index}`,
    parentId: index === 0 ? null : `p${index - 1}`,
    timestamp: new Date(Date.UTC(2025, 11, 8, 0, 0, index)).toISOString(),
    schemaVersion: Entry.CURRENT_SCHEMA_VERSION,
    kind: "message" as const,
    message
  }))
)
const tokenizer = Tokenizers.get("o200k_base")
const shared = Measurer.make(tokenizer)

describe.each([
  { contextWindow: 200_000, maxOutputTokens: 32_000 },
  { contextWindow: 128_000, maxOutputTokens: 16_384 }
])("pi before-compaction.jsonl in a $contextWindow-token window", (window) => {
  const policy: ModelPolicy.ModelPolicy = {
    ...Cases.policySync(window, `pi-${window.contextWindow}`),
    tokenizer: "o200k_base",
    promptCacheTtlMs: 300_000
  }
  const input: ContextEngine.EngineInput = { entries, policy }

  it("fits when measured exactly, keeps every invariant, and a second pass needs nothing", () => {
    const engine = SlidingWindowEngine.make({ measurer: () => shared })
    const decision = Effect.runSync(engine.shouldCompact(input))
    expect(decision.compact).toBe(true)
    const result = Effect.runSync(engine.compact(input))
    const fresh = Measurer.make(tokenizer).measure(result.view, { budget: decision.budget })
    expect(fresh.inputTokens).toBe(result.after.inputTokens)
    expect(fresh.inputTokens).toBeLessThanOrEqual(decision.budget.inputBudgetTokens)
    const before = SlidingWindowEngine.viewOf(input)
    expect(Invariants.check(before, result.view)).toEqual([])
    expect(ToolPairing.analyze(result.view.items).problems).toEqual([])
    // The lossless stages ran before the window and freed tokens.
    const freed = (name: string) => {
      const stage = result.stages.find((report) => report.stage === name)!
      return stage.tokensBefore - stage.tokensAfter
    }
    expect(freed("dedupe") + freed("toolTrim.soft") + freed("toolTrim.clear")).toBeGreaterThan(0)
    expect(Effect.runSync(engine.validate(input, result)).ok).toBe(true)
    const next = { ...input, entries: [...entries, ...result.entriesToAppend] }
    expect(Effect.runSync(engine.shouldCompact(next)).compact).toBe(false)
    expect(ContextView.toMessages(SlidingWindowEngine.viewOf(next))).toEqual(ContextView.toMessages(result.view))
  }, 180_000)

  it("cold (a fresh measurer, no shouldCompact first): estimate-first, yet the result is counted exactly and fits", () => {
    const engine = SlidingWindowEngine.make({ measurer: () => Measurer.make(tokenizer) })
    const result = Effect.runSync(engine.compact(input))
    // The view was not counted before: the old part was estimated, and the measurement says so.
    expect(result.before.method).toBe("estimate")
    expect(result.before.notes?.some((note) => /message\(s\) estimated/.test(note))).toBe(true)
    // The result is an exact count: a fresh measurer agrees, and it fits the budget.
    expect(result.after.method).toBe("exact")
    expect(Measurer.make(tokenizer).measure(result.view).inputTokens).toBe(result.after.inputTokens)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    const before = SlidingWindowEngine.viewOf(input)
    expect(Invariants.check(before, result.view)).toEqual([])
    expect(ToolPairing.analyze(result.view.items).problems).toEqual([])
    expect(Effect.runSync(engine.validate(input, result)).ok).toBe(true)
    // Estimates near the cut do not make it drop much more than the warm (all exact) engine does.
    const warm = SlidingWindowEngine.make({ measurer: () => shared })
    Effect.runSync(warm.shouldCompact(input))
    const exactResult = Effect.runSync(warm.compact(input))
    expect(exactResult.before.method).toBe("exact")
    expect(result.after.inputTokens).toBeGreaterThanOrEqual(0.9 * exactResult.after.inputTokens)
  }, 180_000)
})
