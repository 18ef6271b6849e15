import type { ContextView, Message } from "@context-engine/core"
import { ArrayLineage, Measurer, Tokenizers, UsageScale } from "@context-engine/core"
import { StrategyInput } from "@context-engine/core/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { countReads } from "../../core/test/support/readCounter.ts"
import { IncrementalNormalization, Pipeline } from "../src/index.ts"

const measurer = Measurer.make(Tokenizers.get("o200k_base"))
const plainMeasurer = measurer
const policy = StrategyInput.policy(1_000_000)

// Ids from a small pool, so calls reuse ids, results arrive late, twice, or for no call at all.
const callId = fc.oneof(
  fc.constantFrom("a", "a~2"),
  fc.integer({ min: 0, max: 15 }).map((n) => `c${n}`)
)
const text = fc.constantFrom("", " ", "ok", "read the file", "!ls -la", "done")
const reasoning: Message.ContentPart = { type: "reasoning", text: "thinking" }

const message: fc.Arbitrary<Message.Message> = fc.oneof(
  { weight: 3, arbitrary: text.map((value): Message.Message => ({ role: "user", content: value })) },
  { weight: 1, arbitrary: text.map((value): Message.Message => ({ role: "system", content: value || "sys" })) },
  {
    weight: 5,
    arbitrary: fc.record({ text, calls: fc.array(callId, { maxLength: 3 }), thought: fc.boolean() }).map(
      ({ text: value, calls, thought }): Message.Message => ({
        role: "assistant",
        content: [
          ...(thought ? [reasoning] : []),
          ...(value === "" && (calls.length > 0 || thought) ? [] : [{ type: "text" as const, text: value }]),
          ...calls.map((id) => ({ type: "tool-call" as const, toolCallId: id, toolName: "read", input: { id } }))
        ]
      })
    )
  },
  {
    weight: 5,
    arbitrary: fc.array(callId, { minLength: 1, maxLength: 2 }).map(
      (ids): Message.Message => ({
        role: "tool",
        content: ids.map((id) => ({
          type: "tool-result" as const,
          toolCallId: id,
          toolName: "read",
          output: { type: "text" as const, value: `result ${id}` }
        }))
      })
    )
  }
)

/** A view as the engine derives it each step: fresh item objects over the same message objects. */
const viewOf = (messages: ReadonlyArray<Message.Message>, ids: ReadonlyArray<string>): ContextView.ContextView => ({
  items: messages.map((item, index) => ({ entryId: ids[index]!, message: item, source: "transcript", editedBy: [] })),
  tools: []
})

const cold = (view: ContextView.ContextView, measurer: Measurer.Measurer = plainMeasurer) => {
  const budget = StrategyInput.budget(policy, measurer, view)
  const before = measurer.measure(view, { budget })
  const result = Pipeline.run({
    view,
    strategies: [],
    targetTokens: Number.POSITIVE_INFINITY,
    budget,
    measurer,
    policy,
    measurement: before
  })
  return { before, view: result.view, after: result.after }
}

const plain = (view: ContextView.ContextView) =>
  view.items.map(({ entryId, message: item, source, editedBy }) => ({ entryId, message: item, source, editedBy }))

