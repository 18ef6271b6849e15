/**
 * PromptAlignment.align: the request built from a view and the
 * application's prompt, step after step — incrementally (from the session's
 * previous alignment) exactly as from scratch.
 */
import { ArrayLineage } from "@context-engine/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { countReads } from "../../core/test/support/readCounter.ts"
import * as PromptAlignment from "../src/PromptAlignment.ts"

interface Msg {
  readonly text: string
}
interface Item {
  readonly message: Msg
}

/** What the view does with each synced message: keeps it, drops it, rewrites it, or keeps it and inserts one after. */
const fate = fc.constantFrom("keep", "keep", "keep", "keep", "drop", "rewrite", "insert")
type Fate = typeof fate extends fc.Arbitrary<infer A> ? A : never

const step = fc.record({
  // Messages the application appends (the session syncs them: its array grows in place).
  added: fc.array(fate, { maxLength: 8 }),
  // The application rewrote its history at this length (the session branches: a new array of messages).
  branch: fc.option(fc.nat(), { nil: undefined }),
  // A compaction rewrote an earlier item of the view (the view does not extend the previous one).
  rewriteEarlier: fc.option(fc.nat(), { nil: undefined })
})

describe("PromptAlignment.align", () => {
  it("from the previous alignment gives the same request as from scratch, at every step (appends, branches, rewrites)", () => {
    fc.assert(
      fc.property(fc.array(step, { minLength: 1, maxLength: 12 }), (steps) => {
        let synced: Array<Msg> = []
        let fates: Array<Fate> = []
        // The view's items per synced position (created once, so an extending step keeps the same objects).
        let itemsAt: Array<ReadonlyArray<Item>> = []
        let items: ReadonlyArray<Item> = []
        let previous: PromptAlignment.Alignment<Msg> | undefined
        let counter = 0
        for (const { added, branch, rewriteEarlier } of steps) {
          let extended = true
          if (branch !== undefined && synced.length > 0) {
            const keep = branch % synced.length
            synced = synced.slice(0, keep)
            fates = fates.slice(0, keep)
            itemsAt = itemsAt.slice(0, keep)
            extended = false
          }
          for (const one of added) {
            const message = { text: `m${counter++}` }
            synced.push(message)
            fates.push(one)
            itemsAt.push(
              one === "drop"
                ? []
                : one === "rewrite"
                  ? [{ message: { text: `${message.text} (rewritten)` } }]
                  : one === "insert"
                    ? [{ message }, { message: { text: `${message.text} (inserted)` } }]
                    : [{ message }]
            )
          }
          if (rewriteEarlier !== undefined && synced.length > 0) {
            const at = rewriteEarlier % synced.length
            itemsAt[at] = [{ message: { text: `${synced[at]!.text} (compacted)` } }]
            extended = false
          }
          const all = itemsAt.flat()
          items =
            extended && all.length >= items.length
              ? ArrayLineage.extend(items, all.slice(items.length))
              : ArrayLineage.extend([], all)
          // The application's prompt: new objects with the same values, every step.
          const original = synced.map((message) => ({ ...message }))
          const incremental = PromptAlignment.align(items, original, synced, previous)
          const cold = PromptAlignment.align(items, original, synced, undefined)
          expect(incremental.request.length).toBe(cold.request.length)
          incremental.request.forEach((message, index) => {
            expect(message).toBe(cold.request[index])
          })
          expect(incremental.alignment!.own).toEqual(cold.alignment!.own)
          expect(incremental.alignment!.runStarts).toEqual(cold.alignment!.runStarts)
          expect(incremental.alignment!.runPositions).toEqual(cold.alignment!.runPositions)
          // Every message sent is the view's by value: the application's object where it found one.
          incremental.request.forEach((message, index) => {
            expect(message).toEqual(items[index]!.message)
            expect(original.includes(message) || message === items[index]!.message).toBe(true)
          })
          if (incremental.request !== original)
            expect(PromptAlignment.builtFrom(incremental.request, original)).toEqual(incremental.alignment!.own)
          previous = incremental.alignment
        }
      }),
      { numRuns: 400 }
    )
  })

  it("sends the prompt itself when the view is the prompt, and aligns a request that is not the synced prompt (a retry's) from scratch", () => {
    const synced = [{ text: "a" }, { text: "b" }]
    const original = synced.map((message) => ({ ...message }))
    const items = ArrayLineage.extend(
      [],
      synced.map((message) => ({ message }))
    )
    const first = PromptAlignment.align(items, original, synced, undefined)
    expect(first.request).toBe(original)
    const retry = PromptAlignment.align(items, [], synced, first.alignment)
    expect(retry.alignment).toBeUndefined()
    expect(retry.request).toEqual(synced)
  })

  it("a step whose view is recorded as extending the previous one reads none of the earlier items", () => {
    const synced = Array.from({ length: 200 }, (_, index) => ({ text: `m${index}` }))
    // Every tenth message dropped by the view: the request is a new array, not the prompt.
    const itemsOf = (end: number) =>
      synced.slice(0, end).flatMap((message, index) => (index % 10 === 3 ? [] : [{ message }]))
    const all = itemsOf(200)
    const first = ArrayLineage.extend([], all.slice(0, itemsOf(150).length))
    const { alignment } = PromptAlignment.align(
      first,
      synced.slice(0, 150).map((message) => ({ ...message })),
      synced.slice(0, 150),
      undefined
    )
    // The session's messages grew in place: the same array, as the previous alignment saw it.
    const session = synced.slice(0, 150)
    const previous = { ...alignment!, synced: session }
    session.push(...synced.slice(150))
    const second = ArrayLineage.extend(first, all.slice(first.length))
    const reads = countReads(second, first.length)
    const original = synced.map((message) => ({ ...message }))
    const { request } = PromptAlignment.align(second, original, session, previous)
    expect(reads.count).toBe(0)
    expect(request).toEqual(all.map((item) => item.message))
    expect(request.every((message) => original.includes(message))).toBe(true)
  })
})
