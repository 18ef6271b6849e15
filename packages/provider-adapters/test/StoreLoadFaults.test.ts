/**
 * A store whose `load` fails when a session opens — it rejects, never
 * settles, or answers with something that is not a transcript — is a
 * failing plug-in: the request still goes out, prepared from a session held
 * in memory (the AI SDK sends the whole history each step), the app is told
 * (`store-load-failed`), the failure is not kept forever (the load is tried
 * again in the background) and, once a load works, the stored transcript is
 * the session again, with the prompt's messages appended to it once each
 * (`ControllerSessions`).
 */

import type { LanguageModelV4CallOptions } from "@ai-sdk/provider"
import { ActiveView, type Entry, InMemoryTranscriptStore, PluginGuard } from "@context-engine/core"
import { generateText, type LanguageModel, type ModelMessage } from "ai"
import fc from "fast-check"
import { afterEach, describe, expect, it, vi } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import * as Session from "../src/Session.ts"
import { settlement, smallPolicy, tieredModel, windowedModel } from "./support/MockProvider.ts"

type Inner = ReturnType<typeof InMemoryTranscriptStore.open>
type LoadOutcome = "ok" | "throw" | "hang" | "malformed"

/** A store over `inner` whose n-th load (from 0) answers as `loads(n)` says; writes pass through. `loadTimes` are `clock()` at each load. */
const loadFaultyStore = (inner: Inner, loads: (load: number) => LoadOutcome, clock: () => number = () => 0) => {
  const loadTimes: Array<number> = []
  const store: Session.SessionStore = {
    load: async (sessionId) => {
      const outcome = loads(loadTimes.length)
      loadTimes.push(clock())
      if (outcome === "throw") throw new Error(`connection refused (load ${loadTimes.length})`)
      if (outcome === "hang") return new Promise<never>(() => {})
      if (outcome === "malformed") return { rows: [] } as never
      return inner.load(sessionId)
    },
    append: (sessionId, entries) => inner.append(sessionId, entries),
    installCheckpoint: (sessionId, entry) => inner.installCheckpoint(sessionId, entry),
    commitCompaction: (sessionId, entries) => inner.commitCompaction(sessionId, entries)
  }
  return { store, loadTimes }
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : (content as ReadonlyArray<{ readonly type: string; readonly text?: string }>)
        .flatMap((part) => (part.type === "text" ? [part.text ?? ""] : []))
        .join("")

/** The texts of a request's prompt, in order. */
const promptTexts = (params: LanguageModelV4CallOptions): Array<string> =>
  params.prompt.map((message) => textOf(message.content))

/** The texts of the whole third request ({@link conversation}'s instructions and turns 0–2, each answered "noted"). */
const THIRD_TURN_PROMPT = ["You review code.", "Turn 0", "noted", "Turn 1", "noted", "Turn 2"]

/** The texts of the messages on the stored active branch, in order. */
const storedTexts = async (inner: Inner): Promise<Array<string>> =>
  ActiveView.branch((await inner.load("s")).entries).flatMap((entry) =>
    entry.kind === "message" ? [textOf((entry as Entry.MessageEntry).message.content)] : []
  )

/** One user turn after another on `model`, the history carried as an app does; returns the history. */
const conversation = (model: LanguageModel, history: Array<ModelMessage> = []) => ({
  history,
  turn: async (index: number) => {
    history.push({ role: "user", content: `Turn ${index}` })
    const result = await generateText({ model, instructions: "You review code.", messages: history })
    expect(result.text).toBe("noted")
    history.push(...result.responseMessages)
  }
})

const loadFailures = (events: ReadonlyArray<ContextEvent>) =>
  events.flatMap((event) => (event.type === "store-load-failed" ? [event] : []))

const setup = (store: Session.SessionStore, clock: () => number = () => 0) => {
  const events: Array<ContextEvent> = []
  const provider = windowedModel({ windowTokens: 1_000_000, replies: () => ({ text: "noted" }) })
  const model = tieredModel(provider, {
    store,
    policy: smallPolicy(100_000),
    offload: false,
    now: () => new Date(clock()),
    onEvent: (event) => events.push(event)
  })
  return { events, provider, model }
}

describe("a store whose load rejects", () => {
  it("once: the first request goes out from memory and the app is told; the next one uses the store", async () => {
    const inner = InMemoryTranscriptStore.open()
    const { store, loadTimes } = loadFaultyStore(inner, (load) => (load === 0 ? "throw" : "ok"))
    const { events, provider, model } = setup(store)
    const { turn } = conversation(model)
    await turn(0)
    expect(provider.calls.map((call) => promptTexts(call.params))).toEqual([["You review code.", "Turn 0"]])
    const [failed, ...more] = loadFailures(events)
    expect(more).toEqual([])
    expect(failed!.sessionId).toBe("s")
    expect(failed!.error).toBeInstanceOf(PluginGuard.PluginFailed)
    expect([failed!.error.kind, failed!.error.failure, failed!.error.detail]).toEqual([
      "store",
      "threw",
      "connection refused (load 1)"
    ])
    expect(failed!.consecutiveFailures).toBe(1)
    // Nothing was written while the session was held in memory.
    expect((await inner.load("s")).entries).toEqual([])
    await turn(1)
    expect(provider.calls).toHaveLength(2)
    expect(loadTimes).toHaveLength(2)
    // The second request's messages reached the store, once each, in order.
    expect(await storedTexts(inner)).toEqual(promptTexts(provider.calls[1]!.params))
    expect(await storedTexts(inner)).toEqual(["You review code.", "Turn 0", "noted", "Turn 1"])
    expect(loadFailures(events)).toHaveLength(1)
  })

  it("when a session resumes: once a load works the stored transcript is the session again, and the prompt's messages are appended to it once each", async () => {
    const inner = InMemoryTranscriptStore.open()
    // An earlier run of the app stored two turns.
    const earlier = conversation(setup(inner).model)
    await earlier.turn(0)
    await earlier.turn(1)
    const storedBefore = (await inner.load("s")).entries.map((entry) => entry.id)
    expect(await storedTexts(inner)).toEqual(["You review code.", "Turn 0", "noted", "Turn 1"])
    // The app restarts; the store's first load fails.
    const { store } = loadFaultyStore(inner, (load) => (load === 0 ? "throw" : "ok"))
    const { events, provider, model } = setup(store)
    const { turn } = conversation(model, earlier.history)
    await turn(2)
    expect(loadFailures(events)).toHaveLength(1)
    // Sent in full from memory; the store did not hear of it.
    expect(promptTexts(provider.calls[0]!.params)).toEqual(THIRD_TURN_PROMPT)
    expect((await inner.load("s")).entries.map((entry) => entry.id)).toEqual(storedBefore)
    await turn(3)
    const stored = (await inner.load("s")).entries.map((entry) => entry.id)
    // The stored entries stay first (append-only); the turns since are appended after them, nothing twice.
    expect(stored.slice(0, storedBefore.length)).toEqual(storedBefore)
    expect(new Set(stored).size).toBe(stored.length)
    expect(await storedTexts(inner)).toEqual(promptTexts(provider.calls[1]!.params))
    expect(await storedTexts(inner)).toEqual([
      "You review code.",
      "Turn 0",
      "noted",
      "Turn 1",
      "noted",
      "Turn 2",
      "noted",
      "Turn 3"
    ])
  })

  it("every time: every request goes out with the whole history, nothing throws to the app, loads are retried at most once per announced delay", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.integer({ min: 0, max: 200_000 }), { minLength: 1, maxLength: 8 }),
        async (gapsMs) => {
          let clockMs = 0
          const inner = InMemoryTranscriptStore.open()
          const { store, loadTimes } = loadFaultyStore(
            inner,
            () => "throw",
            () => clockMs
          )
          const { events, provider, model } = setup(store, () => clockMs)
          const { turn } = conversation(model)
          for (const [index, gapMs] of gapsMs.entries()) {
            clockMs += gapMs
            await turn(index)
          }
          expect(provider.calls).toHaveLength(gapsMs.length)
          provider.calls.forEach((call, index) => {
            expect(call.params.prompt).toHaveLength(2 + 2 * index)
          })
          expect((await inner.load("s")).entries).toEqual([])
          const failed = loadFailures(events)
          // One event per load, the count in a row rising by one each time.
          expect(failed.map((event) => event.consecutiveFailures)).toEqual(loadTimes.map((_, index) => index + 1))
          expect(new Set(failed.map((event) => event.error.failure))).toEqual(new Set(["threw"]))
          // The first load and one retry at once; later ones only when a request comes after the announced delay.
          expect(loadTimes.length).toBeLessThanOrEqual(gapsMs.length + 1)
          for (let load = 2; load < loadTimes.length; load++)
            expect(loadTimes[load]!).toBeGreaterThanOrEqual(loadTimes[load - 1]! + failed[load - 1]!.retryAfterMs)
        }
      ),
      { numRuns: 40 }
    )
  })

  it("every time, requests far apart: the retry delays grow 1.6× from 1 s to at most 120 s (gRPC connection backoff)", async () => {
    let clockMs = 0
    const { store } = loadFaultyStore(InMemoryTranscriptStore.open(), () => "throw")
    const { events, model } = setup(store, () => clockMs)
    const { turn } = conversation(model)
    for (let index = 0; index < 12; index++) {
      await turn(index)
      clockMs += 200_000
    }
    expect(loadFailures(events).map((event) => event.retryAfterMs)).toEqual([
      0, 1_000, 1_600, 2_560, 4_096, 6_554, 10_486, 16_777, 26_844, 42_950, 68_719, 109_951, 120_000
    ])
  })
})

