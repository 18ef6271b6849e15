/**
 * Resume and idle return (issue #15 req 5): a resumed session sends the
 * turns a crashed process never summarized verbatim, once; a chat returning
 * after the prompt cache expired with ≥ 100K tokens is compacted before the
 * request, once per cache window, remembered across restarts.
 */
import { type Entry, InMemoryTranscriptStore, type Message } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as ContextController from "../src/ContextController.ts"
import * as IdleReturn from "../src/IdleReturn.ts"

const model = { provider: "anthropic.messages", modelId: "claude-sonnet-4-5" } // 200K window, 5-minute prompt cache
const T0 = Date.UTC(2026, 0, 1, 12)

const history = (turns: number, chars: number): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++)
    messages.push(
      { role: "user", content: `Task ${turn}: explain src/part${turn}.ts` },
      {
        role: "assistant",
        content: `Part ${turn}: ${`the loader of part ${turn} reads config ${turn}. `.repeat(chars / 40)}`
      }
    )
  return messages
}
const entriesOf = (messages: ReadonlyArray<Message.Message>, atMs: number): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `m${index}`,
    parentId: index === 0 ? null : `m${index - 1}`,
    timestamp: new Date(atMs).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))

describe("idle return", () => {
  it("compacts a ≥100K-token request after the cache expired, once per cache window, across restarts", async () => {
    const messages = history(20, 24_000) // ~130K tokens
    const store = InMemoryTranscriptStore.open()
    await store.append("s", entriesOf(messages, T0))
    const next = [...messages, { role: "user", content: "And part 3 again?" } as Message.Message]
    const events: Array<ContextController.ContextEvent> = []
    const open = (nowMs: number) =>
      ContextController.make({
        engine: TieredSummaryEngine.makeAsync(),
        store,
        sessionId: "s",
        now: () => new Date(nowMs),
        onEvent: (event) => events.push(event)
      })

    // Within the cache window: nothing happens although the request is large.
    const warm = await open(T0 + 60_000).prepare(model, next, [])
    expect(warm.assembled.measurement.inputTokens).toBeGreaterThanOrEqual(IdleReturn.DEFAULT_THRESHOLD_TOKENS)
    expect(warm.assembled.measurement.inputTokens).toBeLessThan(warm.assembled.measurement.budgetTokens)
    expect(events.filter((event) => event.type === "compaction")).toHaveLength(0)

    // A restarted process 10 minutes after the last request: compacts before sending.
    const store2 = InMemoryTranscriptStore.open()
    await store2.append("s", entriesOf(messages, T0))
    const later = T0 + 10 * 60_000
    const controller = ContextController.make({
      engine: TieredSummaryEngine.makeAsync(),
      store: store2,
      sessionId: "s",
      now: () => new Date(later),
      onEvent: (event) => events.push(event)
    })
    const cold = await controller.prepare(model, next, [])
    expect(events.filter((event) => event.type === "compaction")).toHaveLength(1)
    expect(cold.assembled.measurement.inputTokens).toBeLessThan(IdleReturn.DEFAULT_THRESHOLD_TOKENS)
    const stored = (await store2.load("s")).entries
    expect(
      stored.filter((entry) => entry.kind === "event" && entry.event.name === IdleReturn.IDLE_COMPACTION_EVENT)
    ).toHaveLength(1)
    expect(stored.some((entry) => entry.kind === "checkpoint")).toBe(true)

    // Restarted again in the same cache window: remembered, no second idle compaction.
    const again = ContextController.make({
      engine: TieredSummaryEngine.makeAsync(),
      store: store2,
      sessionId: "s",
      now: () => new Date(later + 1_000),
      onEvent: (event) => events.push(event)
    })
    await again.prepare(model, next, [])
    expect(events.filter((event) => event.type === "compaction")).toHaveLength(1)
  }, 120_000)

  it("is due only past the TTL, at or over the threshold, and not twice for one window", () => {
    const base = { entries: [], lastMs: T0, ttlMs: 300_000, inputTokens: 100_000 }
    expect(IdleReturn.isDue({ ...base, nowMs: T0 + 299_999 })).toBe(false)
    expect(IdleReturn.isDue({ ...base, nowMs: T0 + 300_000 })).toBe(true)
    expect(IdleReturn.isDue({ ...base, nowMs: T0 + 300_000, inputTokens: 99_999 })).toBe(false)
    expect(IdleReturn.isDue({ ...base, nowMs: T0 + 300_000, ttlMs: 0 })).toBe(false)
    const recorded = IdleReturn.event({
      id: "e",
      parentId: null,
      lastMs: T0,
      nowMs: T0 + 400_000,
      inputTokens: 100_000
    })
    expect(IdleReturn.isDue({ ...base, entries: [recorded], nowMs: T0 + 500_000 })).toBe(false)
  })
})

