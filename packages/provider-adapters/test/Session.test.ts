/**
 * Session: learned windows from persisted `context-overflow` events.
 */
import { type Entry, InMemoryTranscriptStore, type Message, MessageSeal } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Session from "../src/Session.ts"
import { rewrapped } from "./support/MockProvider.ts"

const overflowEvent = (id: string, data: Record<string, unknown>, parentId: string | null = null): Entry.Entry =>
  ({
    id,
    parentId,
    timestamp: "2025-01-01T00:00:00.000Z",
    schemaVersion: 1,
    kind: "event",
    event: { name: "context-overflow", data }
  }) as Entry.Entry

const storeWith = (entries: ReadonlyArray<Entry.Entry>): Session.SessionStore => ({
  load: async () => ({ entries }),
  append: async () => undefined
})

describe("Session learned windows", () => {
  it("re-reads an event learned from numbers that contradict the measured request as the reported limit", async () => {
    // An older build learned 20,000 × 3,000 / 60,000 = 1,000 from "60000 > 20000" for a 3K-token prompt.
    const session = await Session.make(
      "s",
      storeWith([
        overflowEvent("e1", {
          model: "m",
          limitTokens: 20_000,
          requestedTokens: 60_000,
          measuredInputTokens: 3_000,
          learnedWindowTokens: 1_000
        })
      ])
    )
    expect(session.learnedWindow("m")).toBe(20_000)
  })

  it("keeps a window learned from consistent numbers, and the smallest of several", async () => {
    const session = await Session.make(
      "s",
      storeWith([
        overflowEvent("e1", {
          model: "m",
          limitTokens: 100_000,
          requestedTokens: 120_000,
          measuredInputTokens: 100_000,
          learnedWindowTokens: 83_333
        }),
        overflowEvent("e2", { model: "m", learnedWindowTokens: 90_000 }, "e1")
      ])
    )
    expect(session.learnedWindow("m")).toBe(83_333)
  })

  it("ignores persisted and recorded windows that are not finite numbers ≥ 1", async () => {
    const session = await Session.make(
      "s",
      storeWith([
        overflowEvent("e1", { model: "m", learnedWindowTokens: 0 }),
        overflowEvent("e2", { model: "m", learnedWindowTokens: -5 }, "e1"),
        overflowEvent("e3", { model: "m", learnedWindowTokens: "1000" }, "e2")
      ])
    )
    expect(session.learnedWindow("m")).toBeUndefined()
    session.learn("m", Number.NaN)
    session.learn("m", 0)
    expect(session.learnedWindow("m")).toBeUndefined()
    session.learn("m", 50_000)
    session.learn("m", 60_000)
    expect(session.learnedWindow("m")).toBe(50_000)
  })
})

describe("Session branches", () => {
  const text = (role: "user" | "assistant", value: string) => ({
    role,
    content: [{ type: "text" as const, text: value }]
  })

  it("a rewritten message continues on a branch that the store's view and a reopened session both follow", async () => {
    const store = InMemoryTranscriptStore.open()
    const session = await Session.make("s", store)
    await session.sync([text("user", "first"), text("assistant", "answer"), text("user", "deploy to prod")])
    await session.sync([text("user", "first"), text("assistant", "answer"), text("user", "deploy to staging")])
    const expected = [text("user", "first"), text("assistant", "answer"), text("user", "deploy to staging")]
    // The transcript keeps both versions; every view follows the branch.
    expect((await store.load("s")).entries).toHaveLength(4)
    expect((await store.activeView("s")).view.items.map((item) => item.message)).toEqual(expected)
    const reopened = await Session.make("s", store)
    expect(reopened.entries().map((entry) => (entry.kind === "message" ? entry.message : entry.kind))).toEqual(expected)
  })
})

