/**
 * Shared cases of the handoff kind (../shared/cases): C21 — shell-mode output
 * is tool output, not the user's words; C17 — degenerate summaries are refused.
 */
import { Checkpoint, CheckpointValidation, DegenerateSummary, type Message, Turns } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { withIds } from "./support.ts"

interface C21 {
  readonly messages: Array<Message.Message>
  readonly claudeCode: { readonly messages: Array<Message.Message> }
  readonly shellOutputCanaries: Array<string>
  readonly userAsks: { readonly pi: Array<string>; readonly claudeCode: Array<string> }
}

const count = (text: string) => Math.ceil(text.length / 4)

describe("C21: shell-mode output is not the user's words", () => {
  const c21 = loadCase<C21>("C21")
  for (const [name, messages, asks] of [
    ["pi", c21.messages, c21.userAsks.pi],
    ["claude code", c21.claudeCode.messages, c21.userAsks.claudeCode]
  ] as const) {
    it(`${name}: no shell-output phrase becomes the goal, an ask or a constraint; the latest ask is the user's`, () => {
      const covered = withIds(messages.filter((message) => message.role !== "system"))
      const content = ExtractiveSummarizer.summarizeSync({ covered, maxTokens: 2_000, countTokens: count })
      const spoken = [content.goal, ...content.pendingUserAsks, ...content.constraints].join("\n").toLowerCase()
      for (const canary of c21.shellOutputCanaries) expect(spoken).not.toContain(canary.toLowerCase())
      expect(CheckpointValidation.latestUserAsk(covered.map((item) => item.message))?.text).toBe(asks.at(-1))
    })
  }

  it("the final shell output is not pinned as the latest user message (it can be clamped)", () => {
    const items = c21.messages.map((message) => ({ message }))
    const latest = Turns.latestUserIndex(items)
    expect(c21.messages[latest]).toMatchObject({ role: "user" })
    expect(JSON.stringify(c21.messages[latest]!.content)).toContain(c21.userAsks.pi.at(-1)!)
  })
})

describe("C17: degenerate summaries are refused, at any length", () => {
  it.each([
    ["empty", ""],
    ["whitespace", "   \n  "],
    [
      "repeated line",
      "## Summary\n- The user wants a fix.\n- The user wants a fix.\n- The user wants a fix.\n- The user wants a fix."
    ],
    ["stub", "Summary unavailable due to size limits."],
    ["tool call", '{"name": "read_file", "arguments": {"path": "src/a.ts"}}']
  ])("%s text", (_, text) => {
    expect(DegenerateSummary.ofText(text)).toBeDefined()
  })

  it("structured forms: empty goal, stub goal, 500 identical next steps", () => {
    const base = Checkpoint.emptyContent()
    expect(DegenerateSummary.ofContent(base)).toBe("empty")
    expect(DegenerateSummary.ofContent({ ...base, goal: "Summary unavailable" })).toBe("stub")
    expect(
      DegenerateSummary.ofContent({
        ...base,
        goal: "Fix the test",
        nextSteps: Array.from({ length: 500 }, () => "Fix it")
      })
    ).toBe("repetitive")
  })

  it("a real handoff is not degenerate", () => {
    expect(
      DegenerateSummary.ofText("## Goal\nFix the flaky retry test\n## Done\n- switched to fake timers")
    ).toBeUndefined()
  })
})
