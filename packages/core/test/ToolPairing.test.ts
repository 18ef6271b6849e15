import { ContextView, type Message, ToolPairing, Turns } from "@context-engine/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { loadCase } from "./support/shared.ts"

type M = Message.Message

const call = (id: string, name = "read"): Message.ToolCallPart => ({
  type: "tool-call",
  toolCallId: id,
  toolName: name,
  input: { path: `/src/${id}.ts` }
})
const result = (id: string, name = "read"): Message.ToolResultPart => ({
  type: "tool-result",
  toolCallId: id,
  toolName: name,
  output: { type: "text", value: `contents of ${id}` }
})

/**
 * Conversations with parallel batches whose results may be missing, split
 * across several tool messages, or orphaned.
 */
const conversation = fc
  .array(
    fc.record({
      user: fc.string({ minLength: 1, maxLength: 20 }),
      batches: fc.array(
        fc.record({
          calls: fc.integer({ min: 1, max: 4 }),
          answered: fc.array(fc.boolean(), { minLength: 4, maxLength: 4 }),
          splitResults: fc.boolean(),
          orphan: fc.boolean(),
          // deliver the results late: after the next user message / assistant message (Claude Code records)
          displaced: fc.constantFrom("no", "no", "after-user", "after-assistant")
        }),
        { maxLength: 3 }
      )
    }),
    { minLength: 1, maxLength: 5 }
  )
  .map((turns) => {
    const messages: Array<M> = [{ role: "system", content: "system prompt" }]
    let counter = 0
    for (const turn of turns) {
      messages.push({ role: "user", content: turn.user })
      for (const batch of turn.batches) {
        const ids = Array.from({ length: batch.calls }, () => `c${counter++}`)
        messages.push({ role: "assistant", content: [{ type: "text", text: "working" }, ...ids.map((id) => call(id))] })
        const answered = ids.filter((_, index) => batch.answered[index])
        const results = answered.map((id) => result(id))
        if (batch.orphan) results.push(result(`orphan${counter++}`))
        if (results.length === 0) continue
        if (batch.displaced === "after-user") messages.push({ role: "user", content: "hurry up" })
        if (batch.displaced === "after-assistant") messages.push({ role: "assistant", content: "still waiting" })
        if (batch.splitResults) for (const part of results) messages.push({ role: "tool", content: [part] })
        else messages.push({ role: "tool", content: results })
      }
    }
    return messages
  })

/** Checked independently of ToolPairing: every result sits in the tool run right after its call. */
const expectAdjacent = (messages: ReadonlyArray<M>) => {
  for (let index = 0; index < messages.length; index++) {
    const calls = toolCallIdsOf(messages[index]!)
    if (calls.length === 0) continue
    const answered = new Set<string>()
    for (let after = index + 1; after < messages.length && messages[after]!.role === "tool"; after++)
      for (const id of resultIdsOf(messages[after]!)) answered.add(id)
    expect(new Set(calls)).toEqual(answered)
  }
}

describe("ToolPairing.analyze", () => {
  it("reports orphan results, unanswered calls and duplicate ids with entry ids", () => {
    const view = ContextView.fromMessages([
      { role: "user", content: "go" },
      { role: "tool", content: [result("ghost")] },
      { role: "assistant", content: [call("a"), call("b")] },
      { role: "tool", content: [result("a")] },
      { role: "assistant", content: [call("a")] },
      { role: "tool", content: [result("a")] }
    ])
    const report = ToolPairing.analyze(view.items)
    expect(report.problems).toContainEqual({ kind: "orphan-result", entryId: "m1", toolCallId: "ghost" })
    expect(report.problems).toContainEqual({
      kind: "call-without-result",
      entryId: "m2",
      toolCallId: "b",
      toolName: "read"
    })
    expect(report.problems).toContainEqual({ kind: "duplicate-call-id", entryIds: ["m2", "m4"], toolCallId: "a" })
    expect(report.toolCalls).toBe(3)
    expect(report.toolResults).toBe(3)
  })

  it("finds nothing wrong in a well-paired parallel batch (shared case C01)", () => {
    const c01 = loadCase<{ messages: Array<M> }>("C01")
    const report = ToolPairing.analyze(ContextView.fromMessages(c01.messages).items)
    expect(report.problems).toEqual([])
    expect(report.toolCalls).toBeGreaterThanOrEqual(7)
  })
})

