import type { Message } from "@context-engine/core"
import { ContextView, Measurer, Tokenizers } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { Clamp, Pipeline } from "../src/index.ts"
import { call, filler, result, targetOf, text } from "./support/views.ts"

const measurer = FakeMeasurer.make()

const conversation = (big: string): Array<Message.Message> => [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: [text(`Here is the log:\n${big}`)] },
  { role: "assistant", content: [text("Looking.")] },
  { role: "user", content: "Any progress?" }
]

describe("Clamp", () => {
  it("keeps head and tail of an oversized part with a marker naming what was cut", () => {
    const big = `HEAD-START ${filler(200_000)} TAIL-END`
    const view = StrategyInput.frozenView(conversation(big))
    const { edits } = Clamp.make({ maxPartTokens: 1000 }).apply(StrategyInput.make(view, measurer, 10))
    expect(edits).toHaveLength(1)
    const edit = edits[0]!
    expect(edit.op).toBe("replace")
    if (edit.op !== "replace") return
    expect(edit.entryId).toBe("m1")
    const clampedText = (edit.message.content as ReadonlyArray<Message.TextPart>)[0]!.text
    expect(clampedText.startsWith("Here is the log:\nHEAD-START")).toBe(true)
    expect(clampedText.endsWith("TAIL-END")).toBe(true)
    const cut = /(\d+) of (\d+) characters \(~(\d+) tokens\) cut/.exec(clampedText)
    expect(cut).not.toBeNull()
    const original = `Here is the log:\n${big}`
    expect(Number(cut![2])).toBe(original.length)
    // What is left plus what was cut is the original length.
    const marker = clampedText.slice(clampedText.indexOf("\n[…"), clampedText.indexOf("…]\n") + 3)
    expect(clampedText.length - marker.length + Number(cut![1])).toBe(original.length)
    expect(clampedText).toContain("transcript entry m1")
    expect(measurer.tokenizer.count(clampedText)).toBeLessThanOrEqual(1000)
  })

  it("never touches system messages or the latest user message by default", () => {
    const big = filler(50_000)
    const view = StrategyInput.frozenView([
      { role: "system", content: big },
      { role: "user", content: big }
    ])
    expect(Clamp.make({ maxPartTokens: 500 }).apply(StrategyInput.make(view, measurer, 10)).edits).toEqual([])
    const allowed = Clamp.make({ maxPartTokens: 500, clampLatestUserMessage: true }).apply(
      StrategyInput.make(view, measurer, 10)
    )
    expect(allowed.edits.map(targetOf)).toEqual(["m1"])
  })

  it("clamps tool-call arguments leaf by leaf so they stay a valid JSON object", () => {
    const content = filler(80_000)
    const view = StrategyInput.frozenView([
      { role: "user", content: "write it" },
      { role: "assistant", content: [call("c1", "write", { path: "src/big.ts", content, mode: 420 })] },
      { role: "tool", content: [result("c1", "write", "ok")] },
      { role: "user", content: "thanks" }
    ])
    const { edits } = Clamp.make({ maxPartTokens: 2000 }).apply(StrategyInput.make(view, measurer, 10))
    expect(edits).toHaveLength(1)
    const edit = edits[0]!
    if (edit.op !== "replace") throw new Error("expected replace")
    const part = (edit.message.content as ReadonlyArray<Message.ToolCallPart>)[0]!
    const input = part.input as { path: string; content: string; mode: number }
    expect(input.path).toBe("src/big.ts")
    expect(input.mode).toBe(420)
    expect(input.content.length).toBeLessThan(content.length)
    expect(JSON.parse(JSON.stringify(part.input))).toEqual(part.input)
    expect(part.toolCallId).toBe("c1")
  })

  it("derives the limit from the smaller of maxPartTokens and the share of available tokens", () => {
    expect(Clamp.limitTokens({ maxPartTokens: 25_000, maxShareOfAvailable: 0.5 }, 10_000)).toBe(5_000)
    expect(Clamp.limitTokens({ maxPartTokens: 3_000, maxShareOfAvailable: 0.5 }, 10_000)).toBe(3_000)
    expect(Clamp.limitTokens({ minPartTokens: 256 }, -50)).toBe(256)
  })

  it("in a pipeline, makes a C03-shaped conversation fit and a second run needs nothing", () => {
    const policy = StrategyInput.policy(64_000, 8_000)
    const view = StrategyInput.frozenView(conversation(filler(250_000)))
    const budget = StrategyInput.budget(policy, measurer, view)
    const run = (v: ContextView.ContextView) =>
      Pipeline.run({
        view: v,
        strategies: [Clamp.clamp],
        targetTokens: budget.inputBudgetTokens,
        budget,
        measurer,
        policy
      })
    const first = run(view)
    expect(first.before.inputTokens).toBeGreaterThan(budget.inputBudgetTokens)
    expect(first.fits).toBe(true)
    expect(measurer.measure(first.view, { budget }).inputTokens).toBe(first.after.inputTokens)
    const second = run(ContextView.applyEdits(view, first.edits))
    expect(second.edits).toEqual([])
    expect(second.stages.find((stage) => stage.stage === "clamp")?.status).toBe("not-needed")
  })
})