describe("resume", () => {
  it("sends the turns after the checkpoint that were never summarized verbatim, once", async () => {
    const messages = history(6, 400)
    const entries = entriesOf(messages, T0)
    const checkpoint: Entry.CheckpointEntry = {
      id: "cp1",
      parentId: "m6",
      timestamp: new Date(T0).toISOString(),
      schemaVersion: 1,
      kind: "checkpoint",
      checkpoint: {
        id: "checkpoint:1:m4",
        generation: 1,
        coveredRange: { fromEntryId: null, toEntryId: "m4" },
        firstKeptEntryId: "m5",
        tokensBefore: 2_000,
        tokensAfter: 800,
        summarizer: { kind: "extractive", promptVersion: "test" },
        text: "Parts 0 and 1 explained.",
        createdAt: new Date(T0).toISOString()
      }
    }
    // The process wrote the checkpoint after m6, then appended m7 … m12 and died before compacting again.
    const stored = [
      ...entries.slice(0, 7),
      checkpoint,
      ...entries.slice(7).map((entry, index) => (index === 0 ? { ...entry, parentId: "cp1" } : entry))
    ]
    const store = InMemoryTranscriptStore.open()
    await store.append("s", stored.filter((entry) => entry.kind !== "checkpoint").slice(0, 7))
    await store.installCheckpoint("s", checkpoint)
    await store.append("s", stored.slice(8))
    const controller = ContextController.make({ engine: TieredSummaryEngine.makeAsync(), store, sessionId: "s" })
    const next = [...messages, { role: "user", content: "Continue." } as Message.Message]
    const prepared = await controller.prepare(model, next, [])
    const sent = prepared.messages.map((message) => JSON.stringify(message))
    expect(sent.some((text) => text.includes("Parts 0 and 1 explained."))).toBe(true)
    for (const message of messages.slice(5))
      expect(sent.filter((text) => text === JSON.stringify(message))).toHaveLength(1)
    for (const message of messages.slice(1, 5)) expect(sent).not.toContain(JSON.stringify(message))
    expect(prepared.messages.at(-1)).toEqual({ role: "user", content: "Continue." })
    expect(prepared.session.entries().filter((entry) => entry.kind === "message")).toHaveLength(next.length)
  })
})

describe("IdleReturn.makeLastRequestTracker", () => {
  const at = (id: string, iso: string): Entry.Entry => ({
    id,
    parentId: null,
    timestamp: iso,
    schemaVersion: 1,
    kind: "message",
    message: { role: "user", content: id }
  })

  it("follows an appended log and rescans a log whose entries were replaced", () => {
    const tracker = IdleReturn.makeLastRequestTracker()
    const log = [at("a", "2026-01-01T12:00:00.000Z"), at("b", "2026-01-01T12:05:00.000Z")]
    expect(tracker(log)).toBe(Date.parse("2026-01-01T12:05:00.000Z"))
    log.push(at("c", "2026-01-01T12:09:00.000Z"), at("d", "not a date"))
    expect(tracker(log.slice())).toBe(Date.parse("2026-01-01T12:09:00.000Z"))
    // A different (older) log: not an extension, so the newest is its own, not the previous one's.
    const other = [at("x", "2026-01-01T11:00:00.000Z"), at("y", "2026-01-01T11:30:00.000Z")]
    expect(tracker(other)).toBe(Date.parse("2026-01-01T11:30:00.000Z"))
    expect(tracker(other)).toBe(IdleReturn.lastRequestMs(other))
  })
})
