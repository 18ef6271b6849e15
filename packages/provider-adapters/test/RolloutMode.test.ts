import { Entry, Measurer, type Message } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as ContextController from "../src/ContextController.ts"
import * as RolloutMode from "../src/RolloutMode.ts"

/** 12 turns, each reading a 400-line file: about 40,000 tokens, over a 24,000-token window. */
const conversation = (): Array<Message.Message> => {
  const messages: Array<Message.Message> = [
    { role: "user", content: [{ type: "text", text: "Fix src/auth/login.ts" }] }
  ]
  for (let turn = 0; turn < 12; turn++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: `c${turn}`, toolName: "read_file", input: { path: `src/m${turn}.ts` } }
      ]
    })
    messages.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `c${turn}`,
          toolName: "read_file",
          output: { type: "text", value: `export const v${turn} = 1\n`.repeat(400) }
        }
      ]
    })
    messages.push({ role: "assistant", content: [{ type: "text", text: `Read src/m${turn}.ts.` }] })
    messages.push({ role: "user", content: [{ type: "text", text: `Continue with step ${turn + 1}.` }] })
  }
  return messages
}

const model = { provider: "test", modelId: "test-model" }
const policy = { model: "test-model", contextWindowTokens: 24_000, maxOutputTokens: 2_000 }

const run = async (mode: RolloutMode.RolloutMode) => {
  const events: Array<ContextController.ContextEvent> = []
  const controller = ContextController.make({
    engine: TieredSummaryEngine.makeAsync(),
    policy,
    mode,
    onEvent: (event) => events.push(event)
  })
  const messages = conversation()
  const prepared = await controller.prepare(model, messages, [])
  const entries = (await controller.session(model)).entries()
  return { messages, prepared, entries, events }
}

