/**
 * Old user-role data — the observations text-action agents send as user messages (SWE-agent), shell output,
 * command records — is reduced like old tool output; the user's own words never are.
 */
import type { Message } from "@context-engine/core"
import { ContextView, Turns, UserSpeech } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { SlidingWindow, ToolTrim, UserData } from "../src/index.ts"
import { filler, targetOf } from "./support/views.ts"

const measurer = FakeMeasurer.make()

const TASK = "We're currently solving the following issue within our repository. Please fix the pixel data check."
const CORRECTION = "Keep the public function names as they are, do not rename anything in the handler module."

/** A SWE-agent-like run: the task, then `n` steps of a text action and its observation as a user message. */
const sweRun = (n: number, chars: number, correctionAt = -1): Array<Message.Message> => [
  { role: "system", content: "SETTING: you are an autonomous programmer." },
  { role: "user", content: TASK },
  ...Array.from(
    { length: n },
    (_, index): Array<Message.Message> => [
      { role: "assistant", content: `Let me look at file ${index}.\n\`\`\`\nopen f${index}.py\n\`\`\`` },
      {
        role: "user",
        content:
          index === correctionAt
            ? CORRECTION
            : `[File: /repo/f${index}.py (300 lines total)]\nHEAD${index} ${filler(chars, index + 1)} TAIL${index}`
      }
    ]
  ).flat(),
  { role: "assistant", content: "Now I will edit the handler." }
]

const textOf = (message: Message.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => (part.type === "text" ? part.text : "")).join("")

describe("ToolTrim on user-role observations", () => {
  it("clears old observations with a placeholder naming the kind, size and entry; never the latest ask", () => {
    const messages = sweRun(8, 2_000)
    const view = StrategyInput.frozenView(messages)
    const { edits, note } = ToolTrim.clear({ minReclaimTokens: 0 }).apply(StrategyInput.make(view, measurer, 0))
    // 8 observations (m3, m5, … m17), the newest 3 protected (the same rule as tool results)
    expect(edits.map(targetOf)).toEqual(["m3", "m5", "m7", "m9", "m11"])
    expect(note).toBe("0 tool result(s), 5 user-role output(s)")
    for (const edit of edits) {
      if (edit.op !== "replace") throw new Error("expected replace")
      const original = textOf(messages[Number(edit.entryId.slice(1))]!)
      expect(textOf(edit.message)).toBe(
        `[Old observation cleared — user-role message of ${original.length} characters; full text in transcript entry ${edit.entryId}]`
      )
      expect(edit.message.role).toBe("user")
    }
    const after = ContextView.applyEdits(view, edits)
    // A cleared observation stays data: the latest user message is still the task, and clearing again does nothing.
    expect(Turns.latestUserIndex(after.items)).toBe(1)
    expect(UserSpeech.classify(textOf(after.items[3]!.message))).toBe("observation")
    expect(UserSpeech.isSpeech(after.items[3]!.message)).toBe(false)
    expect(ToolTrim.clear({ minReclaimTokens: 0 }).apply(StrategyInput.make(after, measurer, 0)).edits).toEqual([])
  })

  it("soft-trims a long old observation to head + tail with a marker naming the entry", () => {
    const view = StrategyInput.frozenView(sweRun(6, 20_000))
    const { edits } = ToolTrim.soft({ minReclaimTokens: 0 }).apply(StrategyInput.make(view, measurer, 0))
    expect(edits.map(targetOf)).toEqual(["m3", "m5", "m7"])
    for (const edit of edits) {
      if (edit.op !== "replace") throw new Error("expected replace")
      const index = (Number(edit.entryId.slice(1)) - 3) / 2
      const text = textOf(edit.message)
      expect(text.startsWith(`[File: /repo/f${index}.py`)).toBe(true)
      expect(text.endsWith(`TAIL${index}`)).toBe(true)
      expect(text).toMatch(
        new RegExp(`trimmed: \\d+ of \\d+ characters .* full text in transcript entry ${edit.entryId} `)
      )
      expect(text.length).toBeLessThan(3_300)
    }
  })

  it("never touches the user's own words, older ones included", () => {
    // the correction (m7) is the latest user words; the task (m1) is older speech: neither is data
    const view = StrategyInput.frozenView(sweRun(8, 2_000, 2))
    expect(Turns.latestUserIndex(view.items)).toBe(7)
    const input = StrategyInput.make(view, measurer, 0)
    const cleared = ToolTrim.clear({ minReclaimTokens: 0, keepRecentToolResults: 0, keepLastAssistants: 0 }).apply(
      input
    )
    const edited = cleared.edits.map(targetOf)
    expect(edited).not.toContain("m1")
    // every observation, before and after the correction, is cleared
    expect(edited).toEqual(["m3", "m5", "m9", "m11", "m13", "m15", "m17"])
  })
})

describe("UserData.collector reads the user's words as the latest-user pin does (Turns.isUserWordsItem)", () => {
  it("an edited user-role message is data whatever its edited text reads as; unedited words never are", () => {
    // The collector read the edited text (Turns.isUserWords on the message) while the pin reads the item: an observation
    // clamped to a prose-like head and tail was the user's words to ToolTrim and data to the pin.
    const view = StrategyInput.frozenView(sweRun(4, 400, 2))
    const prose = "I opened the handler and saw that the check reads the attribute before it knows the data type."
    const items = view.items.map((item) =>
      item.entryId === "m5"
        ? { ...item, message: { role: "user" as const, content: prose }, editedBy: ["clamp"] }
        : item
    )
    expect(UserSpeech.isSpeech(items[5]!.message)).toBe(true)
    const collect = UserData.collector(items)
    const collected = items.flatMap((_, index) => collect(index))
    expect(collected.map((part) => part.entryId)).toEqual(["m3", "m5", "m9"])
    // one rule: what the collector calls data is exactly the user-role messages the pin does not read as words
    for (const [index, item] of items.entries())
      if (item.message.role === "user")
        expect(collected.some((part) => part.itemIndex === index)).toBe(!Turns.isUserWordsItem(item))
  })
})

describe("SlidingWindow with the latest user message in a dropped turn", () => {
  it("does not count the kept latest user message as freed, so it drops enough turns", () => {
    // Turns: [system] [task, a] [obs, a] [obs, a] … — the task is the latest user words and is never dropped.
    const view = StrategyInput.frozenView(sweRun(4, 400))
    const input = StrategyInput.make(view, measurer, 0)
    const tokens = (index: number) => measurer.messageTokens(view.items[index]!.message, "transcript", "prior")
    // Needs more than the first turn's assistant message but less than the task and that message together.
    const needed = tokens(2) + Math.floor(tokens(1) / 2)
    const { edits } = SlidingWindow.slidingWindow.apply({
      ...input,
      targetTokens: input.measurement.inputTokens - needed
    })
    expect(edits.map(targetOf)).toEqual(["m2", "m3", "m4"])
  })
})
