import { Errors, type Message } from "@context-engine/core"
import { wrapLanguageModel } from "ai"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import * as MessageMatch from "../src/MessageMatch.ts"
import * as Session from "../src/Session.ts"
import { rewrapped, smallPolicy, windowedModel } from "./support/MockProvider.ts"
import * as TestEngine from "./support/TestEngine.ts"

const { RECENT_MESSAGES, ROTATED_MESSAGES } = MessageMatch

/** `count` messages: a system prompt, then user / assistant turns with a tool call and result every third turn. */
const history = (count: number): Array<Message.Message> =>
  Array.from({ length: count }, (_, index): Message.Message => {
    if (index === 0) return { role: "system", content: "You are a coding agent." }
    if (index % 3 === 1) return { role: "user", content: [{ type: "text", text: `task ${index}` }] }
    if (index % 3 === 2)
      return {
        role: "assistant",
        content: [
          { type: "text", text: `reading ${index}` },
          { type: "tool-call", toolCallId: `call-${index}`, toolName: "read", input: { path: `src/f${index}.ts` } }
        ]
      }
    return {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `call-${index - 1}`,
          toolName: "read",
          output: { type: "text", value: `export const v${index} = ${index}` }
        }
      ]
    }
  })

/** `messages` with the text of the message at `position` changed by one character (same length). */
const editedAt = (messages: ReadonlyArray<Message.Message>, position: number): Array<Message.Message> => {
  const next = rewrapped(messages)
  const message = next[position]!
  if (typeof message.content === "string")
    next[position] = { ...message, content: `${message.content.slice(0, -1)}#` } as Message.Message
  else
    next[position] = {
      ...message,
      content: message.content.map((part) =>
        part.type === "text"
          ? { ...part, text: `${part.text.slice(0, -1)}#` }
          : part.type === "tool-result" && part.output.type === "text"
            ? { ...part, output: { ...part.output, value: `${part.output.value.slice(0, -1)}#` } }
            : part
      )
    } as Message.Message
  return next
}

const matcherOf = (messages: ReadonlyArray<Message.Message>) => {
  const matcher = MessageMatch.make()
  for (const message of messages) matcher.push(message)
  return { matcher, held: (index: number) => messages[index]! }
}

/** Largest history compared in full every step by `"sampled"`. */
const FULL_UP_TO = 1 + RECENT_MESSAGES + ROTATED_MESSAGES

