import type { Message } from "@context-engine/core"
import { ContextView } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { Pipeline, Tiers, ToolTrim } from "../src/index.ts"
import { call, filler, result, targetOf } from "./support/views.ts"

const measurer = FakeMeasurer.make()

/** `n` read steps, each with a result of `chars` characters, then a final user message. */
const session = (n: number, chars: number, toolName = "read"): Array<Message.Message> => [
  { role: "system", content: "sys" },
  { role: "user", content: "go" },
  ...Array.from(
    { length: n },
    (_, index): Array<Message.Message> => [
      { role: "assistant", content: [call(`c${index}`, toolName, { path: `f${index}.ts` })] },
      {
        role: "tool",
        content: [result(`c${index}`, toolName, `BEGIN${index} ${filler(chars, index + 1)} END${index}`)]
      }
    ]
  ).flat(),
  { role: "user", content: "next" }
]

const resultTextOf = (message: Message.Message): string => {
  const part = (message.content as ReadonlyArray<Message.ToolResultPart>)[0]!
  return part.output.type === "text" ? part.output.value : ""
}

describe("ToolTrim.candidates", () => {
  it("protects the most recent results and the last assistant messages", () => {
    const view = StrategyInput.frozenView(session(10, 100))
    const ids = ToolTrim.candidates(view, { keepRecentToolResults: 3, keepLastAssistants: 1 }).map(
      (candidate) => candidate.part.toolCallId
    )
    expect(ids).toEqual(["c0", "c1", "c2", "c3", "c4", "c5", "c6"])
    const byAssistants = ToolTrim.candidates(view, { keepRecentToolResults: 0, keepLastAssistants: 5 }).map(
      (candidate) => candidate.part.toolCallId
    )
    expect(byAssistants).toEqual(["c0", "c1", "c2", "c3", "c4"])
  })

  it("never offers excluded tools", () => {
    const view = StrategyInput.frozenView(session(6, 100, "memory"))
    expect(
      ToolTrim.candidates(view, { excludeTools: ["memory"], keepRecentToolResults: 0, keepLastAssistants: 0 })
    ).toEqual([])
  })
})

describe("ToolTrim.soft", () => {
  it("keeps head and tail of old long results, oldest first, and stops once the target is reached", () => {
    const view = StrategyInput.frozenView(session(10, 20_000))
    const input = StrategyInput.make(view, measurer, 0)
    const perResult = input.measurement.inputTokens / 10
    // Ask for roughly two results' worth of tokens.
    const target = input.measurement.inputTokens - Math.round(perResult * 1.5)
    const { edits } = ToolTrim.soft({ minReclaimTokens: 0 }).apply({ ...input, targetTokens: target })
    expect(edits.map(targetOf)).toEqual(["m3", "m5"])
    for (const edit of edits) {
      if (edit.op !== "replace") throw new Error("expected replace")
      const text = resultTextOf(edit.message)
      const index = Number(edit.entryId.slice(1)) / 2 - 1.5
      expect(text.startsWith(`BEGIN${index} `)).toBe(true)
      expect(text.endsWith(`END${index}`)).toBe(true)
      expect(text).toContain(`transcript entry ${edit.entryId}`)
      expect(text.length).toBeLessThan(3_300)
    }
  })

  it("leaves short results alone", () => {
    const view = StrategyInput.frozenView(session(10, 1_000))
    expect(ToolTrim.soft({ minReclaimTokens: 0 }).apply(StrategyInput.make(view, measurer, 0)).edits).toEqual([])
  })
})

describe("ToolTrim.clear", () => {
  it("replaces old results with a placeholder naming the entry and call, keeping the call", () => {
    const view = StrategyInput.frozenView(session(8, 2_000))
    const { edits } = ToolTrim.clear({ minReclaimTokens: 0 }).apply(StrategyInput.make(view, measurer, 0))
    // 8 results, 3 most recent protected.
    expect(edits).toHaveLength(5)
    for (const edit of edits) {
      if (edit.op !== "replace") throw new Error("expected replace")
      const part = (edit.message.content as ReadonlyArray<Message.ToolResultPart>)[0]!
      expect(resultTextOf(edit.message)).toContain("[Old tool result content cleared")
      expect(resultTextOf(edit.message)).toContain(`call ${part.toolCallId}`)
      expect(resultTextOf(edit.message)).toContain(`transcript entry ${edit.entryId}`)
    }
  })

  it("does not clear what it already cleared", () => {
    const view = StrategyInput.frozenView(session(8, 2_000))
    const strategy = ToolTrim.clear({ minReclaimTokens: 0 })
    const first = strategy.apply(StrategyInput.make(view, measurer, 0))
    const again = strategy.apply(StrategyInput.make(ContextView.applyEdits(view, first.edits), measurer, 0))
    expect(again.edits).toEqual([])
  })
})

describe("ToolTrim prompt-cache guard", () => {
  it("is skipped by the pipeline when it would free less than minReclaimTokens, applied otherwise", () => {
    const view = StrategyInput.frozenView(session(6, 2_000))
    const policy = StrategyInput.policy(200_000)
    const budget = StrategyInput.budget(policy, measurer, view)
    const total = measurer.measure(view, { budget }).inputTokens
    const run = (minReclaimTokens: number) =>
      Pipeline.run({
        view,
        strategies: [ToolTrim.clear({ minReclaimTokens })],
        targetTokens: total - 1,
        budget,
        measurer,
        policy
      }).stages[1]!
    const applied = run(0)
    expect(applied.status).toBe("applied")
    const freed = applied.tokensBefore - applied.tokensAfter
    const guarded = run(freed + 1)
    expect(guarded.status).toBe("skipped")
    expect(guarded.note).toContain(`less than its minimum of ${freed + 1}`)
  })

  it("scales the guard with the budget and drops it when the provider has no prompt cache", () => {
    const view = StrategyInput.frozenView(session(1, 10))
    const big = StrategyInput.policy(1_000_000, 32_000)
    const small = StrategyInput.policy(32_000, 4_000)
    const cached = (policy: typeof big) => ({ ...policy, promptCacheTtlMs: 300_000 })
    expect(Tiers.cacheGuardTokens(cached(big), StrategyInput.budget(big, measurer, view))).toBe(
      ToolTrim.defaults.minReclaimTokens
    )
    const smallBudget = StrategyInput.budget(small, measurer, view)
    expect(Tiers.cacheGuardTokens(cached(small), smallBudget)).toBe(
      Math.floor(smallBudget.availableTokens * Tiers.cacheGuardShare)
    )
    expect(Tiers.cacheGuardTokens({ ...small, promptCacheTtlMs: 0 }, smallBudget)).toBe(0)
  })
})
