import { ContextEngine, type Entry, type Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import * as Nudges from "../src/Nudges.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const policy = Cases.policySync({ contextWindow: 40_000, maxOutputTokens: 2_000 }, "test")
const toEntries = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))
/** `tasks` finished tasks of ~`tokens` tokens each (one file read), then a new request. */
const session = (tasks: number, chars: number): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "agent" }]
  for (let task = 0; task < tasks; task++)
    messages.push(
      { role: "user", content: `Task ${task}: read src/file${task}.ts` },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: `c${task}`, toolName: "read", input: { path: `src/file${task}.ts` } }
        ]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `c${task}`,
            toolName: "read",
            output: { type: "text", value: `// file ${task}\n${"word ".repeat(chars / 5)}` }
          }
        ]
      },
      { role: "assistant", content: `File ${task} read.` }
    )
  messages.push({ role: "user", content: "Next task: summarize." })
  return messages
}
const noteOf = (messages: ReadonlyArray<Message.Message>) => {
  const last = messages.at(-1)!
  return last.role === "user" && String(last.content).startsWith("[context note]") ? String(last.content) : undefined
}

describe("Nudges", () => {
  it("adds the guideline after the system prefix and is otherwise silent below 70%", async () => {
    const engine = ContextEngine.toAsync(Nudges.wrap(TieredSummaryEngine.make(), { finishedStretchTokens: 1e9 }))
    const assembled = await engine.assembleContext({ entries: toEntries(session(1, 2_000)), policy })
    expect(assembled.messages[1]).toEqual({ role: "system", content: Nudges.GUIDELINE })
    expect(noteOf(assembled.messages)).toBeUndefined()
  })

  it("notes 70% once, naming the biggest finished stretches by entry id; rearms only after falling 10 points below", async () => {
    const engine = ContextEngine.toAsync(Nudges.wrap(TieredSummaryEngine.make(), { finishedStretchTokens: 1e9 }))
    const full = toEntries(session(4, 36_500)) // ~30K tokens of 40K: over 70%, under 80%
    const first = await engine.assembleContext({ entries: full, policy })
    const share = first.measurement.inputTokens / policy.contextWindowTokens
    expect(share).toBeGreaterThan(0.7)
    expect(share).toBeLessThan(0.8)
    const note = noteOf(first.messages)
    expect(note).toContain("% full")
    expect(note).toMatch(/e1 … e4 \(4 messages, ~\d+ tokens\)/)
    expect(noteOf((await engine.assembleContext({ entries: full, policy })).messages)).toBeUndefined()
    // 65%: not rearmed (needs < 60%); 50%: rearmed; back over 70%: notes again.
    const shareOf = (assembled: { readonly measurement: { readonly inputTokens: number } }) =>
      assembled.measurement.inputTokens / policy.contextWindowTokens
    const at65 = await engine.assembleContext({ entries: toEntries(session(4, 31_500)), policy })
    expect(shareOf(at65)).toBeGreaterThan(0.6)
    expect(shareOf(at65)).toBeLessThan(0.7)
    expect(noteOf((await engine.assembleContext({ entries: full, policy })).messages)).toBeUndefined()
    const at50 = await engine.assembleContext({ entries: toEntries(session(4, 24_000)), policy })
    expect(shareOf(at50)).toBeLessThan(0.6)
    expect(noteOf((await engine.assembleContext({ entries: full, policy })).messages)).toContain("% full")
  })

  it("milestones: a large finished stretch, a completed todo, a new request with finished requests in context", async () => {
    const engine = ContextEngine.toAsync(
      Nudges.wrap(TieredSummaryEngine.make(), { guideline: false, finishedStretchTokens: 3_000 })
    )
    const messages = session(2, 16_000)
    const first = noteOf((await engine.assembleContext({ entries: toEntries(messages), policy })).messages)
    expect(first).toContain('context_rewind {"from":"e1","to":"e4"}')
    const todo: Array<Message.Message> = [
      ...messages,
      {
        role: "assistant",
        content: [
          {
            type: "tool-call",
            toolCallId: "t1",
            toolName: "todo_write",
            input: { todos: [{ content: "read files", status: "completed" }] }
          }
        ]
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "t1", toolName: "todo_write", output: { type: "text", value: "ok" } }
        ]
      }
    ]
    const second = noteOf((await engine.assembleContext({ entries: toEntries(todo), policy })).messages)
    expect(second).toContain('Todo completed: "read files"')
    expect(second).not.toContain("stretch is large")
    const next = [
      ...todo,
      { role: "assistant", content: "Done." } as Message.Message,
      { role: "user", content: "Another task." } as Message.Message
    ]
    expect(noteOf((await engine.assembleContext({ entries: toEntries(next), policy })).messages)).toContain(
      "A new request started"
    )
  })
})