/** Lets the background load a request started settle (its `then` runs on a later turn of the event loop). */
const backgroundSettled = () => new Promise((resolve) => setImmediate(resolve))

const recoveries = (events: ReadonlyArray<ContextEvent>) =>
  events.flatMap((event) => (event.type === "store-load-recovered" ? [event] : []))

describe("a store whose load works again after failing", () => {
  it("the app is told once, with the failed loads and the outage's length; never while loads fail or when none failed", async () => {
    let clockMs = 1_000_000
    const inner = InMemoryTranscriptStore.open()
    // Loads 0–2 fail (the first, its retry at once, the retry 1 s later); load 3 works.
    const { store, loadTimes } = loadFaultyStore(inner, (load) => (load <= 2 ? "throw" : "ok"))
    const { events, model } = setup(store, () => clockMs)
    const { turn } = conversation(model)
    await turn(0)
    await backgroundSettled()
    expect(loadFailures(events).map((event) => event.consecutiveFailures)).toEqual([1, 2])
    expect(recoveries(events)).toEqual([])
    clockMs += 1_500
    await turn(1)
    await backgroundSettled()
    expect(loadFailures(events)).toHaveLength(3)
    expect(recoveries(events)).toEqual([])
    clockMs += 2_000
    await turn(2)
    await backgroundSettled()
    expect(loadTimes).toHaveLength(4)
    expect(recoveries(events)).toEqual([
      { type: "store-load-recovered", sessionId: "s", failedLoads: 3, outageMs: 3_500 }
    ])
    // The stored session is used from the next request on, and nothing more is reported.
    await turn(3)
    await turn(4)
    expect(recoveries(events)).toHaveLength(1)
    expect(await storedTexts(inner)).toEqual([
      "You review code.",
      "Turn 0",
      "noted",
      "Turn 1",
      "noted",
      "Turn 2",
      "noted",
      "Turn 3",
      "noted",
      "Turn 4"
    ])
  })

  it("a store whose loads never fail reports no recovery", async () => {
    const { events, model } = setup(InMemoryTranscriptStore.open())
    const { turn } = conversation(model)
    await turn(0)
    await turn(1)
    expect(recoveries(events)).toEqual([])
  })
})

