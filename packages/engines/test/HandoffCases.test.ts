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

interface C17Reply {
  readonly id: string
  readonly content: ReadonlyArray<{ readonly type: string; readonly text?: string | Repeat }>
  readonly object: Record<string, unknown> | null
}
interface Repeat {
  readonly repeat: string
  readonly times: number
}

const isRepeat = (value: unknown): value is Repeat =>
  typeof value === "object" && value !== null && "repeat" in value && "times" in value

/** The case's compact form `{ repeat, times }`: in a text, the text repeated; in a list field, that many items. */
const textOf = (text: string | Repeat | undefined): string =>
  text === undefined ? "" : isRepeat(text) ? text.repeat.repeat(text.times) : text
const contentOf = (object: Record<string, unknown>): Checkpoint.CheckpointContent =>
  ({
    ...Checkpoint.emptyContent(),
    ...Object.fromEntries(
      Object.entries(object).map(([key, value]) => [
        key,
        isRepeat(value) ? Array.from({ length: value.times }, () => value.repeat) : value
      ])
    )
  }) as Checkpoint.CheckpointContent

describe("C17: degenerate summaries are refused, at any length", () => {
  const replies = loadCase<{ summarizerReplies: Array<C17Reply> }>("C17").summarizerReplies

  it("the case lists every degenerate kind", () => {
    expect(replies.map((reply) => reply.id)).toEqual(["empty", "whitespace", "repeated-line", "tool-call", "stub"])
  })

  it.each(replies.map((reply): [string, C17Reply] => [reply.id, reply]))(
    "C17 %s: the reply's text (and its structured form) is refused",
    (id, reply) => {
      const text = reply.content.map((part) => (part.type === "text" ? textOf(part.text) : "")).join("")
      // A tool call instead of a summary is refused where the answer is read (provider-adapters' C17 test).
      if (id === "tool-call") expect(reply.content.some((part) => part.type === "tool-call")).toBe(true)
      else expect(DegenerateSummary.ofText(text), text.slice(0, 80)).toBeDefined()
      if (reply.object) expect(DegenerateSummary.ofContent(contentOf(reply.object))).toBeDefined()
    }
  )

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
    expect(DegenerateSummary.ofContent(Checkpoint.emptyContent())).toBe("empty")
    expect(
      DegenerateSummary.ofText("## Goal\nFix the flaky retry test\n## Done\n- switched to fake timers")
    ).toBeUndefined()
  })
})