describe("ToolPairing.repairEdits", () => {
  it("moves a result delivered after a user message back next to its call, leaving the user message verbatim", () => {
    const view = ContextView.fromMessages([
      { role: "user", content: "read both" },
      { role: "assistant", content: [call("x1"), call("x2")] },
      { role: "tool", content: [result("x1")] },
      { role: "user", content: "hurry" },
      { role: "tool", content: [result("x2")] },
      { role: "assistant", content: "done" }
    ])
    expect(ToolPairing.analyze(view.items).problems).toEqual([
      { kind: "result-not-adjacent", entryId: "m4", toolCallId: "x2", callEntryId: "m1" }
    ])
    const repaired = ContextView.applyEdits(view, ToolPairing.repairEdits(view))
    expect(repaired.items.map((item) => item.message.role)).toEqual([
      "user",
      "assistant",
      "tool",
      "tool",
      "user",
      "assistant"
    ])
    expectAdjacent(repaired.items.map((item) => item.message))
    // the moved result is the original one, not a synthesized placeholder
    expect(JSON.stringify(repaired.items[3]!.message)).toContain("contents of x2")
    expect(repaired.items[4]!.message).toBe(view.items[3]!.message)
    expect(ToolPairing.repairEdits(repaired)).toEqual([])
  })

  it("orders calls made in consecutive assistant records (one record per block) with their own results", () => {
    const view = ContextView.fromMessages([
      { role: "user", content: "go" },
      { role: "assistant", content: [call("a")] },
      { role: "assistant", content: [call("b")] },
      { role: "tool", content: [result("a")] },
      { role: "tool", content: [result("b")] }
    ])
    expect(ToolPairing.analyze(view.items).problems.map((problem) => problem.kind)).toEqual(["result-not-adjacent"])
    const repaired = ContextView.applyEdits(view, ToolPairing.repairEdits(view))
    expectAdjacent(repaired.items.map((item) => item.message))
    expect(ToolPairing.analyze(repaired.items).problems).toEqual([])
  })

  it("synthesizes exactly one interrupted result for C02's unanswered call, before the next user message", () => {
    const c02 = loadCase<{ messages: Array<M> }>("C02")
    const view = ContextView.fromMessages(c02.messages)
    const repaired = ContextView.applyEdits(view, ToolPairing.repairEdits(view))
    const results = repaired.items.flatMap((item) =>
      typeof item.message.content === "string"
        ? []
        : (item.message.content as ReadonlyArray<Message.ContentPart>).filter(
            (part) => part.type === "tool-result" && part.toolCallId === "call_mig"
          )
    )
    expect(results).toHaveLength(1)
    expect(JSON.stringify(results[0])).toContain("interrupted")
    const resultIndex = repaired.items.findIndex((item) => item.source === "synthetic")
    expect(repaired.items[resultIndex - 1]?.message.role).toBe("assistant")
    expect(repaired.items[resultIndex + 1]?.message.role).toBe("user")
    // the input view is untouched
    expect(view.items).toHaveLength(c02.messages.length)
    // repairing the repaired view changes nothing
    expect(ToolPairing.repairEdits(repaired)).toEqual([])
  })

  it("always yields a valid, idempotent pairing and never touches system or user messages", () => {
    fc.assert(
      fc.property(conversation, (messages) => {
        const view = ContextView.fromMessages(messages)
        const repaired = ContextView.applyEdits(view, ToolPairing.repairEdits(view))
        expect(ToolPairing.analyze(repaired.items).problems.filter((p) => p.kind !== "duplicate-call-id")).toEqual([])
        expect(ToolPairing.repairEdits(repaired)).toEqual([])
        expectAdjacent(repaired.items.map((item) => item.message))
        const kept = (role: string, v: typeof view) => v.items.filter((item) => item.message.role === role)
        expect(kept("user", repaired).map((item) => item.message)).toEqual(kept("user", view).map((i) => i.message))
        expect(kept("system", repaired).map((item) => item.message)).toEqual(kept("system", view).map((i) => i.message))
        // every synthesized result sits in the unit of its call
        for (const span of Turns.units(repaired.items)) {
          const inSpan = repaired.items.slice(span.start, span.end)
          const calls = new Set(
            inSpan.flatMap((item) => (item.message.role === "assistant" ? toolCallIdsOf(item.message) : []))
          )
          for (const item of inSpan) {
            if (item.source !== "synthetic") continue
            for (const id of resultIdsOf(item.message)) expect(calls.has(id)).toBe(true)
          }
        }
      })
    )
  })
})

