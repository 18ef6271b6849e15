import type { Message } from "@context-engine/core"
import { ContextView, ToolPairing } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { SlidingWindow } from "../src/index.ts"
import { call, filler, result, targetOf } from "./support/views.ts"

const measurer = FakeMeasurer.make()

const turn = (index: number, chars: number): Array<Message.Message> => [
  { role: "user", content: `task ${index}` },
  {
    role: "assistant",
    content: [call(`a${index}`, "read", { path: `f${index}` }), call(`b${index}`, "read", { path: `g${index}` })]
  },
  {
    role: "tool",
    content: [result(`a${index}`, "read", filler(chars, index)), result(`b${index}`, "read", filler(chars, index + 50))]
  },
  { role: "assistant", content: `done ${index}` }
]

describe("SlidingWindow", () => {
  const fourTurns = (): Array<Message.Message> => [
    { role: "system", content: "sys" },
    ...turn(0, 2000),
    ...turn(1, 2000),
    ...turn(2, 2000),
    ...turn(3, 2000)
  ]

  it("drops the oldest whole turns, keeps system messages, stops once the estimate fits", () => {
    const view = StrategyInput.frozenView(fourTurns())
    const input = StrategyInput.make(view, measurer, 0)
    const perTurn = (input.measurement.inputTokens - 10) / 4
    const { edits, note } = SlidingWindow.slidingWindow.apply({
      ...input,
      targetTokens: input.measurement.inputTokens - Math.round(perTurn * 2)
    })
    expect(edits.map(targetOf)).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"])
    // The system message before the first user message is a leading run of its own (never dropped).
    expect(note).toBe("3 of 5 turn(s) dropped")
    const after = ContextView.applyEdits(view, edits)
    expect(after.items[0]!.message.role).toBe("system")
    expect(ToolPairing.analyze(after.items).problems).toEqual([])
  })

  // Gemini CLI day 16 at 8K: the last turn to go was a long tool loop, and dropping it whole left 80 tokens of a
  // 3,200-token budget. Its ask stays and only its oldest steps go, whole units.
  it("when the last turn to go would free far more than needed, its ask and latest step stay; only its oldest steps go", () => {
    const view = StrategyInput.frozenView(fourTurns())
    const input = StrategyInput.make(view, measurer, 0)
    const perTurn = (input.measurement.inputTokens - 10) / 4
    const { edits, note } = SlidingWindow.slidingWindow.apply({
      ...input,
      targetTokens: input.measurement.inputTokens - Math.round(perTurn * 1.5)
    })
    // Turn 0 goes whole; turn 1 loses its tool step (the call and both results), keeps "task 1" and "done 1".
    expect(edits.map(targetOf)).toEqual(["m1", "m2", "m3", "m4", "m6", "m7"])
    expect(note).toBe("2 of 5 turn(s) dropped, the oldest 1 step(s) of the next")
    const after = ContextView.applyEdits(view, edits)
    expect(after.items.map((item) => item.entryId).slice(0, 3)).toEqual(["m0", "m5", "m8"])
    expect(ToolPairing.analyze(after.items).problems).toEqual([])
  })

  it("a turn whose older steps cannot free what is needed goes whole: no newer turn goes while an older ask stays", () => {
    const view = StrategyInput.frozenView(fourTurns())
    const input = StrategyInput.make(view, measurer, 0)
    const perTurn = (input.measurement.inputTokens - 10) / 4
    // Needs all but a few tokens of two turns: turn 1's tool step alone is not enough.
    const { edits } = SlidingWindow.slidingWindow.apply({
      ...input,
      targetTokens: input.measurement.inputTokens - Math.round(perTurn * 2) + 3
    })
    expect(edits.map(targetOf)).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"])
  })

  it("never drops the turn in progress, even when asked for everything", () => {
    const view = StrategyInput.frozenView([{ role: "system", content: "sys" }, ...turn(0, 2000), ...turn(1, 2000)])
    const { edits } = SlidingWindow.slidingWindow.apply(StrategyInput.make(view, measurer, 0))
    const dropped = new Set(edits.map(targetOf))
    expect(dropped.has("m0")).toBe(false)
    for (const id of ["m5", "m6", "m7", "m8"]) expect(dropped.has(id)).toBe(false)
    expect(dropped.size).toBe(4)
  })

  it("keeps the messages named in keepEntryIds in place, like the latest user message, and frees more elsewhere", () => {
    const view = StrategyInput.frozenView(fourTurns())
    const input = StrategyInput.make(view, measurer, 0)
    const { edits } = SlidingWindow.make({ keepEntryIds: ["m1"] }).apply({ ...input, targetTokens: 0 })
    const dropped = new Set(edits.map(targetOf))
    expect(dropped.has("m1")).toBe(false)
    for (const id of ["m2", "m3", "m4", "m5", "m6", "m7", "m8"]) expect(dropped.has(id)).toBe(true)
    expect(ToolPairing.analyze(ContextView.applyEdits(view, edits).items).problems).toEqual([])
  })

  // New-user trial 2: one ask, then 70 edit steps — the turn in progress alone was over the budget and went out
  // at 10,314 tokens into an 8,000-token window.
  it("turnSteps: a long turn in progress loses its oldest steps, whole units; its ask and latest step stay", () => {
    const messages: Array<Message.Message> = [
      { role: "system", content: "sys" },
      { role: "user", content: "refactor" }
    ]
    for (let step = 0; step < 6; step++) {
      messages.push({
        role: "assistant",
        content: [call(`e${step}`, "edit", { path: `f${step}.ts`, newText: filler(400, step) })]
      })
      messages.push({ role: "tool", content: [result(`e${step}`, "edit", "ok")] })
    }
    const view = StrategyInput.frozenView(messages)
    const input = StrategyInput.make(view, measurer, 0)
    const perStep = (input.measurement.inputTokens - 20) / 6
    const { edits, note } = SlidingWindow.turnSteps().apply({
      ...input,
      targetTokens: input.measurement.inputTokens - Math.round(perStep * 2.5)
    })
    // Three steps (call + result each) go, oldest first.
    expect(edits.map(targetOf)).toEqual(["m2", "m3", "m4", "m5", "m6", "m7"])
    expect(note).toBe("3 of 6 step(s) of the turn in progress dropped")
    const after = ContextView.applyEdits(view, edits)
    expect(ToolPairing.analyze(after.items).problems).toEqual([])
    // Asked for everything: only the latest step stays beside the ask.
    const all = SlidingWindow.turnSteps().apply({ ...input, targetTokens: 0 })
    expect(ContextView.applyEdits(view, all.edits).items.map((item) => item.entryId)).toEqual([
      "m0",
      "m1",
      "m12",
      "m13"
    ])
  })

  it("is lossy and says so", () => {
    expect(SlidingWindow.slidingWindow.lossy).toBe(true)
  })
})
