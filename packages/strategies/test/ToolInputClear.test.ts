import type { Message } from "@context-engine/core"
import { ContextView } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { Tiers, ToolInputClear } from "../src/index.ts"
import { call, filler, result, targetOf } from "./support/views.ts"

const measurer = FakeMeasurer.make()

/** `n` write steps whose calls carry `chars` characters of file content, then a final user message. */
const session = (n: number, chars: number, toolName = "write"): Array<Message.Message> => [
  { role: "system", content: "sys" },
  { role: "user", content: "go" },
  ...Array.from(
    { length: n },
    (_, index): Array<Message.Message> => [
      {
        role: "assistant",
        content: [call(`c${index}`, toolName, { path: `src/f${index}.ts`, content: filler(chars, index + 1) })]
      },
      { role: "tool", content: [result(`c${index}`, toolName, `wrote src/f${index}.ts`)] }
    ]
  ).flat(),
  { role: "user", content: "next" }
]

const inputOf = (message: Message.Message): Record<string, unknown> =>
  (message.content as ReadonlyArray<Message.ToolCallPart>)[0]!.input as Record<string, unknown>

describe("ToolInputClear", () => {
  it("clears the long arguments of old calls, keeps short ones and the JSON shape, protects the newest calls", () => {
    const view = StrategyInput.frozenView(session(8, 3_000))
    const { edits } = ToolInputClear.make({ minReclaimTokens: 0 }).apply(StrategyInput.make(view, measurer, 0))
    // 8 calls; the newest 3 (keepRecentToolResults) and those of the last 3 assistant messages are protected.
    expect(edits.map(targetOf)).toEqual(["m2", "m4", "m6", "m8", "m10"])
    for (const edit of edits) {
      if (edit.op !== "replace") throw new Error("expected replace")
      const input = inputOf(edit.message)
      expect(Object.keys(input)).toEqual(["path", "content"])
      expect(input.path).toMatch(/^src\/f\d\.ts$/)
      expect(input.content).toBe(
        `[Old tool input cleared — 3000 characters; full input in transcript entry ${edit.entryId}]`
      )
    }
  })

  it("stops once the target is reached, oldest first", () => {
    const view = StrategyInput.frozenView(session(8, 3_000))
    const input = StrategyInput.make(view, measurer, 0)
    const perCall = Math.round(3_000 / 4)
    const { edits } = ToolInputClear.make({ minReclaimTokens: 0 }).apply({
      ...input,
      targetTokens: input.measurement.inputTokens - Math.round(perCall * 1.5)
    })
    expect(edits.map(targetOf)).toEqual(["m2", "m4"])
  })

  it("leaves short arguments, excluded tools and what it already cleared alone", () => {
    const short = StrategyInput.frozenView(session(8, 200))
    expect(ToolInputClear.make({ minReclaimTokens: 0 }).apply(StrategyInput.make(short, measurer, 0)).edits).toEqual([])
    const excluded = StrategyInput.frozenView(session(8, 3_000, "memory"))
    expect(
      ToolInputClear.make({ minReclaimTokens: 0, excludeTools: ["memory"] }).apply(
        StrategyInput.make(excluded, measurer, 0)
      ).edits
    ).toEqual([])
    const view = StrategyInput.frozenView(session(8, 3_000))
    const strategy = ToolInputClear.make({ minReclaimTokens: 0 })
    const first = strategy.apply(StrategyInput.make(view, measurer, 0))
    const again = strategy.apply(StrategyInput.make(ContextView.applyEdits(view, first.edits), measurer, 0))
    expect(again.edits).toEqual([])
  })

  it("rewrites arguments given as a JSON string as a JSON string, and clears a non-JSON string whole", () => {
    const messages = session(5, 10)
    const asString = (index: number, input: string): Message.Message => ({
      role: "assistant",
      content: [call(`c${index}`, "write", input)]
    })
    const long = filler(2_000, 7)
    const view = StrategyInput.frozenView([
      ...messages.slice(0, 2),
      asString(0, JSON.stringify({ path: "a.ts", content: long })),
      messages[3]!,
      asString(1, long),
      messages[5]!,
      ...messages.slice(6)
    ])
    const { edits } = ToolInputClear.make({ minReclaimTokens: 0 }).apply(StrategyInput.make(view, measurer, 0))
    expect(edits).toHaveLength(2)
    const [json, raw] = edits.map((edit) =>
      edit.op === "replace" ? (edit.message.content as ReadonlyArray<Message.ToolCallPart>)[0]!.input : undefined
    )
    expect(JSON.parse(json as string)).toEqual({
      path: "a.ts",
      content: "[Old tool input cleared — 2000 characters; full input in transcript entry m2]"
    })
    expect(raw).toBe("[Old tool input cleared — 2000 characters; full input in transcript entry m4]")
  })

  it("runs after the hard clear in the deterministic tiers", () => {
    const view = StrategyInput.frozenView(session(1, 10))
    const policy = StrategyInput.policy(200_000)
    const names = Tiers.deterministic(policy, StrategyInput.budget(policy, measurer, view)).map((s) => s.name)
    expect(names.indexOf(ToolInputClear.NAME)).toBe(names.indexOf("toolTrim.clear") + 1)
  })
})
