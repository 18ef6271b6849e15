/**
 * An application that changes its first message (a system prompt rewritten
 * every step: the date, a step counter) resends a history that diverges at
 * position 0. The session continues on a new root; the store keeps every old
 * entry (append-only), and every reader of the store — `store.activeView`,
 * `ActiveView.reconstruct` on the stored entries, a reopened session — sees
 * the new history only, not the old one followed by the new one
 * (`BranchRoot`; s7 known problem).
 */

import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ActiveView, BranchRoot, InMemoryTranscriptStore, type Message } from "@context-engine/core"
import { JsonlTranscriptStore } from "@context-engine/core/node"
import { generateText, type ModelMessage } from "ai"
import { describe, expect, it } from "vitest"
import * as Session from "../src/Session.ts"
import { smallPolicy, tieredModel, windowedModel } from "./support/MockProvider.ts"

const text = (role: "system" | "user" | "assistant", value: string): Message.Message =>
  role === "system" ? { role, content: value } : { role, content: [{ type: "text", text: value }] }

describe("a history whose first message changed", () => {
  it("continues on a marked root: the store's view and a reopened session show the new history only", async () => {
    const store = InMemoryTranscriptStore.open()
    const session = await Session.make("s", store)
    const first = [text("system", "Step 1."), text("user", "deploy"), text("assistant", "deployed")]
    const second = [
      text("system", "Step 2."),
      text("user", "deploy"),
      text("assistant", "deployed"),
      text("user", "now roll back")
    ]
    await session.sync(first)
    await session.sync(second)
    expect(session.messages()).toEqual(second)
    const stored = (await store.load("s")).entries
    // Nothing deleted: both histories are in the store; the new one starts at a marked root.
    expect(stored).toHaveLength(first.length + second.length)
    const root = stored[first.length]!
    expect(root.parentId).toBeNull()
    expect(BranchRoot.isRoot(root)).toBe(true)
    expect(ActiveView.reconstruct(stored).view.items.map((item) => item.message)).toEqual(second)
    expect((await store.activeView("s")).view.items.map((item) => item.message)).toEqual(second)
    expect((await Session.make("s", store)).messages()).toEqual(second)
    // The old branch stays reachable by its leaf.
    expect(ActiveView.branch(stored, stored[first.length - 1]!.id).map((entry) => entry.id)).toEqual(
      stored.slice(0, first.length).map((entry) => entry.id)
    )
  })

  it("through the middleware with a system prompt that changes every step, on a JSONL store", async () => {
    const directory = mkdtempSync(join(tmpdir(), "new-root-"))
    const store = JsonlTranscriptStore.open({ directory })
    const provider = windowedModel({ windowTokens: 1_000_000, replies: (step) => ({ text: `answer ${step}` }) })
    const model = tieredModel(provider, {
      store,
      policy: smallPolicy(100_000)
    })
    const history: Array<ModelMessage> = []
    for (let step = 1; step <= 3; step++) {
      history.push({ role: "user", content: `question ${step}` })
      const result = await generateText({ model, instructions: `You help. This is step ${step}.`, messages: history })
      history.push(...result.responseMessages)
    }
    const sent = provider.calls.at(-1)!.params.prompt
    const reopened = JsonlTranscriptStore.open({ directory })
    const { view } = await reopened.activeView("s")
    // The last request's history: one system prompt (step 3's), the three questions, two answers.
    expect(view.items.map((item) => item.message.role)).toEqual(sent.map((message) => message.role))
    expect(view.items.filter((item) => item.message.role === "system")).toHaveLength(1)
    expect(JSON.stringify(view.items[0]!.message)).toContain("step 3")
    // Append-only: every step's system prompt is still stored; the two later histories start at marked roots.
    const stored = (await reopened.load("s")).entries
    expect(stored.filter((entry) => BranchRoot.isRoot(entry))).toHaveLength(2)
    expect(stored.filter((entry) => entry.kind === "message" && entry.message.role === "system")).toHaveLength(3)
  })

  it("an imported log whose entries all have parentId null still reads as one continuing branch", () => {
    const entries = [text("user", "a"), text("assistant", "b"), text("user", "c")].map((message, index) => ({
      id: `e${index}`,
      parentId: null,
      timestamp: "2026-01-01T00:00:00.000Z",
      schemaVersion: 1 as const,
      kind: "message" as const,
      message
    }))
    expect(ActiveView.branch(entries)).toBe(entries)
    expect(ActiveView.reconstruct(entries).view.items).toHaveLength(3)
  })
})