describe("IncrementalNormalization", () => {
  it("gives the same view and measurement as a cold normalization at every step, also after earlier messages are rewritten", () => {
    fc.assert(
      fc.property(
        fc.array(message, { minLength: 1, maxLength: 40 }),
        fc.array(
          fc.record({
            grow: fc.integer({ min: 0, max: 6 }),
            rewrite: fc.option(fc.record({ at: fc.nat(), to: message }), { nil: undefined }),
            // Usage arrived with this ratio: the engine's usage-scaled measurer, a new object (none: the local one).
            ratio: fc.option(fc.double({ min: 0.5, max: 4, noNaN: true }), { nil: undefined })
          }),
          { minLength: 1, maxLength: 12 }
        ),
        // The request path's views: the same item objects, each step's array recorded as extending the last
        // (ArrayLineage), so the frozen prefix is matched without a compare; else fresh item objects every step.
        fc.boolean(),
        (all, steps, recorded) => {
          const normalize = IncrementalNormalization.make()
          const messages = all.slice()
          const ids = all.map((_, index) => `e${index}`)
          let length = 0
          let items: ReadonlyArray<ContextView.ViewItem> = []
          let out: ReadonlyArray<ContextView.ViewItem> = []
          for (const { grow, rewrite, ratio } of steps) {
            length = Math.min(messages.length, length + grow)
            if (length === 0) continue
            // An app rewrote an earlier message: a new message under the same entry id.
            if (rewrite !== undefined) messages[rewrite.at % length] = rewrite.to
            const fresh = viewOf(messages.slice(0, length), ids)
            const extended = rewrite === undefined && items.length <= length
            items = !recorded
              ? fresh.items
              : ArrayLineage.extend(extended ? items : [], fresh.items.slice(extended ? items.length : 0))
            const view = { items, tools: [] }
            const stepMeasurer =
              ratio === undefined ? measurer : UsageScale.scaled(measurer, { ratio, lastEntryId: "e0" })
            const expected = cold(view, stepMeasurer)
            const actual = normalize(view, stepMeasurer, expected.before)
            expect(plain(actual.view)).toEqual(plain(expected.view))
            expect(actual.after).toEqual(expected.after)
            // An output recorded as extending the last one holds its very items first.
            if (ArrayLineage.isExtensionOf(actual.view.items, out))
              expect(out.every((item, index) => item === actual.view.items[index])).toBe(true)
            out = actual.view.items
          }
        }
      ),
      { numRuns: 300 }
    )
  })

  it("counts a repaired message after the latest user message at its position when the prefix is frozen", () => {
    const call = (id: string): Message.Message => ({
      role: "assistant",
      content: [reasoning, { type: "tool-call", toolCallId: id, toolName: "read", input: {} }]
    })
    const result = (id: string): Message.Message => ({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: "x" } }]
    })
    // The second call of "a" is renamed (a replaced message with reasoning) inside the turn in progress.
    const messages = [
      { role: "user", content: "go" } as Message.Message,
      call("a"),
      result("a"),
      call("a"),
      result("a")
    ]
    messages.push(call("b"), result("b"), call("c"), result("c"), call("d"), result("d"))
    const ids = messages.map((_, index) => `e${index}`)
    const normalize = IncrementalNormalization.make()
    for (const length of [5, 7, 9, 11]) {
      const view = viewOf(messages.slice(0, length), ids)
      const expected = cold(view)
      expect(normalize(view, measurer, expected.before).after).toEqual(expected.after)
    }
    expect(normalize.frozenLength()).toBeGreaterThan(4)
  })

  it("normalizes only the newest items of a growing session (the prefix stays frozen)", () => {
    // A long session of answered tool calls: each step appends an assistant call and its result.
    const messages: Array<Message.Message> = [{ role: "user", content: "start" }]
    for (let index = 0; index < 400; index++) {
      const id = `call-${index}`
      messages.push(
        { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: {} }] },
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: "x" } }]
        }
      )
    }
    // An orphan result early on: every step's view needs a repair there.
    messages.splice(1, 0, {
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "gone", toolName: "read", output: { type: "text", value: "y" } }]
    })
    const ids = messages.map((_, index) => `e${index}`)
    const normalize = IncrementalNormalization.make()
    for (let length = 200; length <= messages.length; length += 2) {
      const view = viewOf(messages.slice(0, length), ids)
      const expected = cold(view)
      const actual = normalize(view, measurer, expected.before)
      expect(plain(actual.view)).toEqual(plain(expected.view))
      // Only the last step's assistant call and its result are normalized anew.
      expect(normalize.frozenLength()).toBeGreaterThanOrEqual(length - 2)
    }
  })

  it("keeps the frozen prefix when each step brings a new measurer (the engine's usage-scaled one), counting with it", () => {
    // An orphan result early on (a repaired item in the frozen prefix, so its count changes with the scale), then
    // answered tool calls; every message's content is read through a counter.
    let reads = 0
    const counted = (message: Message.Message): Message.Message => {
      const { content, ...rest } = message
      return Object.defineProperty({ ...rest }, "content", {
        enumerable: true,
        get: () => {
          reads++
          return content
        }
      }) as Message.Message
    }
    const messages: Array<Message.Message> = [
      { role: "user", content: "start" },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "gone", toolName: "read", output: { type: "text", value: "y" } }]
      }
    ]
    for (let index = 0; index < 200; index++) {
      const id = `call-${index}`
      messages.push(
        { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: {} }] },
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: "x" } }]
        }
      )
    }
    const all = messages.map(counted)
    const ids = all.map((_, index) => `e${index}`)
    const normalize = IncrementalNormalization.make()
    // The local measurer, noting which messages it is asked to count.
    const asked = new Set<Message.Message>()
    const local: Measurer.CachedMeasurer = {
      ...measurer,
      countMessage: (message, source, position) => {
        asked.add(message)
        return measurer.countMessage(message, source, position)
      }
    }
    for (let length = 300, step = 0; length <= all.length; length += 2, step++) {
      // A new scaled measurer object every step, as the engine builds one whenever usage arrives.
      const scaled = UsageScale.scaled(local, { ratio: 1.05 + step / 100, lastEntryId: "e0" })
      const view = viewOf(all.slice(0, length), ids)
      const expected = cold(view, scaled)
      reads = 0
      asked.clear()
      const actual = normalize(view, scaled, expected.before)
      expect(plain(actual.view)).toEqual(plain(expected.view))
      expect(actual.after).toEqual(expected.after)
      // After the first step the frozen prefix is not normalized again: fewer content reads than messages (a cold
      // normalization reads every message's content many times over, ~10,000 reads here) — and its repaired orphan
      // result is counted by the local measurer once per reasoning position (frozen at step 0 as prior, needed as
      // current at step 1: the user's message is before it), then only rescaled under each new ratio.
      if (step > 0) expect(reads).toBeLessThan(length)
      if (step > 1) expect(asked.has(all[1]!)).toBe(false)
    }
  })

  it("a step whose view is recorded as extending the last (ArrayLineage) reads none of the frozen items, and its output extends the last output", () => {
    // Answered tool calls after a user message, with an orphan result early on (the output differs from the view).
    const messages: Array<Message.Message> = [
      { role: "user", content: "start" },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "gone", toolName: "read", output: { type: "text", value: "y" } }]
      }
    ]
    for (let index = 0; index < 100; index++) {
      const id = `call-${index}`
      messages.push(
        { role: "assistant", content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: {} }] },
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: "x" } }]
        }
      )
    }
    const all = viewOf(
      messages,
      messages.map((_, index) => `e${index}`)
    ).items
    const normalize = IncrementalNormalization.make()
    let items = ArrayLineage.extend([], all.slice(0, 150))
    let out = normalize({ items, tools: [] }, measurer, cold({ items, tools: [] }).before).view.items
    for (let length = 152; length <= all.length; length += 2) {
      const next = ArrayLineage.extend(items, all.slice(items.length, length))
      const expected = cold({ items: next, tools: [] })
      const frozen = normalize.frozenLength()
      const reads = countReads(next, frozen)
      const actual = normalize({ items: next, tools: [] }, measurer, expected.before)
      // Only the latest user message, in the frozen part here: whether it is protected, and which counts are prior.
      expect(reads.count).toBeLessThanOrEqual(2)
      expect(plain(actual.view)).toEqual(plain(expected.view))
      expect(ArrayLineage.isExtensionOf(actual.view.items, out)).toBe(true)
      items = next
      out = actual.view.items
    }
  })
})