describe("Clamp.fit", () => {
  const fitMeasurer = FakeMeasurer.make()
  const messages: Array<Message.Message> = [
    { role: "system", content: "sys" },
    { role: "user", content: `Fix the bug. ${"please ".repeat(50)}` },
    { role: "assistant", content: "Opening the file." },
    { role: "user", content: `[File: /repo/big.py (900 lines total)]\nHEAD ${"x = 1\n".repeat(2_000)} TAIL` }
  ]

  it("clamps the largest editable message by the excess, with the marker naming its entry, never the latest ask", () => {
    const view = StrategyInput.frozenView(messages)
    const total = StrategyInput.make(view, fitMeasurer, 0).measurement.inputTokens
    const target = total - 1_000
    const input = StrategyInput.make(view, fitMeasurer, target)
    const { edits } = Clamp.fit().apply(input)
    expect(edits.map((edit) => (edit.op === "insert" ? edit.id : edit.entryId))).toEqual(["m3"])
    const after = ContextView.applyEdits(view, edits)
    expect(fitMeasurer.measure(after, { budget: input.budget }).inputTokens).toBeLessThanOrEqual(target)
    const text = after.items[3]!.message.content as string
    expect(text.startsWith("[File: /repo/big.py")).toBe(true)
    expect(text.endsWith("TAIL")).toBe(true)
    expect(text).toContain("full text in transcript entry m3")
    expect(after.items[1]!.message).toBe(view.items[1]!.message)
  })

  // pydicom 8k replay (claude-sonnet-4-5, estimate tokenizer): the only editable message was a 678-token
  // observation and the request 460 over; the part limit stopped at minPartTokens (256), the cut message
  // measured 241 and the request stayed 23 over, so the compaction failed three times and the circuit opened.
  for (const tokenizer of ["estimate:anthropic", "estimate:generic", "o200k_base"] as const) {
    const measurer = Measurer.make(Tokenizers.get(tokenizer))
    const observation = `[File: /repo/dataset.py (3000 lines total)]\nHEAD ${"value = tag.read(fp)  # parse\n".repeat(90)} TAIL`
    const rows: Array<Message.Message> = [
      { role: "system", content: "sys" },
      { role: "user", content: `Fix the bug. ${"please ".repeat(50)}` },
      { role: "assistant", content: "Opening the file." },
      { role: "user", content: observation }
    ]
    const observationTokens = measurer.messageTokens(rows[3]!)

    it(`${tokenizer}: cuts below minPartTokens when that is what the target needs, and lands at or under it`, () => {
      expect(observationTokens).toBeGreaterThan(500)
      const view = StrategyInput.frozenView(rows)
      const total = StrategyInput.make(view, measurer, 0).measurement.inputTokens
      // the observation must end at or under 150 tokens, below the 256-token floor
      const target = total - (observationTokens - 150)
      const input = StrategyInput.make(view, measurer, target)
      const after = ContextView.applyEdits(view, Clamp.fit().apply(input).edits)
      expect(measurer.measure(after, { budget: input.budget }).inputTokens).toBeLessThanOrEqual(target)
      const text = after.items[3]!.message.content as string
      expect(text.startsWith("[File: /repo/dataset.py")).toBe(true)
      expect(text).toContain("full text in transcript entry m3")
      expect(after.items[1]!.message).toBe(view.items[1]!.message)
    })

    it(`${tokenizer}: when the largest message at the floor is not enough, the next largest is cut too`, () => {
      const two = [
        ...rows.slice(0, 3),
        { role: "user", content: observation.replace("dataset", "other") },
        ...rows.slice(2)
      ]
      const view = StrategyInput.frozenView(two as Array<Message.Message>)
      const total = StrategyInput.make(view, measurer, 0).measurement.inputTokens
      // each observation cut to the floor frees about observationTokens - 256; ask for more than one can give
      const target = total - Math.round((observationTokens - 256) * 1.5)
      const input = StrategyInput.make(view, measurer, target)
      const { edits } = Clamp.fit().apply(input)
      expect(edits.map((edit) => (edit.op === "insert" ? edit.id : edit.entryId)).sort()).toEqual(["m3", "m5"])
      const after = ContextView.applyEdits(view, edits)
      expect(measurer.measure(after, { budget: input.budget }).inputTokens).toBeLessThanOrEqual(target)
    })
  }

  it("does nothing within the target, and nothing when only the system prompt and the latest ask are left", () => {
    const view = StrategyInput.frozenView(messages)
    expect(Clamp.fit().apply(StrategyInput.make(view, fitMeasurer, 1_000_000)).edits).toEqual([])
    const onlyProtected = StrategyInput.frozenView(messages.slice(0, 2))
    expect(Clamp.fit().apply(StrategyInput.make(onlyProtected, fitMeasurer, 1)).edits).toEqual([])
  })
})
