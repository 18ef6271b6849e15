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
  it("drops the oldest whole turns, keeps system messages, stops once the estimate fits", () => {
    const messages: Array<Message.Message> = [
      { role: "system", content: "sys" },
      ...turn(0, 2000),
      ...turn(1, 2000),
      ...turn(2, 2000),
      ...turn(3, 2000)
    ]
    const view = StrategyInput.frozenView(messages)
    const input = StrategyInput.make(view, measurer, 0)
    const perTurn = (input.measurement.inputTokens - 10) / 4
    const { edits } = SlidingWindow.slidingWindow.apply({
      ...input,
      targetTokens: input.measurement.inputTokens - Math.round(perTurn * 1.5)
    })
    expect(edits.map(targetOf)).toEqual(["m1", "m2", "m3", "m4", "m5", "m6", "m7", "m8"])
    const after = ContextView.applyEdits(view, edits)
    expect(after.items[0]!.message.role).toBe("system")
    expect(ToolPairing.analyze(after.items).problems).toEqual([])
  })

  it("never drops the turn in progress, even when asked for everything", () => {
    const view = StrategyInput.frozenView([{ role: "system", content: "sys" }, ...turn(0, 2000), ...turn(1, 2000)])
    const { edits } = SlidingWindow.slidingWindow.apply(StrategyInput.make(view, measurer, 0))
    const dropped = new Set(edits.map(targetOf))
    expect(dropped.has("m0")).toBe(false)
    for (const id of ["m5", "m6", "m7", "m8"]) expect(dropped.has(id)).toBe(false)
    expect(dropped.size).toBe(4)
  })

  it("is lossy and says so", () => {
    expect(SlidingWindow.slidingWindow.lossy).toBe(true)
  })
})
