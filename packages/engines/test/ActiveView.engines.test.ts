/**
 * One view (issue #10 req 1): for the same entries, the store's resume view
 * (`store.activeView`) and every engine's `assembleContext` give identical
 * messages — after one and after two compactions and after a branch
 * rewrite — and the latest user message is always there verbatim.
 */
import type { ContextEngine, Entry, Message } from "@context-engine/core"
import { InMemoryTranscriptStore } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, results, user } from "./support.ts"

const policy = Cases.policySync(
  { contextWindow: 8_000, maxOutputTokens: 1_000, keepRecentTokens: 1_200, reserveTokens: 1_000 },
  "view-test"
)

/** A turn: an ask, a tool call with a long result, an answer. */
const turn = (n: number): Array<Message.Message> => [
  user(`Task ${n}: inspect src/module${n}.ts and report.`),
  calls({ id: `call_${n}`, name: "read", input: { path: `src/module${n}.ts` } }),
  results({ id: `call_${n}`, name: "read", text: `export const value${n} = ${n}\n${"// line\n".repeat(220)}` }),
  assistant(`module${n} exports value${n}.`)
]

let counter = 0
const entriesOf = (messages: ReadonlyArray<Message.Message>, parentId: string | null): Array<Entry.Entry> => {
  let parent = parentId
  return messages.map((message) => {
    const id = `m${counter++}`
    const entry: Entry.Entry = {
      id,
      parentId: parent,
      timestamp: new Date(Date.UTC(2026, 2, 1, 0, 0, counter)).toISOString(),
      schemaVersion: 1,
      kind: "message",
      message
    }
    parent = id
    return entry
  })
}

const messagesOfStore = async (store: ReturnType<typeof InMemoryTranscriptStore.open>) =>
  (await store.activeView("s")).view.items.map((item) => item.message)

const assembled = async (engine: ContextEngine.ContextEngine, entries: ReadonlyArray<Entry.Entry>) =>
  (await Effect.runPromise(engine.assembleContext({ entries, policy }))).messages

/** Appends a compaction's entries through the store (checkpoints via installCheckpoint). */
const commit = async (
  store: ReturnType<typeof InMemoryTranscriptStore.open>,
  result: ContextEngine.CompactionResult
) => {
  for (const entry of result.entriesToAppend)
    if (entry.kind === "checkpoint") await store.installCheckpoint("s", entry)
    else await store.append("s", [entry])
}

const expectSame = async (
  store: ReturnType<typeof InMemoryTranscriptStore.open>,
  engines: ReadonlyArray<ContextEngine.ContextEngine>,
  latestAsk: string
) => {
  const entries = (await store.load("s")).entries
  const fromStore = await messagesOfStore(store)
  for (const engine of engines) expect(await assembled(engine, entries)).toEqual(fromStore)
  expect(fromStore.filter((message) => message.role === "user").at(-1)).toEqual(user(latestAsk))
  return fromStore
}

describe("store.activeView and engine.assembleContext build the same messages", () => {
  const now = () => new Date(Date.UTC(2026, 2, 2))

  it("after one and two tiered compactions, and after a branch rewrite of the last ask", async () => {
    const store = InMemoryTranscriptStore.open()
    const tiered = TieredSummaryEngine.make({ now })
    const engines = [tiered, SlidingWindowEngine.make()]
    await store.append("s", entriesOf([...turn(1), ...turn(2), ...turn(3), user("Task 4: summarize.")], null))

    const compactOnce = async () => {
      const entries = (await store.load("s")).entries
      const result = await Effect.runPromise(tiered.compact({ entries, policy, manual: true }))
      expect(result.checkpoint).toBeDefined()
      await commit(store, result)
      return result.checkpoint!
    }

    const first = await compactOnce()
    const afterOne = await expectSame(store, engines, "Task 4: summarize.")
    expect(afterOne.some((message) => JSON.stringify(message).includes("reference only"))).toBe(true)

    const last = (await store.load("s")).entries.at(-1)!.id
    await store.append(
      "s",
      entriesOf([assistant("Summary done."), ...turn(5), ...turn(6), user("Task 7: ship.")], last)
    )
    const second = await compactOnce()
    expect(second.generation).toBe(first.generation + 1)
    await expectSame(store, engines, "Task 7: ship.")

    // The app rewrites its last message: a branch from the entry before the old ask.
    const entries = (await store.load("s")).entries
    const oldAsk = entries.findLast((entry) => entry.kind === "message" && entry.message.role === "user")!
    await store.append("s", entriesOf([user("Task 7: ship it to staging instead.")], oldAsk.parentId))
    const rewritten = await expectSame(store, engines, "Task 7: ship it to staging instead.")
    expect(rewritten).not.toContainEqual(user("Task 7: ship."))
  })

  it("a branch (as the middleware session writes one when the app rewrites a message) is the one every view follows", async () => {
    const store = InMemoryTranscriptStore.open()
    await store.append("s", entriesOf([...turn(1), user("Deploy to prod.")], null))
    const entries = (await store.load("s")).entries
    await store.append("s", entriesOf([user("Deploy to staging.")], entries.at(-2)!.id))
    const messages = await expectSame(
      store,
      [TieredSummaryEngine.make({ now }), SlidingWindowEngine.make()],
      "Deploy to staging."
    )
    expect(messages).not.toContainEqual(user("Deploy to prod."))
    expect(messages).toHaveLength(5)
  })
})
