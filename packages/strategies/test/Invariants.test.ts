import type { Message } from "@context-engine/core"
import { ContextView, Measurer, Tokenizers, ToolPairing } from "@context-engine/core"
import { deepFreeze, FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { Invariants, Pipeline, Tiers } from "../src/index.ts"
import { conversation } from "./support/arbitraries.ts"

const fake = FakeMeasurer.make()
const exact = Measurer.make(Tokenizers.get("o200k_base"))

const runAll = (messages: ReadonlyArray<Message.Message>, share: number, measurer = fake) => {
  const view = deepFreeze(ContextView.fromMessages(messages))
  const snapshot = JSON.stringify(messages)
  const policy = StrategyInput.policy(200_000)
  const budget = StrategyInput.budget(policy, measurer, view)
  const total = measurer.measure(view, { budget }).inputTokens
  const outcome = Pipeline.run({
    view,
    strategies: Tiers.withWindow(policy, budget, {
      clamp: { maxPartTokens: 400 },
      toolTrim: { minReclaimTokens: 0, keepRecentToolResults: 1, keepLastAssistants: 1 },
      media: { keepRecentTurns: 1 }
    }),
    targetTokens: Math.floor(total * share),
    budget,
    measurer,
    policy
  })
  return { view, snapshot, outcome, measurer, budget }
}

describe("pipeline invariants (property)", () => {
  it("holds every invariant after every stage, never mutates its input, and repairs idempotently", () => {
    fc.assert(
      fc.property(conversation, fc.double({ min: 0, max: 1.2, noNaN: true }), (messages, share) => {
        const { view, snapshot, outcome, budget } = runAll(messages, share)
        expect(JSON.stringify(messages)).toBe(snapshot)
        expect(Invariants.check(view, outcome.view)).toEqual([])
        // Every call answered exactly once; every result has its earlier call.
        expect(ToolPairing.analyze(outcome.view.items).problems).toEqual([])
        // The edits reproduce the view (what the engine persists is what it showed).
        expect(ContextView.applyEdits(view, outcome.edits)).toEqual(outcome.view)
        // Pairing repair is idempotent: a second run adds nothing when nothing more is needed.
        const again = Pipeline.run({
          view: outcome.view,
          strategies: [],
          targetTokens: Number.POSITIVE_INFINITY,
          budget,
          measurer: fake,
          policy: StrategyInput.policy(200_000)
        })
        expect(again.edits).toEqual([])
        // Each stage reports consistent numbers.
        for (const stage of outcome.stages) {
          if (stage.stage === Pipeline.NORMALIZE_STAGE) continue
          if (stage.status === "applied") expect(stage.tokensAfter).toBeLessThan(stage.tokensBefore)
          else expect(stage.tokensAfter).toBe(stage.tokensBefore)
        }
        expect(outcome.after.inputTokens).toBe(fake.measure(outcome.view, { budget }).inputTokens)
      }),
      { numRuns: 200 }
    )
  }, 120_000)

  it("keeps system messages and the latest user message verbatim and only the turn in progress when squeezed", () => {
    fc.assert(
      fc.property(conversation, (messages) => {
        const { view, outcome } = runAll(messages, 0)
        const userIndex = view.items.findLastIndex((item) => item.message.role === "user")
        const latestUser = view.items[userIndex]!
        expect(outcome.view.items.find((item) => item.entryId === latestUser.entryId)?.message).toBe(latestUser.message)
        for (const item of view.items)
          if (item.message.role === "system")
            expect(outcome.view.items.find((kept) => kept.entryId === item.entryId)?.message).toBe(item.message)
        // Nothing before the latest user message survives except system messages.
        const firstKept = outcome.view.items.findIndex((item) => item.message.role !== "system")
        expect(outcome.view.items[firstKept]?.entryId).toBe(latestUser.entryId)
      }),
      { numRuns: 200 }
    )
  }, 120_000)

  it("holds with the exact o200k measurer too", () => {
    fc.assert(
      fc.property(conversation, fc.double({ min: 0, max: 1, noNaN: true }), (messages, share) => {
        const { view, outcome, budget } = runAll(messages, share, exact)
        expect(Invariants.check(view, outcome.view)).toEqual([])
        expect(outcome.after.inputTokens).toBe(exact.measure(outcome.view, { budget }).inputTokens)
      }),
      { numRuns: 25 }
    )
  }, 120_000)

  it("check() reports a dropped call's orphan result, an empty message and a changed latest user message", () => {
    const before = deepFreeze(
      ContextView.fromMessages([
        { role: "user", content: "a" },
        { role: "assistant", content: [{ type: "tool-call", toolCallId: "x", toolName: "t", input: {} }] },
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: "x", toolName: "t", output: { type: "text", value: "r" } }]
        },
        { role: "user", content: "b" }
      ])
    )
    const broken = ContextView.applyEdits(before, [
      { op: "drop", entryId: "m1", strategy: "t", reason: "" },
      { op: "replace", entryId: "m3", message: { role: "user", content: "B" }, strategy: "t", reason: "" },
      { op: "replace", entryId: "m0", message: { role: "user", content: "" }, strategy: "t", reason: "" }
    ])
    expect(
      Invariants.check(before, broken)
        .map((violation) => violation.invariant)
        .sort()
    ).toEqual(["latest-user-verbatim", "no-empty-message", "tool-pairing"])
  })
})
