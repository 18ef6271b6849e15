import { generateText, type ModelMessage, stepCountIs, streamText, wrapLanguageModel } from "ai"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { contextEnginePrepareStep } from "../src/PrepareStep.ts"
import {
  longHistory,
  pairingIntact,
  readTool,
  smallPolicy,
  toolLoopReplies,
  windowedModel
} from "./support/MockProvider.ts"
import * as TestEngine from "./support/TestEngine.ts"

const policy = smallPolicy

const system = "You are a coding agent. Use the tools."

describe("contextEngineMiddleware with MockLanguageModelV4", () => {
  it("throws an impossible policy when made; a window alone works for a model the catalog does not know", async () => {
    const engine = TestEngine.make()
    expect(() => contextEngineMiddleware({ engine, policy: { contextWindowTokens: -5 } })).toThrow(
      /contextWindowTokens = -5/
    )
    expect(() =>
      contextEngineMiddleware({
        engine,
        policy: { model: "claude-sonnet-4-5", contextWindowTokens: 8_000, maxOutputTokens: 64_000 }
      })
    ).toThrow(/maxOutputTokens = 64000/)
    // wqa5 item 6: as `--model m --context-window 2k` — output limit and reserve half the window (1,000)
    const events: Array<ContextEvent> = []
    const { model } = windowedModel({ windowTokens: 100_000, modelId: "m", replies: () => ({ text: "ok" }) })
    const middleware = contextEngineMiddleware({
      engine,
      policy: { contextWindowTokens: 2_000 },
      onEvent: (event) => events.push(event)
    })
    const result = await generateText({ model: wrapLanguageModel({ model, middleware }), prompt: "hi" })
    expect(result.text).toBe("ok")
    const request = events.find((event) => event.type === "request")
    if (request?.type !== "request") throw new Error("no request event")
    expect(request.contextWindowTokens).toBe(2_000)
    // 2,000 − the 1,000-token output reserve − tool-loop reserve and safety margin: positive, at most 1,000
    expect(request.budgetTokens).toBeGreaterThan(0)
    expect(request.budgetTokens).toBeLessThanOrEqual(1_000)
  })

  it("passes small prompts through unchanged (same params object) and records usage", async () => {
    const engine = TestEngine.make()
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "done" }) })
    const middleware = contextEngineMiddleware({ engine, policy: policy(100_000) })
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages: Array<ModelMessage> = [{ role: "user", content: "hi" }]
    const result = await generateText({ model: wrapped, system, messages })
    expect(result.text).toBe("done")
    expect(calls).toHaveLength(1)
    expect(calls[0]!.params.prompt.map((message) => message.role)).toEqual(["system", "user"])
    expect(engine.compactions).toHaveLength(0)
    expect(engine.outcomes).toHaveLength(1)
    expect(engine.outcomes[0]!.outcome.inputTokens).toBe(calls[0]!.tokens)
    expect(engine.outcomes[0]!.outcome.lastEntryId).toBeDefined()
  })

  it("a later step with new but equal message objects is sent as passed (not rebuilt), transcript not duplicated", async () => {
    const engine = TestEngine.make()
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "done" }) })
    const middleware = contextEngineMiddleware({ engine, policy: policy(100_000) })
    const wrapped = wrapLanguageModel({ model, middleware })
    const prompt = (extra: number) => [
      { role: "system" as const, content: system },
      ...Array.from({ length: 3 + extra }, (_, index) => ({
        role: "user" as const,
        content: [{ type: "text" as const, text: `message ${index}` }]
      }))
    ]
    await wrapped.doGenerate({ prompt: prompt(0) })
    const second = { prompt: prompt(1) }
    await wrapped.doGenerate(second)
    // The inner model got the caller's own prompt array back: nothing was rebuilt.
    expect(calls[1]!.params.prompt).toBe(second.prompt)
    const session = await middleware.controller.session({ provider: model.provider, modelId: model.modelId })
    expect(session.transcript().filter((entry) => entry.kind === "message")).toHaveLength(5)
  })

  it("generate: compacts a long history to fit, keeping system, the latest user message and tool pairing", async () => {
    const engine = TestEngine.make()
    const events: Array<ContextEvent> = []
    const { model, calls } = windowedModel({
      windowTokens: 8_000,
      maxOutputTokens: 1_000,
      replies: () => ({ text: "ok" })
    })
    const middleware = contextEngineMiddleware({
      engine,
      policy: policy(8_000),
      onEvent: (event) => events.push(event)
    })
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages = longHistory(12) as Array<ModelMessage>
    const result = await generateText({ model: wrapped, system, messages })
    expect(result.text).toBe("ok")
    expect(calls).toHaveLength(1)
    const sent = calls[0]!
    expect(sent.rejected).toBe(false)
    expect(sent.tokens + 1_000).toBeLessThanOrEqual(8_000)
    expect(sent.params.prompt[0]).toEqual({ role: "system", content: system })
    expect(sent.params.prompt.at(-1)).toEqual({
      role: "user",
      content: [{ type: "text", text: "Which files export value?" }]
    })
    expect(pairingIntact(sent.params)).toBe(true)
    expect(events.some((event) => event.type === "compaction")).toBe(true)
    // The application's history is untouched.
    expect(messages).toHaveLength(12 * 4 + 1)
    // The transcript kept every message; compaction only appended edit entries.
    const session = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    expect(session.entries().filter((entry) => entry.kind === "message")).toHaveLength(1 + 12 * 4 + 1)
    expect(session.entries().some((entry) => entry.kind === "edit")).toBe(true)
  })

  it("stream: compacts the same way and records usage from the finish part", async () => {
    const engine = TestEngine.make()
    const { model, calls } = windowedModel({
      windowTokens: 8_000,
      maxOutputTokens: 1_000,
      replies: () => ({ text: "streamed" })
    })
    const wrapped = wrapLanguageModel({ model, middleware: contextEngineMiddleware({ engine, policy: policy(8_000) }) })
    const result = streamText({ model: wrapped, system, messages: longHistory(12) as Array<ModelMessage> })
    expect(await result.text).toBe("streamed")
    expect(calls).toHaveLength(1)
    expect(calls[0]!.tokens + 1_000).toBeLessThanOrEqual(8_000)
    expect(pairingIntact(calls[0]!.params)).toBe(true)
    expect(engine.outcomes.map((entry) => entry.outcome.inputTokens)).toEqual([calls[0]!.tokens])
  })

  it("tool loop: 40 tool-heavy steps under an 8K window, every request fits and keeps pairing; the transcript loses nothing", async () => {
    const engine = TestEngine.make()
    const steps = 40
    const { model, calls } = windowedModel({
      windowTokens: 8_000,
      maxOutputTokens: 1_000,
      replies: toolLoopReplies(steps)
    })
    const middleware = contextEngineMiddleware({ engine, policy: policy(8_000) })
    const wrapped = wrapLanguageModel({ model, middleware })
    const result = await generateText({
      model: wrapped,
      system,
      tools: { read: readTool },
      messages: [{ role: "user", content: "Read every file." }],
      stopWhen: stepCountIs(steps)
    })
    expect(result.text).toBe("finished")
    expect(calls).toHaveLength(steps)
    for (const call of calls) {
      expect(call.rejected).toBe(false)
      expect(call.tokens + 1_000).toBeLessThanOrEqual(8_000)
      expect(pairingIntact(call.params)).toBe(true)
      expect(call.params.prompt[0]).toEqual({ role: "system", content: system })
    }
    expect(engine.compactions.length).toBeGreaterThan(0)
    const session = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    const messageEntries = session.entries().filter((entry) => entry.kind === "message")
    // system + user + (assistant call + tool result) for each step but the last one, whose answer is not re-sent.
    expect(messageEntries).toHaveLength(2 + 2 * (steps - 1))
  })

  it("streamText tool loop works the same", async () => {
    const engine = TestEngine.make()
    const steps = 15
    const { model, calls } = windowedModel({
      windowTokens: 6_000,
      maxOutputTokens: 1_000,
      replies: toolLoopReplies(steps)
    })
    const wrapped = wrapLanguageModel({ model, middleware: contextEngineMiddleware({ engine, policy: policy(6_000) }) })
    const result = streamText({
      model: wrapped,
      system,
      tools: { read: readTool },
      messages: [{ role: "user", content: "Read every file." }],
      stopWhen: stepCountIs(steps)
    })
    expect(await result.text).toContain("finished")
    expect(calls).toHaveLength(steps)
    expect(calls.every((call) => !call.rejected && pairingIntact(call.params))).toBe(true)
  })

  it("keeps the previous view when compaction fails and still sends the request", async () => {
    const engine = TestEngine.make({ failCompaction: true })
    const events: Array<ContextEvent> = []
    const { model, calls } = windowedModel({ windowTokens: 1_000_000, replies: () => ({ text: "ok" }) })
    const wrapped = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({ engine, policy: policy(8_000), onEvent: (event) => events.push(event) })
    })
    await generateText({ model: wrapped, system, messages: longHistory(12) as Array<ModelMessage> })
    expect(events.some((event) => event.type === "compaction-failed")).toBe(true)
    expect(calls[0]!.params.prompt).toHaveLength(1 + 12 * 4 + 1)
  })

  it("preserves providerOptions (cache control, signatures) on untouched messages", async () => {
    const engine = TestEngine.make()
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    const wrapped = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({ engine, policy: policy(100_000) })
    })
    await generateText({
      model: wrapped,
      messages: [
        {
          role: "user",
          content: [
            { type: "text", text: "cached", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } }
          ]
        },
        {
          role: "assistant",
          content: [
            { type: "reasoning", text: "think", providerOptions: { anthropic: { signature: "sig-1" } } },
            { type: "text", text: "a" }
          ]
        },
        { role: "user", content: "next" }
      ]
    })
    const prompt = calls[0]!.params.prompt
    expect(prompt[0]!.content[0]).toMatchObject({
      providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } }
    })
    expect(prompt[1]!.content[0]).toMatchObject({
      type: "reasoning",
      providerOptions: { anthropic: { signature: "sig-1" } }
    })
  })

  it("a session store receives every appended entry and a reopened middleware continues from it", async () => {
    const stored: Array<{ id: string; kind: string }> = []
    const store = {
      load: async () => ({ entries: stored as never[] }),
      append: async (_: string, entries: ReadonlyArray<{ id: string; kind: string }>) => {
        stored.push(...entries)
      }
    }
    const { model } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    const first = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({ engine: TestEngine.make(), policy: policy(100_000), store })
    })
    await generateText({ model: first, system, messages: [{ role: "user", content: "hi" }] })
    expect(stored.map((entry) => entry.kind)).toEqual(["message", "message"])
    const second = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({ engine: TestEngine.make(), policy: policy(100_000), store })
    })
    await generateText({
      model: second,
      system,
      messages: [
        { role: "user", content: "hi" },
        { role: "assistant", content: "ok" },
        { role: "user", content: "again" }
      ]
    })
    // Only the two new messages were appended: the reopened session matched the stored prefix.
    expect(stored.filter((entry) => entry.kind === "message")).toHaveLength(4)
  })
})