describe("Session.sync", () => {
  const history = (): Array<Message.Message> => [
    { role: "system", content: "You are a coding agent." },
    { role: "user", content: [{ type: "text", text: "Read src/app.ts" }] },
    {
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: "call-1", toolName: "read", input: { path: "src/app.ts" } }]
    },
    {
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "call-1", toolName: "read", output: { type: "text", value: "x = 1" } }
      ]
    }
  ]

  it("appends only new messages when every call passes new, equal objects (as the AI SDK does)", async () => {
    const session = await Session.make("s")
    expect(await session.sync(history())).toHaveLength(4)
    const appended = await session.sync([...history(), { role: "user", content: "next" }])
    expect(appended.map((entry) => entry.message)).toEqual([{ role: "user", content: "next" }])
    expect(session.transcript()).toHaveLength(5)
    expect(session.messageEntries()).toHaveLength(5)
    // The entries keep the first objects synced; nothing is re-appended for a third equal history.
    expect(await session.sync([...history(), { role: "user", content: "next" }])).toHaveLength(0)
  })

  it("branches when an earlier message changed: a tool result, a tool input, a text of the same length", async () => {
    const changes: ReadonlyArray<(messages: Array<Message.Message>) => void> = [
      (messages) => {
        messages[3] = {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId: "call-1", toolName: "read", output: { type: "text", value: "x = 22" } }
          ]
        }
      },
      (messages) => {
        messages[2] = {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "call-1", toolName: "read", input: { path: "src/lib.ts" } }]
        }
      },
      (messages) => {
        messages[1] = { role: "user", content: [{ type: "text", text: "Read src/app.js" }] }
      }
    ]
    for (const change of changes) {
      const session = await Session.make("s")
      await session.sync(history())
      const rewritten = history()
      change(rewritten)
      const appended = await session.sync(rewritten)
      const firstChanged = rewritten.findIndex(
        (message, index) => JSON.stringify(message) !== JSON.stringify(history()[index])
      )
      expect(appended).toHaveLength(rewritten.length - firstChanged)
      expect(session.transcript()).toHaveLength(4 + appended.length)
      expect(session.entries().map((entry) => (entry as Entry.MessageEntry).message)).toEqual(rewritten)
    }
  })

  it("matches new wrappers around the same values, and still notices an earlier part's field rewritten", async () => {
    const first = history()
    const session = await Session.make("s")
    await session.sync(first)
    expect(await session.sync(rewrapped(first))).toHaveLength(0)
    // Same wrappers, but the tool call's input replaced (an app rewrote it): a branch from there on.
    const rewritten = rewrapped(first)
    const call = (rewritten[2]!.content as Array<Record<string, unknown>>)[0]!
    call.input = { path: "src/other.ts" }
    const appended = await session.sync(rewritten)
    expect(appended.map((entry) => entry.message)).toEqual(rewritten.slice(2))
    // A field added to a part is a change too.
    const extended = rewrapped(rewritten)
    ;(extended[3]!.content as Array<Record<string, unknown>>)[0]!.isError = true
    expect(await session.sync(extended)).toHaveLength(1)
  })

  it("notices a one-character edit inside a long earlier text, at any position (a sampled fingerprint missed it)", async () => {
    // 4,000 characters: the previous fingerprint hashed a long text by its length and 32 evenly spaced
    // characters, so an edit of the same length between two samples kept the old message in the transcript.
    const long = `${"x".repeat(2_000)}rm -rf /tmp/build-a${"y".repeat(1_981)}`
    const conversation = (text: string): Array<Message.Message> => [
      { role: "user", content: [{ type: "text", text }] },
      { role: "assistant", content: [{ type: "text", text: "ok" }] },
      { role: "user", content: "next" }
    ]
    for (const position of [2_017, 2_018, 1, 3_999]) {
      const edited = `${long.slice(0, position)}#${long.slice(position + 1)}`
      expect(edited).toHaveLength(long.length)
      const session = await Session.make("s")
      await session.sync(conversation(long))
      const appended = await session.sync(conversation(edited))
      expect(appended).toHaveLength(3)
      expect((session.messageEntries()[0]!.message.content as Array<{ text: string }>)[0]!.text).toBe(edited)
    }
  })

  it("compares bytes by content and ignores provider options, as values", async () => {
    const withFile = (bytes: Uint8Array, providerOptions?: Message.ProviderOptions): Array<Message.Message> => [
      {
        role: "user",
        content: [
          { type: "file", data: bytes, mediaType: "image/png", ...(providerOptions ? { providerOptions } : {}) }
        ]
      }
    ]
    const session = await Session.make("s")
    await session.sync(withFile(new Uint8Array([1, 2, 3])))
    // Equal bytes in a new array, and a cache-control option moved onto the message: the same message.
    const cached = { anthropic: { cacheControl: { type: "ephemeral" } } }
    expect(await session.sync(withFile(new Uint8Array([1, 2, 3]), cached))).toHaveLength(0)
    // One byte changed: an edit.
    expect(await session.sync(withFile(new Uint8Array([1, 2, 4])))).toHaveLength(1)
  })

  it("names appended messages with the caller's ids by position, and falls back to its own where an id is missing or taken", async () => {
    const ids = ["t:0", "t:1", undefined, "t:0", "t:4"]
    const session = await Session.make("s", undefined, (position) => ids[position])
    await session.sync(history().slice(0, 2))
    await session.sync([...history(), { role: "user", content: "next" }])
    const named = session.messageEntries().map((entry) => entry.id)
    expect(named.slice(0, 2)).toEqual(["t:0", "t:1"])
    expect(named[4]).toBe("t:4")
    // position 2 has no id, position 3 repeats t:0: the session's own ids, all distinct
    expect(named[2]).toMatch(/^s:\d+$/)
    expect(named[3]).toMatch(/^s:\d+$/)
    expect(new Set(session.transcript().map((entry) => entry.id)).size).toBe(session.transcript().length)
  })

  it("a shorter history continues on a branch after the last kept message", async () => {
    const session = await Session.make("s")
    await session.sync(history())
    expect(await session.sync(history().slice(0, 2))).toHaveLength(0)
    expect(session.messageEntries()).toHaveLength(2)
    expect(session.transcript()).toHaveLength(4)
  })

  it("holds sealed copies of the synced messages (MessageSeal); the caller's objects are left as they were", async () => {
    const session = await Session.make("s")
    const sent = history()
    await session.sync(sent)
    const held = session.messageEntries().map((entry) => entry.message)
    expect(held).toEqual(sent)
    expect(held.every(MessageSeal.isSealed)).toBe(true)
    expect(sent.some((message) => Object.isFrozen(message))).toBe(false)
    // The caller edits its own object in place after the sync: the session's message is not changed by it, and
    // the next sync of the edited history notices the edit (a branch from the message before it).
    const edited = sent[1]!.content as Array<{ type: string; text?: string }>
    const before = structuredClone(held[1])
    edited[0]!.text = "edited in place"
    expect(session.messageEntries()[1]!.message).toEqual(before)
    expect(await session.sync(sent)).toHaveLength(3)
    // The flat message array follows the branch, position by position.
    const onBranch = session.messageEntries().map((entry) => entry.message)
    expect(session.messages()).toHaveLength(onBranch.length)
    expect(session.messages().every((message, index) => message === onBranch[index])).toBe(true)
    // A reopened session seals what the store loads, leaving the store's entries as they were.
    const stored = session.transcript()
    const plain = stored.map((entry) => structuredClone(entry))
    const reopened = await Session.make("s", storeWith(plain))
    expect(reopened.messageEntries().every((entry) => MessageSeal.isSealed(entry.message))).toBe(true)
    expect(plain.some((entry) => entry.kind === "message" && Object.isFrozen(entry.message))).toBe(false)
  })
})

