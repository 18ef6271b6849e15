import { APICallError } from "@ai-sdk/provider"
import { ContextView, type Message, type ModelPolicy } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { SlidingWindowEngine, TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, streamText, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { measurer, pairingIntact, windowedModel } from "./support/MockProvider.ts"
import * as TestEngine from "./support/TestEngine.ts"

interface C11 {
  readonly policy: { readonly contextWindow: number; readonly maxOutputTokens: number }
  readonly providerReality: { readonly contextWindow: number }
  readonly messages: ReadonlyArray<Message.Message>
}

const c11 = loadCase<C11>("C11")
const system = c11.messages[0]!.content as string
const history = c11.messages.slice(1) as Array<ModelMessage>

const casePolicy: Partial<ModelPolicy.ModelPolicy> = {
  model: "claude-test",
  contextWindowTokens: c11.policy.contextWindow,
  maxOutputTokens: c11.policy.maxOutputTokens,
  reserveTokens: c11.policy.maxOutputTokens,
  keepRecentTokens: 20_000,
  toolLoopReserveTokens: 0,
  safetyMarginTokens: 0,
  tokenizer: "o200k_base"
}

const realWindow = c11.providerReality.contextWindow

const setup = (options: { readonly rejectAll?: boolean; readonly errorInStream?: boolean } = {}) => {
  const engine = TestEngine.make()
  const events: Array<ContextEvent> = []
  const mock = windowedModel({
    windowTokens: realWindow,
    maxOutputTokens: c11.policy.maxOutputTokens,
    replies: () => ({ text: "Log 3 had the most retries." }),
    ...options
  })
  const middleware = contextEngineMiddleware({ engine, policy: casePolicy, onEvent: (event) => events.push(event) })
  return { engine, events, ...mock, model: wrapLanguageModel({ model: mock.model, middleware }), middleware }
}

describe("C11 overflow recovery: compact and retry exactly once", () => {
  it("the case is what it says: the request fits the configured window but not the real one", () => {
    const tokens = measurer.measure(ContextView.fromMessages(c11.messages)).inputTokens
    expect(tokens + c11.policy.maxOutputTokens).toBeLessThan(c11.policy.contextWindow)
    expect(tokens + c11.policy.maxOutputTokens).toBeGreaterThan(realWindow)
  })

  it.each(["generate", "stream"] as const)(
    "scenario A (%s): one compact-and-retry against the reported limit; the retry succeeds",
    async (mode) => {
      const { engine, events, calls, model } = setup()
      const text =
        mode === "generate"
          ? (await generateText({ model, system, messages: history })).text
          : await streamText({ model, system, messages: history }).text
      expect(text).toBe("Log 3 had the most retries.")
      expect(calls).toHaveLength(2)
      expect(calls[0]!.rejected).toBe(true)
      // The local estimate said it fits the configured window…
      expect(calls[0]!.tokens + c11.policy.maxOutputTokens).toBeLessThan(c11.policy.contextWindow)
      // …the retry was compacted against the limit the error reported.
      expect(calls[1]!.rejected).toBe(false)
      expect(calls[1]!.tokens + c11.policy.maxOutputTokens).toBeLessThanOrEqual(realWindow)
      expect(pairingIntact(calls[1]!.params)).toBe(true)
      expect(calls[1]!.params.prompt.at(-1)).toEqual(calls[0]!.params.prompt.at(-1))
      // Exactly one compaction, with reason "overflow", against the reported 24,000-token window.
      expect(engine.compactions).toHaveLength(1)
      expect(engine.compactions[0]!.reasons).toContain("overflow")
      const overflow = events.find((event) => event.type === "overflow")
      expect(overflow).toMatchObject({ learnedWindowTokens: realWindow })
      // The overflow is recorded separately from usage outcomes.
      const recorded = engine.outcomes.map((entry) => entry.outcome)
      expect(recorded.filter((outcome) => outcome.overflow !== undefined)).toHaveLength(1)
      expect(recorded.find((outcome) => outcome.overflow)?.overflow?.limitTokens).toBe(realWindow)
      expect(recorded.filter((outcome) => outcome.inputTokens !== undefined)).toHaveLength(1)
    }
  )

  it("scenario B: one compact-and-retry, then the original overflow error surfaces; no loop", async () => {
    const { calls, model } = setup({ rejectAll: true })
    const error = await generateText({ model, system, messages: history, maxRetries: 0 }).catch(
      (caught: unknown) => caught
    )
    expect(APICallError.isInstance(error)).toBe(true)
    expect(calls).toHaveLength(2)
    // The surfaced error is the first rejection's, not the retry's.
    expect((error as APICallError).message).toBe(
      `prompt is too long: ${calls[0]!.tokens} tokens > ${realWindow} maximum`
    )
  })

  it("scenario B (stream, error as the first stream part): one retry, then the original error", async () => {
    const { calls, model } = setup({ rejectAll: true, errorInStream: true })
    const errors: Array<unknown> = []
    const result = streamText({
      model,
      system,
      messages: history,
      maxRetries: 0,
      onError: ({ error }) => void errors.push(error)
    })
    await result.consumeStream()
    expect(calls).toHaveLength(2)
    expect(errors).toHaveLength(1)
    expect(JSON.stringify(errors[0])).toContain(`prompt is too long: ${calls[0]!.tokens} tokens`)
  })

  it("later requests use the learned smaller window: no second overflow", async () => {
    const { calls, model, engine } = setup()
    await generateText({ model, system, messages: history })
    const followUp: Array<ModelMessage> = [
      ...history,
      { role: "assistant", content: "Log 3 had the most retries." },
      { role: "user", content: "And the fewest?" }
    ]
    await generateText({ model, system, messages: followUp })
    expect(calls).toHaveLength(3)
    expect(calls[2]!.rejected).toBe(false)
    expect(calls[2]!.tokens + c11.policy.maxOutputTokens).toBeLessThanOrEqual(realWindow)
    // The engine saw the learned window as the policy of the later request.
    expect(engine.outcomes.at(-1)!.policyWindow).toBe(realWindow)
  })

  it("look-alikes (rate limit) are never retried", async () => {
    const engine = TestEngine.make()
    let calls = 0
    const { model: inner } = windowedModel({ windowTokens: 1_000_000, replies: () => ({ text: "" }) })
    inner.doGenerate = async () => {
      calls++
      throw new APICallError({
        message: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 4000.",
        url: "https://api.openai.com/v1/chat/completions",
        requestBodyValues: {},
        statusCode: 429
      })
    }
    const model = wrapLanguageModel({
      model: inner,
      middleware: contextEngineMiddleware({ engine, policy: casePolicy })
    })
    const error = await generateText({ model, system, messages: history, maxRetries: 0 }).catch(
      (caught: unknown) => caught
    )
    expect((error as APICallError).statusCode).toBe(429)
    expect(calls).toBe(1)
    expect(engine.compactions).toHaveLength(0)
  })

  it("recovery can be turned off", async () => {
    const engine = TestEngine.make()
    const mock = windowedModel({ windowTokens: realWindow, maxOutputTokens: 4000, replies: () => ({ text: "" }) })
    const model = wrapLanguageModel({
      model: mock.model,
      middleware: contextEngineMiddleware({ engine, policy: casePolicy, overflowRecovery: false })
    })
    await expect(generateText({ model, system, messages: history, maxRetries: 0 })).rejects.toThrow(
      /prompt is too long/
    )
    expect(mock.calls).toHaveLength(1)
  })
})

describe.each([
  ["TieredSummaryEngine", () => TieredSummaryEngine.make()],
  ["SlidingWindowEngine", () => SlidingWindowEngine.make()]
] as const)("C11 with the real %s", (_, makeEngine) => {
  const run = (options: { readonly rejectAll?: boolean } = {}) => {
    const events: Array<ContextEvent> = []
    const mock = windowedModel({
      windowTokens: realWindow,
      maxOutputTokens: c11.policy.maxOutputTokens,
      replies: () => ({ text: "Log 3." }),
      ...options
    })
    const middleware = contextEngineMiddleware({
      engine: makeEngine(),
      policy: casePolicy,
      onEvent: (event) => events.push(event)
    })
    return { events, calls: mock.calls, model: wrapLanguageModel({ model: mock.model, middleware }) }
  }

  it("A: one compact-and-retry that fits the real window; the next request fits without another overflow", async () => {
    const { events, calls, model } = run()
    await generateText({ model, system, messages: history })
    expect(calls.map((call) => call.rejected)).toEqual([true, false])
    expect(calls[1]!.tokens + c11.policy.maxOutputTokens).toBeLessThanOrEqual(realWindow)
    expect(pairingIntact(calls[1]!.params)).toBe(true)
    expect(events.filter((event) => event.type === "overflow")).toHaveLength(1)
    await generateText({
      model,
      system,
      messages: [...history, { role: "assistant", content: "Log 3." }, { role: "user", content: "And the fewest?" }]
    })
    expect(calls).toHaveLength(3)
    expect(calls[2]!.rejected).toBe(false)
    expect(events.filter((event) => event.type === "overflow")).toHaveLength(1)
  })

  it("B: exactly two calls, then the original error", async () => {
    const { calls, model } = run({ rejectAll: true })
    const error = await generateText({ model, system, messages: history, maxRetries: 0 }).catch(
      (caught: unknown) => caught
    )
    expect(calls).toHaveLength(2)
    expect((error as APICallError).message).toContain(`prompt is too long: ${calls[0]!.tokens} tokens`)
  })
})
