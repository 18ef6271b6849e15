/**
 * A store that fails in patterns an outage produces — any subset of writes,
 * only writes of one kind, a write that never settles — while a session
 * syncs messages and appends edits and events (`SessionWrites.ts`): every
 * sync resolves with the messages in hand, nothing is lost once the store
 * is back, nothing is stored twice, and the store holds the session's
 * entries in the session's order.
 */
import { Entry, InMemoryTranscriptStore, type Message } from "@context-engine/core"
import { generateText, type ModelMessage, stepCountIs } from "ai"
import fc from "fast-check"
import { afterEach, describe, expect, it, vi } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import * as Session from "../src/Session.ts"
import {
  readTool,
  settlement,
  smallPolicy,
  tieredMiddleware,
  toolLoopReplies,
  windowedModel
} from "./support/MockProvider.ts"

type Inner = ReturnType<typeof InMemoryTranscriptStore.open>

/** A store over `inner` whose n-th write (append, installCheckpoint, commitCompaction; from 0) fails when `fails(n, entries)`. */
const faultyStore = (
  inner: Inner,
  fails: (write: number, entries: ReadonlyArray<Entry.Entry>) => "ok" | "throw" | "hang"
): Session.SessionStore => {
  let writes = 0
  const write = async <A>(entries: ReadonlyArray<Entry.Entry>, run: () => Promise<A>): Promise<A> => {
    const outcome = fails(writes++, entries)
    if (outcome === "throw") throw new Error(`connection refused (write ${writes})`)
    if (outcome === "hang") return new Promise<A>(() => {})
    return run()
  }
  return {
    load: (sessionId) => inner.load(sessionId),
    append: (sessionId, entries) => write(entries, () => inner.append(sessionId, entries)),
    installCheckpoint: (sessionId, entry) => write([entry], () => inner.installCheckpoint(sessionId, entry)),
    commitCompaction: (sessionId, entries) => write(entries, () => inner.commitCompaction(sessionId, entries))
  }
}

type Step = "message" | "edit" | "event"

/** Runs `steps` on a session over `store`: a new message synced, an edit of the last message, or an event appended. */
const drive = async (session: Session.Session, steps: ReadonlyArray<Step>, history: Array<Message.Message>) => {
  for (const step of steps) {
    if (step === "message" || session.messageEntries().length === 0) {
      history.push({ role: history.length % 2 === 0 ? "user" : "assistant", content: `message ${history.length}` })
      await session.sync(history)
      expect(session.messages()).toEqual(history)
      continue
    }
    const target = session.messageEntries().at(-1)!
    const id = session.nextId()
    const header = { id, parentId: session.entries().at(-1)?.id ?? null, timestamp: "2026-01-01T00:00:00.000Z" }
    await session.append([
      step === "edit"
        ? Entry.make(header, {
            kind: "edit",
            edit: { op: "drop", entryId: target.id, strategy: "test", reason: "a test edit" }
          })
        : Entry.make(header, { kind: "event", event: { name: "test.event", data: { index: history.length } } })
    ])
  }
}

/** The store holds the session's transcript once each, in the session's order. */
const expectStoredAsHeld = async (inner: Inner, session: Session.Session) => {
  const stored = (await inner.load("s")).entries.map((entry) => entry.id)
  expect(new Set(stored).size).toBe(stored.length)
  expect(stored).toEqual(session.transcript().map((entry) => entry.id))
}

describe("a store that fails some writes while a session syncs", () => {
  it("fails the 1st, 3rd and 5th write: every sync resolves; once back, the store holds every entry once, in order", async () => {
    const inner = InMemoryTranscriptStore.open()
    const failures: Array<number> = []
    const store = faultyStore(inner, (write) => ([0, 2, 4].includes(write) ? "throw" : "ok"))
    const session = await Session.make("s", store, undefined, undefined, (_failure, unstored) =>
      failures.push(unstored)
    )
    const history: Array<Message.Message> = []
    await drive(session, ["message", "edit", "message", "event", "message", "message", "edit", "message"], history)
    expect(failures.length).toBe(3)
    await expectStoredAsHeld(inner, session)
  })

  it("fails only writes that hold an edit until it is back: nothing lost, nothing twice, order kept", async () => {
    const inner = InMemoryTranscriptStore.open()
    let down = true
    const store = faultyStore(inner, (_write, entries) =>
      down && entries.some((entry) => entry.kind === "edit") ? "throw" : "ok"
    )
    const session = await Session.make("s", store)
    const history: Array<Message.Message> = []
    await drive(session, ["message", "message", "edit", "message", "event", "edit", "message"], history)
    // the edit blocks what follows it: stored later, in order
    expect((await inner.load("s")).entries.length).toBeLessThan(session.transcript().length)
    down = false
    await drive(session, ["message"], history)
    await expectStoredAsHeld(inner, session)
  })

  it("any pattern of failed writes and any steps: once the store is back, it holds every entry once, in order", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.boolean(), { maxLength: 12 }),
        fc.array(fc.constantFrom<Step>("message", "edit", "event"), { minLength: 1, maxLength: 12 }),
        async (failing, steps) => {
          const inner = InMemoryTranscriptStore.open()
          const store = faultyStore(inner, (write) => (failing[write] === true ? "throw" : "ok"))
          const session = await Session.make("s", store, undefined, undefined, () => {})
          const history: Array<Message.Message> = []
          await drive(session, steps, history)
          // the store is back (the pattern is over): the next write stores everything held
          await drive(session, Array(failing.length + 1).fill("message"), history)
          await expectStoredAsHeld(inner, session)
        }
      ),
      { numRuns: 200 }
    )
  })
})