describe("Session writes", () => {
  it("writes started together run in call order: each links to what the earlier ones left, in memory and in the store", async () => {
    const inner = InMemoryTranscriptStore.open()
    // A slow store: every write waits, so a write started meanwhile would see the path before the earlier one's entries.
    const store: Session.SessionStore = {
      load: (sessionId) => inner.load(sessionId),
      append: async (sessionId, entries) => {
        await new Promise((resolve) => setTimeout(resolve, 5))
        return inner.append(sessionId, entries)
      }
    }
    const session = await Session.make("s", store)
    await session.sync([{ role: "user", content: "start" }])
    const event = (id: string): Entry.Entry =>
      ({
        id,
        parentId: null,
        timestamp: "2025-01-01T00:00:00.000Z",
        schemaVersion: 1,
        kind: "event",
        event: { name: "note", data: {} }
      }) as Entry.Entry
    await Promise.all([
      session.append([event("a")]),
      session.append([event("b")]),
      session.sync([
        { role: "user", content: "start" },
        { role: "assistant", content: "ok" }
      ])
    ])
    const path = session.entries()
    expect(path.map((entry) => entry.kind)).toEqual(["message", "event", "event", "message"])
    // One chain: every entry's parent is the entry before it.
    expect(path.map((entry) => entry.parentId)).toEqual([null, ...path.slice(0, -1).map((entry) => entry.id)])
    expect((await inner.load("s")).entries.map((entry) => entry.id)).toEqual(path.map((entry) => entry.id))
  })
})
