/**
 * A store that fails while a compaction is saved (a database outage, a full
 * disk) is a failing plug-in: the compaction counts as failed, the previous
 * context stays in force, the app is told (`compaction-failed`), and the
 * request still goes out (DESIGN.md invariants). The session keeps nothing
 * the store refused, so a later compaction is tried again.
 */
import { type Entry, InMemoryTranscriptStore } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import type { SessionStore } from "../src/Session.ts"
import { smallPolicy, windowedModel } from "./support/MockProvider.ts"

const POLICY_WINDOW_TOKENS = 4_000

describe("a store outage while a compaction is saved", () => {
  it("the request still goes out with the previous context, the app is told, and a later compaction is saved once the store is back", async () => {
    const inner = InMemoryTranscriptStore.open()
    let down = true
    const failing = (entries: ReadonlyArray<Entry.Entry>) => {
      if (down && entries.some((entry) => entry.kind !== "message")) throw new Error("connection refused (store down)")
    }
    const store: SessionStore = {
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
    const model = wrapLanguageModel({
      model: provider.model,
      middleware: contextEngineMiddleware({
        engine: TieredSummaryEngine.make(),
        store,
        sessionId: "s",
        policy: smallPolicy(POLICY_WINDOW_TOKENS),
        offload: false,
        onEvent: (event) => events.push(event)
      })
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