describe("a store whose load fails when the controller reads a session again", () => {
  it("after another worker wrote to the session: the request goes out from memory, and the next one uses the store", async () => {
    const inner = InMemoryTranscriptStore.open()
    // This worker's second load (the read after its write was refused as stale) fails.
    const { store, loadTimes } = loadFaultyStore(inner, (load) => (load === 1 ? "throw" : "ok"))
    const here = setup(store)
    const history: Array<ModelMessage> = []
    await conversation(here.model, history).turn(0)
    // Another worker on the same store answers the next turn: this worker's session is now behind the store.
    await conversation(setup(inner).model, history).turn(1)
    const { turn } = conversation(here.model, history)
    await turn(2)
    // The first load, the failed read again, and its retry at once.
    expect(loadTimes).toHaveLength(3)
    expect(here.provider.calls).toHaveLength(2)
    expect(promptTexts(here.provider.calls[1]!.params)).toEqual(THIRD_TURN_PROMPT)
    expect(loadFailures(here.events).map((event) => event.error.detail)).toEqual(["connection refused (load 2)"])
    await turn(3)
    expect(await storedTexts(inner)).toEqual(promptTexts(here.provider.calls[2]!.params))
    const stored = (await inner.load("s")).entries.map((entry) => entry.id)
    expect(new Set(stored).size).toBe(stored.length)
  })
})

