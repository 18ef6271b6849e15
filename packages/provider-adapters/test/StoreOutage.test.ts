/**
 * A store that fails while a compaction is saved (a database outage, a full
 * disk) is a failing plug-in: the compaction counts as failed, the previous
 * context stays in force, the app is told (`compaction-failed`), and the
 * request still goes out (DESIGN.md invariants). The session keeps nothing
 * the store refused, so a later compaction is tried again.
 */
import { ActiveView, type Entry, InMemoryTranscriptStore, type Message } from "@context-engine/core"
import { generateText, type ModelMessage, stepCountIs } from "ai"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import * as Session from "../src/Session.ts"
import {
  readTool,
  smallPolicy,
  tieredMiddleware,
  tieredModel,
  toolLoopReplies,
  windowedModel
} from "./support/MockProvider.ts"

const POLICY_WINDOW_TOKENS = 4_000

describe("a store outage while a compaction is saved", () => {
  it("the request still goes out with the previous context, the app is told, and a later compaction is saved once the store is back", async () => {
    const inner = InMemoryTranscriptStore.open()
    let down = true
    const failing = (entries: ReadonlyArray<Entry.Entry>) => {
      if (down && entries.some((entry) => entry.kind !== "message")) throw new Error("connection refused (store down)")
    }
    const store: Session.SessionStore = {
      load: (sessionId) => inner.load(sessionId),
      append: async (sessionId, entries) => {
        failing(entries)
        return inner.append(sessionId, entries)
      },
      installCheckpoint: async (sessionId, entry) => {
        failing([entry])
        return inner.installCheckpoint(sessionId, entry)
      },
      commitCompaction: async (sessionId, entries) => {
        failing(entries)
        return inner.commitCompaction(sessionId, entries)
      }
    }
    const events: Array<ContextEvent> = []
    // The provider's window is larger than the policy's: the uncompacted request is accepted.
    const provider = windowedModel({ windowTokens: 1_000_000, replies: () => ({ text: "noted" }) })
    const model = tieredModel(provider, {
      store,
      policy: smallPolicy(POLICY_WINDOW_TOKENS),
      offload: false,
      onEvent: (event) => events.push(event)
    })
    const history: Array<ModelMessage> = []
    const turn = async (index: number) => {
      history.push({
        role: "user",
        content: `Turn ${index}: review module m${index}. ${"The handler keeps its state in a map keyed by request id. ".repeat(30)}`
      })
      const result = await generateText({ model, instructions: "You review code.", messages: history })
      expect(result.text).toBe("noted")
      history.push(...result.responseMessages)
    }
    for (let index = 0; index < 12; index++) await turn(index)
    const failed = events.filter((event) => event.type === "compaction-failed")
    expect(failed.length).toBeGreaterThan(0)
    expect(JSON.stringify(failed[0])).toContain("connection refused (store down)")
    expect(events.some((event) => event.type === "compaction")).toBe(false)
    // Every request went out; the ones after the outage carried the whole history (the previous context).
    expect(provider.calls).toHaveLength(12)
    expect(provider.calls.at(-1)!.params.prompt.filter((message) => message.role === "user")).toHaveLength(12)
    // The store holds every message and nothing it refused.
    const stored = (await inner.load("s")).entries
    expect(stored.filter((entry) => entry.kind === "message" && entry.message.role === "user")).toHaveLength(12)
    expect(stored.some((entry) => entry.kind !== "message")).toBe(false)
    down = false
    await turn(12)
    expect(events.some((event) => event.type === "compaction")).toBe(true)
    expect((await inner.load("s")).entries.some((entry) => entry.kind === "checkpoint")).toBe(true)
  })
})

/** A store over `inner` whose first `failures` writes (of any kind) throw, as during an outage; later ones pass. */
const recoveringStore = (inner: ReturnType<typeof InMemoryTranscriptStore.open>, failures: number) => {
  let failed = 0
  const write = async <A>(run: () => Promise<A>): Promise<A> => {
    if (failed < failures) {
      failed++
      throw new Error(`connection refused (outage, write ${failed} of ${failures})`)
    }
    return run()
  }
  const store: Session.SessionStore = {
    load: (sessionId) => inner.load(sessionId),
    append: (sessionId, entries) => write(() => inner.append(sessionId, entries)),
    installCheckpoint: (sessionId, entry) => write(() => inner.installCheckpoint(sessionId, entry)),
    commitCompaction: (sessionId, entries) => write(() => inner.commitCompaction(sessionId, entries))
  }
  return { store, failedWrites: () => failed }
}