describe("rollout modes", () => {
  it("shadow: records the checkpoint as a shadow entry and sends the request unchanged", async () => {
    const { messages, prepared, entries, events } = await run("shadow")
    expect(prepared.rewritten).toBe(false)
    expect(prepared.messages).toEqual(messages)
    expect(entries.some((entry) => entry.kind === "checkpoint" || entry.kind === "edit")).toBe(false)
    const shadows = RolloutMode.shadows(entries)
    expect(shadows).toHaveLength(1)
    expect(shadows[0]!.data.mode).toBe("shadow")
    expect(shadows[0]!.data.tokensAfter).toBeLessThan(shadows[0]!.data.tokensBefore)
    expect(shadows[0]!.data.checkpoint).not.toBeNull()
    expect(events.find((event) => event.type === "compaction")).toMatchObject({
      mode: "shadow",
      shadowEntryId: shadows[0]!.entryId
    })
  })

  /**
   * The conversation replayed step by step (a request at each user or tool message), recording where a compaction
   * happened and each request event; `usage`: a provider that reports what it was sent, counted as the local
   * tokenizer counts it.
   */
  const stepsOf = async (mode: RolloutMode.RolloutMode, all: ReadonlyArray<Message.Message>, usage = false) => {
    const events: Array<ContextController.ContextEvent> = []
    const controller = ContextController.make({
      engine: TieredSummaryEngine.makeAsync(),
      policy,
      mode,
      onEvent: (event) => events.push(event)
    })
    const compactedAt: Array<number> = []
    const requests: Array<{ rewritten: boolean; inputTokens: number }> = []
    const sentUnchanged: Array<boolean> = []
    for (let length = 2; length <= all.length; length++) {
      const seen = events.length
      const messages = all.slice(0, length)
      if (messages.at(-1)!.role === "assistant") continue
      const prepared = await controller.prepare(model, messages, [])
      sentUnchanged.push(JSON.stringify(prepared.messages) === JSON.stringify(messages))
      if (usage) {
        const measurer = Measurer.forPolicy(await controller.policyFor(model))
        const inputTokens = prepared.messages.reduce((sum, message) => sum + measurer.messageTokens(message), 0)
        await controller.recordSuccess(prepared, { inputTokens })
      }
      for (const event of events.slice(seen)) {
        if (event.type === "compaction") compactedAt.push(length)
        if (event.type === "request") requests.push({ rewritten: event.rewritten, inputTokens: event.inputTokens })
      }
    }
    return { compactedAt, requests, sentUnchanged, entries: (await controller.session(model)).entries() }
  }

  // New-user trial: `report --mode shadow` computed a compaction at every step once the request was over the
  // threshold (450 of 453 steps on pi's large session at 32K, 13× the active replay's time; with a model
  // summarizer, a summarizer call per step).
  it("shadow: compacts at the steps an active session would, step after step, and sends every request unchanged", async () => {
    const active = await stepsOf("active", conversation())
    const shadow = await stepsOf("shadow", conversation())
    expect(active.compactedAt.length).toBeGreaterThan(0)
    expect(shadow.compactedAt).toEqual(active.compactedAt)
    expect(shadow.sentUnchanged.every(Boolean)).toBe(true)
    expect(RolloutMode.shadows(shadow.entries)).toHaveLength(active.compactedAt.length)
    expect(shadow.entries.some((entry) => entry.kind === "checkpoint" || entry.kind === "edit")).toBe(false)
  })

  // New-user trial 2 (AI SDK middleware, a mock reporting usage): the provider's usage measures the request sent,
  // the application's, while the engine decides on the transcript with the shadows applied; anchored on that usage,
  // the shadow view was over the threshold again at every step (26 shadow compactions where active made 3).
  it("shadow with provider usage and an offloaded tool result: the same compactions as active; events report what was sent", async () => {
    const big = conversation()
    const bigResult = big[6]!
    if (bigResult.role !== "tool" || bigResult.content[0]?.type !== "tool-result") throw new Error("fixture")
    big[6] = {
      role: "tool",
      content: [{ ...bigResult.content[0], output: { type: "text", value: "export const big = 1\n".repeat(6_000) } }]
    }
    const active = await stepsOf("active", big, true)
    const shadow = await stepsOf("shadow", big, true)
    expect(active.compactedAt.length).toBeGreaterThan(0)
    expect(shadow.compactedAt).toEqual(active.compactedAt)
    // The shadow request events say what went out: never rewritten, and the big result counted as sent.
    expect(shadow.requests.every((request) => !request.rewritten)).toBe(true)
    expect(Math.max(...shadow.requests.map((request) => request.inputTokens))).toBeGreaterThan(
      policy.contextWindowTokens
    )
  })

  it("applied: a shadow's withheld entries come before it on the same path; other entries are the same objects", () => {
    const entries = [
      Entry.make(
        { id: "m1", parentId: null, timestamp: "t" },
        { kind: "message", message: { role: "user", content: "hi" } }
      ),
      Entry.make(
        { id: "s1", parentId: "m1", timestamp: "t" },
        {
          kind: "event",
          event: {
            name: RolloutMode.SHADOW_EVENT,
            data: {
              mode: "shadow",
              reasons: [],
              tokensBefore: 2,
              tokensAfter: 1,
              stages: [],
              checkpoint: null,
              entries: [
                {
                  id: "e1",
                  parentId: "m1",
                  timestamp: "t",
                  schemaVersion: 1,
                  kind: "event",
                  event: { name: "x", data: {} }
                }
              ]
            }
          }
        }
      ),
      Entry.make(
        { id: "m2", parentId: "s1", timestamp: "t" },
        { kind: "message", message: { role: "user", content: "go" } }
      )
    ]
    const view = RolloutMode.applied(entries)
    expect(view.map((entry) => [entry.id, entry.parentId])).toEqual([
      ["m1", null],
      ["e1", "m1"],
      ["s1", "e1"],
      ["m2", "s1"]
    ])
    expect(view[0]).toBe(entries[0])
    expect(view[3]).toBe(entries[2])
    expect(entries[1]!.parentId).toBe("m1")
    expect(RolloutMode.applied([entries[0]!, entries[2]!])).toEqual([entries[0], entries[2]])
  })

  it("advisory: applies the deterministic edits, records the checkpoint as a shadow entry", async () => {
    const { prepared, entries } = await run("advisory")
    expect(entries.some((entry) => entry.kind === "checkpoint")).toBe(false)
    expect(entries.some((entry) => entry.kind === "edit")).toBe(true)
    expect(RolloutMode.shadows(entries)).toHaveLength(1)
    expect(prepared.rewritten).toBe(true)
  })

  it("active: commits the checkpoint, writes no shadow entry", async () => {
    const { prepared, entries } = await run("active")
    expect(entries.some((entry) => entry.kind === "checkpoint")).toBe(true)
    expect(RolloutMode.shadows(entries)).toHaveLength(0)
    expect(prepared.messages.length).toBeLessThan(conversation().length)
  })
})