describe("a store whose load answers with something that is not a transcript", () => {
  it("is met as a failed load: the session opens in memory and the request goes out", async () => {
    const inner = InMemoryTranscriptStore.open()
    await expect(Session.make("s", loadFaultyStore(inner, () => "malformed").store)).rejects.toMatchObject({
      _tag: "PluginFailed",
      kind: "store",
      failure: "malformed"
    })
    const { store } = loadFaultyStore(inner, (load) => (load === 0 ? "malformed" : "ok"))
    const { events, provider, model } = setup(store)
    await conversation(model).turn(0)
    expect(provider.calls).toHaveLength(1)
    expect(loadFailures(events).map((event) => event.error.failure)).toEqual(["malformed"])
  })

  it("entries the engine would refuse (a row without schemaVersion, a number) are met as a failed load, naming the entry; once the store is repaired it is used", async () => {
    const inner = InMemoryTranscriptStore.open()
    await conversation(setup(inner).model).turn(0)
    const good = (await inner.load("s")).entries
    // A store that maps its rows by hand and drops a field, or hands back a corrupt row, on the active branch.
    const { schemaVersion: _dropped, ...withoutVersion } = good.at(-1)!
    for (const corrupt of [withoutVersion, 7]) {
      let repaired = false
      const store: Session.SessionStore = {
        ...loadFaultyStore(inner, () => "ok").store,
        load: async (sessionId) =>
          repaired ? inner.load(sessionId) : { entries: [...good.slice(0, -1), corrupt as Entry.Entry] }
      }
      const { events, provider, model } = setup(store)
      const { turn } = conversation(model, [
        { role: "user", content: "Turn 0" },
        { role: "assistant", content: "noted" }
      ])
      await turn(1)
      await turn(2)
      expect(provider.calls.map((call) => promptTexts(call.params).at(-1))).toEqual(["Turn 1", "Turn 2"])
      const failures = loadFailures(events)
      expect(failures.length).toBeGreaterThan(0)
      for (const failure of failures) {
        expect([failure.error.kind, failure.error.failure]).toEqual(["store", "malformed"])
        expect(failure.error.detail).toContain(`entries[${good.length - 1}]`)
      }
      repaired = true
      await turn(3)
      expect(promptTexts(provider.calls[2]!.params).at(-1)).toBe("Turn 3")
    }
  })
})