describe("a store outage while the app's messages are synced", () => {
  it("the session holds what the store refused, reports it, and stores it first, in order, once the store is back", async () => {
    const inner = InMemoryTranscriptStore.open()
    const { store, failedWrites } = recoveringStore(inner, 2)
    const failures: Array<[string, number]> = []
    const session = await Session.make("s", store, undefined, undefined, (failure, unstored) => {
      failures.push([failure.message, unstored])
    })
    const history: Array<Message.Message> = []
    for (let index = 0; index < 4; index++) {
      history.push({ role: index % 2 === 0 ? "user" : "assistant", content: `message ${index}` })
      // Resolves during the outage too: the session holds the messages (the request is built from them).
      const appended = await session.sync(history)
      expect(appended.map((entry) => entry.message)).toEqual([history.at(-1)])
      expect(session.messages()).toEqual(history)
    }
    expect(failedWrites()).toBe(2)
    expect(failures).toEqual([
      ["The transcript store threw: connection refused (outage, write 1 of 2)", 1],
      ["The transcript store threw: connection refused (outage, write 2 of 2)", 2]
    ])
    const stored = (await inner.load("s")).entries
    expect(stored.map((entry) => entry.id)).toEqual(session.transcript().map((entry) => entry.id))
    expect(ActiveView.branch(stored).map((entry) => (entry as Entry.MessageEntry).message)).toEqual(history)
  })

  it("every request of a tool loop goes out during the outage; afterwards the store holds every message once, in order", async () => {
    const inner = InMemoryTranscriptStore.open()
    const { store, failedWrites } = recoveringStore(inner, 5)
    const events: Array<ContextEvent> = []
    const steps = 8
    const provider = windowedModel({
      windowTokens: 1_000_000,
      replies: toolLoopReplies(steps)
    })
    const { model, middleware } = tieredMiddleware(provider, {
      store,
      policy: smallPolicy(100_000),
      // Each arriving tool result is offloaded: an edit entry written in the same step as the synced messages.
      offload: { thresholdTokens: 100 },
      onEvent: (event) => events.push(event)
    })
    const result = await generateText({
      model,
      instructions: "You read files.",
      tools: { read: readTool },
      messages: [{ role: "user", content: "Read every file." }],
      stopWhen: stepCountIs(steps)
    })
    expect(result.text).toBe("finished")
    expect(provider.calls).toHaveLength(steps)
    expect(failedWrites()).toBe(5)
    const failed = events.filter((event) => event.type === "store-failed")
    expect(failed).toHaveLength(5)
    expect(failed.map((event) => event.error.kind)).toEqual(Array(5).fill("store"))
    // Each request carried the whole history in hand: the previous one's messages + the new ones.
    provider.calls.forEach((call, step) => {
      expect(call.params.prompt).toHaveLength(2 + 2 * step)
    })
    const session = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    const stored = (await inner.load("s")).entries
    // Nothing missing, nothing twice, in the order the session wrote it.
    expect(stored.map((entry) => entry.id)).toEqual(session.transcript().map((entry) => entry.id))
    const storedMessages = ActiveView.branch(stored).flatMap((entry) => (entry.kind === "message" ? [entry] : []))
    expect(storedMessages.map((entry) => entry.message.role)).toEqual([
      "system",
      "user",
      ...Array.from({ length: steps - 1 }, () => ["assistant", "tool"]).flat()
    ])
    expect(storedMessages.map((entry) => entry.message)).toEqual(session.messages())
    expect(stored.filter((entry) => entry.kind === "edit")).toHaveLength(steps - 1)
  })
})

describe("a store outage across syncs and compactions", () => {
  it("messages the store refused are stored before the compaction that follows them; once it is back nothing is missing", async () => {
    const inner = InMemoryTranscriptStore.open()
    const { store, failedWrites } = recoveringStore(inner, 10)
    const events: Array<ContextEvent> = []
    const provider = windowedModel({ windowTokens: 1_000_000, replies: () => ({ text: "noted" }) })
    const model = tieredModel(provider, {
      store,
      policy: smallPolicy(POLICY_WINDOW_TOKENS),
      offload: false,
      onEvent: (event) => events.push(event)
    })
    const history: Array<ModelMessage> = []
    for (let index = 0; index < 14; index++) {
      history.push({
        role: "user",
        content: `Turn ${index}: review module m${index}. ${"The handler keeps its state in a map keyed by request id. ".repeat(30)}`
      })
      const result = await generateText({ model, instructions: "You review code.", messages: history })
      expect(result.text).toBe("noted")
      history.push(...result.responseMessages)
    }
    expect(provider.calls).toHaveLength(14)
    expect(failedWrites()).toBe(10)
    expect(events.some((event) => event.type === "store-failed")).toBe(true)
    expect(events.some((event) => event.type === "compaction-failed")).toBe(true)
    expect(events.some((event) => event.type === "compaction")).toBe(true)
    const stored = (await inner.load("s")).entries
    expect(stored.some((entry) => entry.kind === "checkpoint")).toBe(true)
    // Every user message once, in order, on the stored branch (the last answer is not resent, so not synced).
    const storedUsers = ActiveView.branch(stored).flatMap((entry) =>
      entry.kind === "message" && entry.message.role === "user" ? [entry.message] : []
    )
    expect(
      storedUsers.map((message) => JSON.stringify(message.content)).map((text) => /Turn (\d+)/.exec(text)![1])
    ).toEqual(Array.from({ length: 14 }, (_, index) => String(index)))
    expect(new Set(stored.map((entry) => entry.id)).size).toBe(stored.length)
  })
})
