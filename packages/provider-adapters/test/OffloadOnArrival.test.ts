import type { Message } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as ContextController from "../src/ContextController.ts"

const model = { provider: "openai.chat", modelId: "gpt-4o" }
const file = Array.from({ length: 3_000 }, (_, line) => `const value${line} = "${line.toString(36)}"`).join("\n")
const messages: ReadonlyArray<Message.Message> = [
  { role: "user", content: "Read src/big.ts" },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "r1", toolName: "read", input: { path: "src/big.ts" } }]
  },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "r1", toolName: "read", output: { type: "text", value: file } }]
  }
]

describe("offload as results arrive", () => {
  it("sends head + tail + pointer for a large result and keeps the original in the transcript", async () => {
    const controller = ContextController.make({
      engine: TieredSummaryEngine.makeAsync(),
      offload: { thresholdTokens: 2_000 }
    })
    const prepared = await controller.prepare(model, messages, [])
    const sent = JSON.stringify(prepared.messages[2])
    const toolEntry = prepared.session
      .entries()
      .find((entry) => entry.kind === "message" && entry.message.role === "tool")
    expect(prepared.rewritten).toBe(true)
    expect(sent).toContain(`transcript entry ${toolEntry!.id}`)
    expect(sent.length).toBeLessThan(file.length / 5)
    expect(toolEntry?.kind === "message" && toolEntry.message).toEqual(messages[2])
    expect(prepared.session.entries().filter((entry) => entry.kind === "edit")).toHaveLength(1)
    // Only the offloaded position is the view's: the others are the application's own message objects.
    expect(prepared.messages[0]).toBe(messages[0])
    expect(prepared.messages[1]).toBe(messages[1])
    // The next step re-sends the same history as new objects: no second offload edit, and the request is that
    // step's array with only the offloaded result replaced (the same rewritten message as before).
    const next: Array<Message.Message> = [...structuredClone(messages), { role: "assistant", content: "Read it." }]
    const second = await controller.prepare(model, next, [])
    expect(prepared.session.entries().filter((entry) => entry.kind === "edit")).toHaveLength(1)
    expect(second.rewritten).toBe(true)
    expect(second.messages).toHaveLength(4)
    for (const index of [0, 1, 3]) expect(second.messages[index]).toBe(next[index])
    expect(second.messages[2]).toBe(prepared.messages[2])
  })

  it("keeps the application's objects across messages the view dropped or inserted, and sends the view's values", async () => {
    const controller = ContextController.make({
      engine: TieredSummaryEngine.makeAsync(),
      offload: { thresholdTokens: 2_000 }
    })
    const interrupted: Message.Message = { role: "assistant", content: [{ type: "reasoning", text: "thinking" }] }
    const history: Array<Message.Message> = [
      ...structuredClone(messages),
      structuredClone(interrupted),
      structuredClone(interrupted),
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "r2", toolName: "read", input: { path: "src/other.ts" } }]
      },
      { role: "user", content: "Go on." }
    ]
    const prepared = await controller.prepare(model, history, [])
    const view = prepared.assembled.view.items.map((item) => item.message)
    // Two reasoning-only messages dropped, one result synthesized for the unanswered call, one result offloaded.
    expect(view).toHaveLength(history.length - 1)
    expect(prepared.rewritten).toBe(true)
    expect(prepared.messages).toEqual(view)
    const own = new Set<unknown>(history)
    expect(prepared.messages.map((message) => own.has(message))).toEqual([true, true, false, true, false, true])
    expect(prepared.messages[5]).toBe(history[6])
  })

  it("is off with offload: false, and tools kept whole are never offloaded", async () => {
    for (const options of [
      { offload: false as const },
      { offload: { thresholdTokens: 2_000, keepWholeTools: ["read"] } }
    ]) {
      const controller = ContextController.make({ engine: TieredSummaryEngine.makeAsync(), ...options })
      const prepared = await controller.prepare(model, messages, [])
      expect(prepared.rewritten).toBe(false)
      expect(prepared.messages).toEqual(messages)
    }
  })
})

describe("offload edits on a branch", () => {
  it("an offloaded result the branch keeps stays offloaded when the app rewrites a later message (as a fresh controller sends it)", async () => {
    const make = () =>
      ContextController.make({ engine: TieredSummaryEngine.makeAsync(), offload: { thresholdTokens: 2_000 } })
    const controller = make()
    const history: Array<Message.Message> = [...structuredClone(messages), { role: "user", content: "Go on." }]
    await controller.prepare(model, history, [])
    const rewritten: Array<Message.Message> = [...structuredClone(messages), { role: "user", content: "Stop here." }]
    const branched = await controller.prepare(model, rewritten, [])
    const fresh = await make().prepare(model, rewritten, [])
    expect(JSON.stringify(branched.messages[2]).length).toBeLessThan(file.length / 5)
    expect(branched.messages).toEqual(fresh.messages)
    // Append-only: the edit is carried to the new branch as a new entry; the old one stays in the transcript.
    const edits = branched.session.transcript().filter((entry) => entry.kind === "edit")
    expect(edits).toHaveLength(2)
    expect(branched.session.entries().filter((entry) => entry.kind === "edit")).toHaveLength(1)
  })
})