describe("a store whose load never settles", () => {
  afterEach(() => {
    vi.useRealTimers()
  })

  /** Advances the fake clock a load deadline at a time (at most `rounds` times) until `promise` settles. */
  const settled = async <A>(promise: Promise<A>, rounds = 3): Promise<A> => {
    let done = false
    const watched = promise.finally(() => {
      done = true
    })
    for (let round = 0; !done && round < rounds; round++)
      await vi.advanceTimersByTimeAsync(Session.STORE_LOAD_TIMEOUT_MS)
    if (!done) throw new Error(`still pending after ${rounds} load deadlines`)
    return watched
  }

  it("Session.make rejects with a store timeout after the plug-in deadline (60 s)", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    expect(Session.STORE_LOAD_TIMEOUT_MS).toBe(60_000)
    const { store } = loadFaultyStore(InMemoryTranscriptStore.open(), () => "hang")
    const opened = Session.make("s", store).then(
      () => "opened",
      (error: unknown) => error
    )
    await vi.advanceTimersByTimeAsync(59_999)
    let outcome: unknown = "pending"
    void opened.then((value) => {
      outcome = value
    })
    await vi.advanceTimersByTimeAsync(0)
    expect(outcome).toBe("pending")
    await vi.advanceTimersByTimeAsync(1)
    expect(await opened).toMatchObject({ _tag: "PluginFailed", kind: "store", failure: "timeout" })
  })

  it("a request aborted while the first load hangs settles at once with the abort's reason, not after the load deadline; the next request goes out", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    const { store } = loadFaultyStore(InMemoryTranscriptStore.open(), () => "hang")
    const { events, provider, model } = setup(store)
    const abort = new AbortController()
    const outcome = settlement(
      generateText({ model, messages: [{ role: "user", content: "Turn 0" }], abortSignal: abort.signal })
    )
    await vi.advanceTimersByTimeAsync(1_000)
    const reason = new Error("the user pressed stop")
    abort.abort(reason)
    await vi.advanceTimersByTimeAsync(0)
    expect(outcome()).toBe(reason)
    expect(provider.calls).toEqual([])
    expect(loadFailures(events)).toEqual([])
    // The load it waited for still opens the session (in memory after its deadline) for the next request.
    await settled(conversation(model).turn(0))
    expect(provider.calls).toHaveLength(1)
    expect(loadFailures(events).map((event) => event.error.failure)).toEqual(["timeout"])
  })

  it("the first request goes out after the load deadline, later ones at once while the retry hangs; once a load works the store is used", async () => {
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] })
    let clockMs = 0
    const inner = InMemoryTranscriptStore.open()
    const { store, loadTimes } = loadFaultyStore(inner, (load) => (load < 2 ? "hang" : "ok"))
    const { events, provider, model } = setup(store, () => clockMs)
    const { turn } = conversation(model)
    await settled(turn(0))
    expect(provider.calls).toHaveLength(1)
    expect(loadFailures(events).map((event) => [event.error.failure, event.retryAfterMs])).toEqual([["timeout", 0]])
    // The retry started at once, in the background, and hangs too: the next request does not wait for it.
    expect(loadTimes).toHaveLength(2)
    await turn(1)
    expect(provider.calls).toHaveLength(2)
    expect(loadTimes).toHaveLength(2)
    // The retry's deadline passes: the app is told, the next retry waits 1 s.
    await vi.advanceTimersByTimeAsync(Session.STORE_LOAD_TIMEOUT_MS)
    expect(loadFailures(events).map((event) => [event.error.failure, event.retryAfterMs])).toEqual([
      ["timeout", 0],
      ["timeout", 1_000]
    ])
    await turn(2)
    expect(loadTimes).toHaveLength(2)
    clockMs += 1_000
    // This request starts the retry (the store answers now) and goes out from memory; the next one uses the store.
    await turn(3)
    expect(loadTimes).toHaveLength(3)
    expect((await inner.load("s")).entries).toEqual([])
    await turn(4)
    expect(provider.calls).toHaveLength(5)
    expect(await storedTexts(inner)).toEqual(promptTexts(provider.calls[4]!.params))
    expect((await storedTexts(inner)).filter((text) => text.startsWith("Turn"))).toEqual([
      "Turn 0",
      "Turn 1",
      "Turn 2",
      "Turn 3",
      "Turn 4"
    ])
    expect(loadFailures(events)).toHaveLength(2)
  })
})