const toolCallIdsOf = (message: M): Array<string> =>
  typeof message.content === "string"
    ? []
    : (message.content as ReadonlyArray<Message.ContentPart>).flatMap((part) =>
        part.type === "tool-call" ? [part.toolCallId] : []
      )
const resultIdsOf = (message: M): Array<string> =>
  typeof message.content === "string"
    ? []
    : (message.content as ReadonlyArray<Message.ContentPart>).flatMap((part) =>
        part.type === "tool-result" ? [part.toolCallId] : []
      )

describe("Turns", () => {
  it("keeps C01's seven-call batch and its results in one unit", () => {
    const c01 = loadCase<{ messages: Array<M> }>("C01")
    const items = ContextView.fromMessages(c01.messages).items
    const batchIndex = items.findIndex((item) => toolCallIdsOf(item.message).length >= 7)
    expect(batchIndex).toBeGreaterThan(-1)
    const span = Turns.units(items).find((unit) => unit.start === batchIndex)
    expect(span).toBeDefined()
    const answered = items.slice(batchIndex + 1, span!.end).flatMap((item) => resultIdsOf(item.message))
    expect(new Set(answered)).toEqual(new Set(toolCallIdsOf(items[batchIndex]!.message)))
    expect(Turns.legalCutIndices(items)).not.toContain(batchIndex + 1)
  })

  it("partitions any conversation: units and turns cover every item once, turns start at user messages", () => {
    fc.assert(
      fc.property(conversation, (messages) => {
        const items = ContextView.fromMessages(messages).items
        for (const spans of [Turns.units(items), Turns.turns(items)]) {
          expect(spans[0]?.start).toBe(0)
          expect(spans.at(-1)?.end).toBe(items.length)
          for (let index = 1; index < spans.length; index++) expect(spans[index]!.start).toBe(spans[index - 1]!.end)
        }
        for (const turn of Turns.turns(items).slice(1)) expect(items[turn.start]!.message.role).toBe("user")
        expect(Turns.lastTurnStart(items)).toBe(Turns.turns(items).at(-1)?.start ?? 0)
        // no legal cut index lands on a tool message answering an earlier call in the same batch
        for (const index of Turns.legalCutIndices(items)) {
          if (index === 0) continue
          const message = items[index]!.message
          if (message.role !== "tool") continue
          const previous = Turns.units(items).find((unit) => unit.end === index)!
          const calls = new Set(toolCallIdsOf(items[previous.start]!.message))
          for (const id of resultIdsOf(message)) expect(calls.has(id)).toBe(false)
        }
        const latest = Turns.latestUserIndex(items)
        expect(items[latest]?.message.role).toBe("user")
        // only user-role data (slash commands, shell output, pasted logs) may follow the user's latest words
        expect(items.slice(latest + 1).some((item) => Turns.isUserWordsItem(item))).toBe(false)
      })
    )
  })
})