describe("contextEngineMiddleware concurrency", () => {
  it("concurrent requests of one session never duplicate transcript entries", async () => {
    const { model } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    const middleware = contextEngineMiddleware({ engine: TestEngine.make(), policy: policy(100_000) })
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages = longHistory(3) as Array<ModelMessage>
    await Promise.all([1, 2, 3, 4].map(() => generateText({ model: wrapped, system, messages })))
    const session = await middleware.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    expect(session.transcript().filter((entry) => entry.kind === "message")).toHaveLength(1 + messages.length)
  })
})

describe("contextEngineMiddleware recording is best effort", () => {
  it("a failing engine recordOutcome never loses the model's answer", async () => {
    const engine = TestEngine.make()
    const failing = { ...engine, recordOutcome: () => Effect.die(new Error("recording broke")) }
    const { model } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "answer" }) })
    const wrapped = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({ engine: failing, policy: policy(100_000) })
    })
    expect((await generateText({ model: wrapped, messages: [{ role: "user", content: "hi" }] })).text).toBe("answer")
    expect(await streamText({ model: wrapped, messages: [{ role: "user", content: "hi" }] }).text).toBe("answer")
  })
})

describe("contextEnginePrepareStep", () => {
  it("returns compacted messages per step without breaking pairing, and records each step's usage", async () => {
    const engine = TestEngine.make()
    const steps = 25
    const { model, calls } = windowedModel({
      windowTokens: 8_000,
      maxOutputTokens: 1_000,
      replies: toolLoopReplies(steps)
    })
    const tools = { read: readTool }
    const prepareStep = contextEnginePrepareStep({ engine, policy: policy(8_000), tools })
    const result = await generateText({
      model,
      system,
      tools,
      messages: [{ role: "user", content: "Read every file." }],
      prepareStep,
      stopWhen: stepCountIs(steps)
    })
    expect(result.text).toBe("finished")
    expect(calls).toHaveLength(steps)
    for (const call of calls) {
      expect(call.rejected).toBe(false)
      expect(pairingIntact(call.params)).toBe(true)
    }
    expect(engine.compactions.length).toBeGreaterThan(0)
    expect(engine.outcomes).toHaveLength(steps - 1)
    const session = await prepareStep.controller.session({ provider: "anthropic.messages", modelId: "claude-test" })
    // user + (call + result) per step but the last: the carried-forward override never branched the transcript.
    expect(session.entries().filter((entry) => entry.kind === "message")).toHaveLength(1 + 2 * (steps - 1))
  })
})