describe("a store write that never settles", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Advances the fake clock a write deadline at a time until `promise` settles. */
  const settled = async <A>(promise: Promise<A>): Promise<A> => {
    let done = false
    const watched = promise.finally(() => {
      done = true
    })
    while (!done) await vi.advanceTimersByTimeAsync(Session.STORE_WRITE_TIMEOUT_MS)
    return watched
  }

  it("any pattern of failed and hung writes: every step settles; once the store is back, it holds every entry once, in order", async () => {
    vi.useFakeTimers()
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.constantFrom<"ok" | "throw" | "hang">("ok", "throw", "hang"), { maxLength: 10 }),
        fc.array(fc.constantFrom<Step>("message", "edit", "event"), { minLength: 1, maxLength: 10 }),
        async (pattern, steps) => {
          const inner = InMemoryTranscriptStore.open()
          const store = faultyStore(inner, (write) => pattern[write] ?? "ok")
          const session = await Session.make("s", store, undefined, undefined, () => {})
          const history: Array<Message.Message> = []
          await settled(drive(session, steps, history))
          await settled(drive(session, Array(pattern.length + 1).fill("message"), history))
          await expectStoredAsHeld(inner, session)
        }
      ),
      { numRuns: 100 }
    )
  })

  it("the sync resolves after the plug-in deadline, the failure is reported, and the entries are stored once the store answers again", async () => {
    vi.useFakeTimers()
    const inner = InMemoryTranscriptStore.open()
    const store = faultyStore(inner, (write) => (write === 0 ? "hang" : "ok"))
    const failures: Array<string> = []
    const session = await Session.make("s", store, undefined, undefined, (failure) => failures.push(failure.failure))
    const history: Array<Message.Message> = [{ role: "user", content: "message 0" }]
    const synced = session.sync(history)
    await vi.advanceTimersByTimeAsync(60_000)
    await synced
    expect(session.messages()).toEqual(history)
    expect(failures).toEqual(["timeout"])
    await drive(session, ["message", "edit", "message"], history)
    await expectStoredAsHeld(inner, session)
  })
  it("a tool loop whose first writes hang: every request goes out, the app is told of each timeout, and nothing is lost", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    const inner = InMemoryTranscriptStore.open()
    const store = faultyStore(inner, (write) => (write < 3 ? "hang" : "ok"))
    const events: Array<ContextEvent> = []
    const steps = 4
    const provider = windowedModel({
      windowTokens: 1_000_000,
      replies: toolLoopReplies(steps)
    })
    const { model, middleware } = tieredMiddleware(provider, {
      store,
      policy: smallPolicy(100_000),
      offload: false,
      onEvent: (event) => events.push(event)
    })
    const result = await settled(
      generateText({
        model,
        instructions: "You read files.",
        tools: { read: readTool },
        messages: [{ role: "user", content: "Read every file." }],
        stopWhen: stepCountIs(steps)
      })
    )
    expect(result.text).toBe("finished")
    expect(provider.calls).toHaveLength(steps)
    const failed = events.flatMap((event) => (event.type === "store-failed" ? [event.error.failure] : []))
    expect(failed.length).toBeGreaterThan(0)
    expect(new Set(failed)).toEqual(new Set(["timeout"]))
    const session = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    await expectStoredAsHeld(inner, session)
  })

  it("a request aborted while its write hangs settles at once with the abort's reason; the next request waits for the write, then goes out and stores what was held", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    const inner = InMemoryTranscriptStore.open()
    let hang = false
    const store = faultyStore(inner, () => (hang ? "hang" : "ok"))
    const provider = windowedModel({ windowTokens: 1_000_000, replies: () => ({ text: "noted" }) })
    const { model, middleware } = tieredMiddleware(provider, { store, policy: smallPolicy(100_000), offload: false })
    await generateText({ model, messages: [{ role: "user", content: "a" }] })
    hang = true
    const abort = new AbortController()
    const second: Array<ModelMessage> = [
      { role: "user", content: "a" },
      { role: "assistant", content: "noted" },
      { role: "user", content: "b" }
    ]
    const outcome = settlement(generateText({ model, messages: second, abortSignal: abort.signal }))
    await vi.advanceTimersByTimeAsync(1_000)
    const reason = new Error("the user pressed stop")
    abort.abort(reason)
    await vi.advanceTimersByTimeAsync(0)
    expect(outcome()).toBe(reason)
    expect(provider.calls).toHaveLength(1)
    hang = false
    await settled(
      generateText({
        model,
        messages: [...second, { role: "assistant", content: "noted" }, { role: "user", content: "c" }]
      })
    )
    expect(provider.calls).toHaveLength(2)
    const session = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    await expectStoredAsHeld(inner, session)
  })
})