describe("MessageMatch.checkedPrefix", () => {
  it('"sampled" compares a history of up to 1 + RECENT + ROTATED messages in full every step', () => {
    const held = history(FULL_UP_TO)
    const { matcher, held: heldAt } = matcherOf(held)
    for (const position of [1, 100, FULL_UP_TO - RECENT_MESSAGES - 1])
      expect(matcher.checkedPrefix(editedAt(held, position), heldAt, "sampled")).toBe(position)
  })

  it('"sampled" on a longer history sees at once: new messages, the first message, a recent edit, a removal, an insertion — at the exact first difference', () => {
    const held = history(2_000)
    const { matcher, held: heldAt } = matcherOf(held)
    const extra: Message.Message = { role: "user", content: [{ type: "text", text: "next task" }] }
    expect(matcher.checkedPrefix([...rewrapped(held), extra], heldAt, "sampled")).toBe(2_000)
    expect(matcher.checkedPrefix(editedAt(held, 0), heldAt, "sampled")).toBe(0)
    expect(matcher.checkedPrefix(editedAt(held, 2_000 - RECENT_MESSAGES), heldAt, "sampled")).toBe(
      2_000 - RECENT_MESSAGES
    )
    const removed = rewrapped(held)
    removed.splice(700, 1)
    removed.push(extra, extra)
    expect(matcher.checkedPrefix(removed, heldAt, "sampled")).toBe(700)
    const inserted = rewrapped(held)
    inserted.splice(1_200, 0, extra)
    expect(matcher.checkedPrefix(inserted, heldAt, "sampled")).toBe(1_200)
    // Fewer messages than held: compared in full.
    expect(matcher.checkedPrefix(rewrapped(held).slice(0, 1_500), heldAt, "sampled")).toBe(1_500)
  })

  it('"sampled" sees an in-place edit of an older message within ⌈older / ROTATED⌉ steps, at its position; "full" at once', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: FULL_UP_TO + 1, max: 3_000 }),
        fc.integer({ min: 0, max: 40 }),
        fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true }),
        (count, earlierSteps, where) => {
          const held = history(count)
          const { matcher, held: heldAt } = matcherOf(held)
          // The rotation is wherever earlier unchanged steps left it.
          for (let step = 0; step < earlierSteps; step++) matcher.checkedPrefix(rewrapped(held), heldAt, "sampled")
          const older = count - 1 - RECENT_MESSAGES
          const position = 1 + Math.floor(where * older)
          const edited = editedAt(held, position)
          expect(matcher.checkedPrefix(edited, heldAt, "full")).toBe(position)
          const bound = Math.ceil(older / ROTATED_MESSAGES)
          let steps = 1
          let matched = matcher.checkedPrefix(edited, heldAt, "sampled")
          while (matched === count && steps <= bound) {
            matched = matcher.checkedPrefix(edited, heldAt, "sampled")
            steps++
          }
          expect(steps).toBeLessThanOrEqual(bound)
          // Found by the full comparison it falls back to: the exact first difference.
          expect(matched).toBe(position)
        }
      ),
      { numRuns: 60 }
    )
  })

  it("rejects a bad rollout mode, missing options and a missing engine with InvalidInput when the middleware is made", () => {
    // New-user trial: mode "bogus" was accepted (the tiered engine then never compacted, 179,022 tokens sent into a
    // 16K window), and contextEngineMiddleware({}) threw a TypeError about the `in` operator.
    expect(() =>
      contextEngineMiddleware({ engine: TestEngine.make(), policy: smallPolicy(100_000), mode: "bogus" as "active" })
    ).toThrow(/rollout mode at options\.mode: "bogus" is not a rollout mode; expected "shadow", "advisory", "active"/)
    expect(() => contextEngineMiddleware(undefined as never)).toThrow(Errors.InvalidInput)
    expect(() => contextEngineMiddleware({} as never)).toThrow(
      /context engine at options\.engine: undefined is not an engine/
    )
    for (const mode of ["shadow", "advisory", "active"] as const)
      expect(() =>
        contextEngineMiddleware({ engine: TestEngine.make(), policy: smallPolicy(100_000), mode })
      ).not.toThrow()
  })

  it("rejects a history check other than sampled or full with InvalidInput naming the option", async () => {
    expect(MessageMatch.historyCheckOf(undefined, "historyCheck")).toBe("sampled")
    expect(MessageMatch.historyCheckOf("full", "historyCheck")).toBe("full")
    expect(() => MessageMatch.historyCheckOf("fast", "options.historyCheck")).toThrow(Errors.InvalidInput)
    expect(() => MessageMatch.historyCheckOf("fast", "options.historyCheck")).toThrow(
      /options\.historyCheck.*"fast" is not a history check; expected "sampled" or "full"/
    )
    expect(() =>
      contextEngineMiddleware({
        engine: TestEngine.make(),
        policy: smallPolicy(100_000),
        historyCheck: "fast" as MessageMatch.HistoryCheck
      })
    ).toThrow(/options\.historyCheck/)
    await expect(Session.make("s", undefined, undefined, "fast" as MessageMatch.HistoryCheck)).rejects.toThrow(
      /historyCheck/
    )
  })
})

describe("Session.sync with a sampled history check", () => {
  it("branches at an older in-place edit within the rotation bound; the transcript loses nothing", async () => {
    const held = history(1_000)
    const session = await Session.make("s")
    await session.sync(held)
    const edited = editedAt(held, 400)
    const bound = Math.ceil((1_000 - 1 - RECENT_MESSAGES) / ROTATED_MESSAGES)
    const messageCount = () => session.transcript().filter((entry) => entry.kind === "message").length
    let steps = 0
    while (messageCount() === 1_000 && steps <= bound) {
      await session.sync(edited)
      steps++
    }
    expect(steps).toBeLessThanOrEqual(bound)
    // The active path is the edited history: same values, position by position.
    expect(session.messages()).toEqual(edited)
    expect(session.messages()[400]).not.toEqual(held[400])
    // Append-only: the old branch's 1,000 messages plus the 600 re-appended from the edit on.
    expect(session.transcript().filter((entry) => entry.kind === "message")).toHaveLength(1_600)
  })

  it('"full" branches at the same edit on the first step', async () => {
    const held = history(1_000)
    const session = await Session.make("s", undefined, undefined, "full")
    await session.sync(held)
    await session.sync(editedAt(held, 400))
    expect(session.messages()).toEqual(editedAt(held, 400))
  })
})

describe("the middleware with a sampled history check", () => {
  it("sends an older in-place edit at once (the application's own message objects) before the session has seen it", async () => {
    const engine = TestEngine.make()
    const { model, calls } = windowedModel({ windowTokens: 10_000_000, replies: () => ({ text: "ok" }) })
    const middleware = contextEngineMiddleware({ engine, policy: smallPolicy(10_000_000) })
    const wrapped = wrapLanguageModel({ model, middleware })
    const held = history(1_000)
    await wrapped.doGenerate({ prompt: rewrapped(held) as never })
    const edited = editedAt(held, 400)
    await wrapped.doGenerate({ prompt: edited as never })
    const sent = calls.at(-1)!.params.prompt
    expect(sent[400]).toBe(edited[400])
    expect(sent).toEqual(edited)
  })
})

describe("Session.sync with a sampled history check, generated edit sequences", () => {
  type Op =
    | { readonly kind: "append"; readonly count: number }
    | { readonly kind: "edit"; readonly where: number }
    | { readonly kind: "remove"; readonly where: number }
    | { readonly kind: "insert"; readonly where: number }
    | { readonly kind: "same" }
  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({ kind: fc.constant("append" as const), count: fc.integer({ min: 1, max: 4 }) }),
    fc.record({
      kind: fc.constant("edit" as const),
      where: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
    }),
    fc.record({
      kind: fc.constant("remove" as const),
      where: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
    }),
    fc.record({
      kind: fc.constant("insert" as const),
      where: fc.double({ min: 0, max: 1, noNaN: true, maxExcluded: true })
    }),
    fc.constant({ kind: "same" as const })
  )

  it("the active path equals what was sent, but for lone in-place edits of older messages, which it takes within the bound", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 300, max: 700 }),
        fc.array(op, { minLength: 1, maxLength: 25 }),
        async (size, ops) => {
          const session = await Session.make("s")
          let incoming = history(size)
          await session.sync(incoming)
          let added = 0
          const extra = (): Message.Message => ({ role: "user", content: [{ type: "text", text: `new ${added++}` }] })
          // Positions whose message was edited in place in the older region and may not be seen yet.
          let pending = new Set<number>()
          const differing = (): Array<number> => {
            const held = session.messages()
            expect(held.length).toBe(incoming.length)
            return incoming.flatMap((message, at) => (MessageMatch.sameMessage(held[at]!, message) ? [] : [at]))
          }
          for (const next of ops) {
            const count = incoming.length
            const at = next.kind === "append" || next.kind === "same" ? 0 : Math.floor(next.where * count)
            const older = at >= 1 && at < count - RECENT_MESSAGES
            if (next.kind === "append")
              incoming = [...rewrapped(incoming), ...Array.from({ length: next.count }, extra)]
            else if (next.kind === "edit") incoming = editedAt(incoming, at)
            else if (next.kind === "remove") incoming = rewrapped(incoming).toSpliced(at, 1)
            else if (next.kind === "insert") incoming = rewrapped(incoming).toSpliced(at, 0, extra())
            else incoming = rewrapped(incoming)
            if (next.kind === "remove" || next.kind === "insert") pending = new Set()
            await session.sync(incoming)
            const diff = differing()
            if (next.kind === "edit" && older && diff.includes(at)) pending.add(at)
            // Anything but a lone older in-place edit is taken at once; a difference found sends the session
            // back to the first one, which resolves every pending edit after it.
            for (const position of diff) expect(pending.has(position)).toBe(true)
            if (diff.length === 0) pending = new Set()
          }
          const older = incoming.length - 1 - RECENT_MESSAGES
          for (let step = 0; step < Math.ceil(older / ROTATED_MESSAGES); step++) await session.sync(rewrapped(incoming))
          expect(differing()).toEqual([])
        }
      ),
      { numRuns: 40 }
    )
  })
})
