/**
 * Shared case C19 (../shared/cases): provider-native compaction configured
 * (OpenAI Responses `contextManagement`) on a route that does not compact.
 * Through the AI SDK middleware with `MockLanguageModelV4`: A (200, no
 * compaction item), B (HTTP 500) and C (stream stalls after
 * `response.in_progress`) fall back to local compaction and the request
 * still goes out; the look-alikes `rateLimited` (429) and `control` (one
 * compaction item) do not.
 */
import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4Content,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4StreamPart
} from "@ai-sdk/provider"
import type { Entry, ModelPolicy } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { ProviderNativeEngine, TieredSummaryEngine } from "@context-engine/engines"
import { generateText, jsonSchema, type ModelMessage, streamText, type ToolSet, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import * as NativeFallback from "../src/NativeFallback.ts"
import { usage } from "./support/MockProvider.ts"

interface CaseResponse {
  readonly content: ReadonlyArray<Record<string, unknown>>
  readonly usage: { readonly inputTokens: number; readonly outputTokens: number }
}
interface C19 {
  readonly policy: Cases.CasePolicy
  readonly route: {
    readonly provider: string
    readonly model: string
    readonly nativeCompaction: { readonly providerOptions: Record<string, Record<string, unknown>> }
  }
  readonly providerResponses: {
    readonly A: { readonly response: CaseResponse; readonly appendThen: Array<ModelMessage> }
    readonly B: { readonly status: number; readonly headers: Record<string, string>; readonly body: unknown }
    readonly C: { readonly stream: ReadonlyArray<string> }
    readonly rateLimited: { readonly status: number; readonly headers: Record<string, string>; readonly body: unknown }
    readonly control: { readonly response: CaseResponse }
  }
  readonly messages: Array<ModelMessage>
}

const c19 = loadCase<C19>("C19")
const appOptions = c19.route.nativeCompaction.providerOptions
const threshold = (appOptions.openai!.contextManagement as Array<{ compactThreshold: number }>)[0]!.compactThreshold
const policy: ModelPolicy.ModelPolicy = {
  ...Cases.policySync(c19.policy, c19.route.model),
  nativeCompaction: { anthropicContextEditing: false, anthropicCompaction: false, openaiResponsesCompaction: true }
}
const system = c19.messages[0]!.content as string
/** The conversation without the system message (the AI SDK takes it as `system`). */
const conversation = c19.messages.slice(1)
const tools = { bash: tool({ inputSchema: jsonSchema<{ command: string }>({ type: "object" }) }) } as unknown as ToolSet

/** The case's response content in the AI SDK V4 shape (tool inputs are JSON strings). */
const contentOf = (response: CaseResponse): Array<LanguageModelV4Content> =>
  response.content.map((part) =>
    part.type === "tool-call"
      ? ({ ...part, input: JSON.stringify(part.input) } as LanguageModelV4Content)
      : (part as unknown as LanguageModelV4Content)
  )

const answer = (response: CaseResponse): LanguageModelV4GenerateResult => ({
  content: contentOf(response),
  finishReason: { unified: "tool-calls", raw: undefined },
  usage: usage(response.usage.inputTokens, response.usage.outputTokens),
  warnings: []
})

const httpError = (status: number, headers: Record<string, string>, body: unknown): APICallError =>
  new APICallError({
    message: (body as { error: { message: string } }).error.message,
    url: "https://llm-gateway.corp.example.com/openai/v1/responses",
    requestBodyValues: {},
    statusCode: status,
    responseHeaders: headers,
    responseBody: JSON.stringify(body),
    isRetryable: status === 429 || status >= 500
  })

const carriesNative = (params: LanguageModelV4CallOptions): boolean =>
  NativeFallback.thresholdTokens(params.providerOptions) !== undefined

/** A wrapped model on the case's route whose inner model answers with `reply`. */
const harness = (
  reply: (params: LanguageModelV4CallOptions, call: number) => LanguageModelV4GenerateResult,
  stream?: (params: LanguageModelV4CallOptions, call: number) => ReadableStream<LanguageModelV4StreamPart>
) => {
  const calls: Array<LanguageModelV4CallOptions> = []
  const events: Array<ContextEvent> = []
  const inner = new MockLanguageModelV4({
    provider: "openai.responses",
    modelId: c19.route.model,
    doGenerate: async (params) => {
      calls.push(params)
      return reply(params, calls.length - 1)
    },
    doStream: async (params) => {
      calls.push(params)
      return { stream: stream!(params, calls.length - 1) }
    }
  })
  const middleware = contextEngineMiddleware({
    engine: ProviderNativeEngine.make({ fallback: TieredSummaryEngine.make({ memory: { extractor: null } }) }),
    policy,
    nativeResponseTimeoutMs: 200,
    onEvent: (event) => events.push(event)
  })
  const model = wrapLanguageModel({ model: inner, middleware })
  const transcript = async (): Promise<ReadonlyArray<Entry.Entry>> =>
    (await middleware.controller.session({ provider: "openai.responses", modelId: c19.route.model })).transcript()
  return { model, calls, events, middleware, transcript }
}

/** One request of the case's app through `h`: its system prompt, native-compaction options and (unless off) tools; no SDK retries. */
const send = (
  h: ReturnType<typeof harness>,
  messages: Array<ModelMessage>,
  options: { readonly tools?: boolean } = {}
) =>
  generateText({
    model: h.model,
    system,
    messages,
    ...(options.tools === false ? {} : { tools }),
    providerOptions: appOptions as never,
    maxRetries: 0
  })

/** A stream that starts (`response.created` / `response.in_progress`) and then sends nothing more. */
const stalledStream = (onCancel?: () => void): ReadableStream<LanguageModelV4StreamPart> =>
  new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      controller.enqueue({ type: "stream-start", warnings: [] })
      controller.enqueue({ type: "response-metadata", id: "resp_0b3d9e7a", modelId: c19.route.model })
      // … and no further bytes.
    },
    cancel() {
      onCancel?.()
    }
  })

/** A stream that answers `answerText` and finishes. */
const textStream = (answerText: string): ReadableStream<LanguageModelV4StreamPart> =>
  new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      controller.enqueue({ type: "stream-start", warnings: [] })
      controller.enqueue({ type: "text-start", id: "t" })
      controller.enqueue({ type: "text-delta", id: "t", delta: answerText })
      controller.enqueue({ type: "text-end", id: "t" })
      controller.enqueue({ type: "finish", finishReason: { unified: "stop", raw: undefined }, usage: usage(1200, 6) })
      controller.close()
    }
  })

const nativeEvents = (events: ReadonlyArray<ContextEvent>) =>
  events.filter(
    (event): event is Extract<ContextEvent, { type: "native-unavailable" }> => event.type === "native-unavailable"
  )
const requests = (events: ReadonlyArray<ContextEvent>) =>
  events.filter((event): event is Extract<ContextEvent, { type: "request" }> => event.type === "request")
const checkpoints = (entries: ReadonlyArray<Entry.Entry>) => entries.filter((entry) => entry.kind === "checkpoint")
const parts = (params: LanguageModelV4CallOptions): Array<{ type: string }> =>
  params.prompt.flatMap((message) =>
    typeof message.content === "string" ? [] : (message.content as Array<{ type: string }>)
  )
const text = (params: LanguageModelV4CallOptions): string => JSON.stringify(params.prompt)

/** What every fallback scenario must show on the request after the failure. */
const expectLocalFallback = async (
  h: ReturnType<typeof harness>,
  retried: LanguageModelV4CallOptions,
  reason: NativeFallback.Reason
) => {
  // Native is off for the route, with the reason, recorded as a failed attempt (an event, never a compaction).
  expect(nativeEvents(h.events).map((event) => [event.route, event.reason, event.thresholdTokens])).toEqual([
    [`openai.responses:${c19.route.model}`, reason, threshold]
  ])
  expect(h.middleware.controller.nativeRoutes.reasonFor(`openai.responses:${c19.route.model}`)).toBe(reason)
  const entries = await h.transcript()
  expect(
    entries.filter((entry) => entry.kind === "event" && entry.event.name === NativeFallback.EVENT_UNAVAILABLE)
  ).toHaveLength(1)
  expect(
    entries.filter((entry) => entry.kind === "event" && entry.event.name === ProviderNativeEngine.EVENT_COMPACTION)
  ).toEqual([])
  // The compaction native was to do is done locally in the same turn: a local checkpoint, carried by the request.
  expect(checkpoints(entries)).toHaveLength(1)
  const compaction = h.events.find((event) => event.type === "compaction")
  expect(compaction).toMatchObject({ reasons: expect.arrayContaining(["manual"]) })
  expect(carriesNative(retried)).toBe(false)
  expect(text(retried)).not.toContain("contextManagement")
  expect(parts(retried).some((part) => part.type === "custom")).toBe(false)
  expect(retried.prompt.length).toBeLessThan(c19.messages.length)
  // The retried request fits the local budget.
  const sent = requests(h.events).at(-1)!
  expect(sent.inputTokens).toBeLessThanOrEqual(sent.budgetTokens)
}

describe("C19: provider-native compaction falls back to local compaction on a route that does not compact", () => {
  it("C19 A: a 200 answer without a compaction item although the input crossed compactThreshold → the next request of the turn is compacted locally, without contextManagement", async () => {
    const { A } = c19.providerResponses
    const h = harness((_params, call) =>
      call === 0 ? answer(A.response) : { ...answer(A.response), content: [{ type: "text", text: "Looking." }] }
    )
    const first = await send(h, conversation)
    expect(h.calls).toHaveLength(1)
    expect(NativeFallback.thresholdTokens(h.calls[0]!.providerOptions)).toBe(threshold)
    expect(first.toolCalls.map((call) => call.toolCallId)).toEqual(["c_t3"])
    // The loop continues: the app appends the tool result and sends the next request (still asking for native).
    const next = [...conversation, ...first.response.messages, ...A.appendThen]
    await send(h, next)
    expect(h.calls).toHaveLength(2)
    await expectLocalFallback(h, h.calls[1]!, "no-item")
    // Later turns: still no contextManagement on this route.
    await send(h, [...next, { role: "user", content: "Go on." }])
    expect(carriesNative(h.calls[2]!)).toBe(false)
  })

  it("C19 B: HTTP 500 for a request carrying contextManagement → compacted locally and retried without it; the agent's request still goes out", async () => {
    const { B, control } = c19.providerResponses
    const h = harness((params) => {
      if (carriesNative(params)) throw httpError(B.status, B.headers, B.body)
      return { ...answer(control.response), content: contentOf(control.response).filter((p) => p.type !== "custom") }
    })
    const result = await send(h, conversation)
    expect(result.toolCalls.map((call) => call.toolCallId)).toEqual(["c_t3"])
    expect(h.calls.map(carriesNative)).toEqual([true, false])
    await expectLocalFallback(h, h.calls[1]!, "http-500")
    await send(h, [...conversation, { role: "user", content: "Go on." }], { tools: false })
    expect(carriesNative(h.calls[2]!)).toBe(false)
  })

  it("C19 C: the stream stalls after response.in_progress → aborted at the deadline (not left running), compacted locally, retried without contextManagement", async () => {
    const stalled = { cancelled: false, signal: undefined as AbortSignal | undefined }
    const h = harness(
      () => {
        throw new Error("streamed only")
      },
      (params, call) => {
        if (call === 0) {
          stalled.signal = params.abortSignal
          expect(c19.providerResponses.C.stream.map((event) => event.split("\n")[0])).toEqual([
            "event: response.created",
            "event: response.in_progress"
          ])
          return stalledStream(() => {
            stalled.cancelled = true
          })
        }
        return textStream("Running the test again.")
      }
    )
    const result = streamText({
      model: h.model,
      system,
      messages: conversation,
      providerOptions: appOptions as never,
      maxRetries: 0
    })
    expect(await result.text).toBe("Running the test again.")
    expect(stalled.cancelled).toBe(true)
    expect(stalled.signal?.aborted).toBe(true)
    expect(h.calls.map(carriesNative)).toEqual([true, false])
    await expectLocalFallback(h, h.calls[1]!, "timeout")
  })

  it("C19 C with the caller's AbortSignal firing first: the stalled request ends with the abort, before the deadline, and the route keeps native", async () => {
    let stalledSignal: AbortSignal | undefined
    const h = harness(
      () => {
        throw new Error("streamed only")
      },
      (params) => {
        stalledSignal = params.abortSignal
        return stalledStream()
      }
    )
    const caller = new AbortController()
    setTimeout(() => caller.abort(new Error("user pressed stop")), 20)
    const errors: Array<unknown> = []
    const result = streamText({
      model: h.model,
      system,
      messages: conversation,
      providerOptions: appOptions as never,
      maxRetries: 0,
      abortSignal: caller.signal,
      onError: ({ error }) => {
        errors.push(error)
      }
    })
    await expect(result.text).rejects.toBeDefined()
    expect(stalledSignal?.aborted).toBe(true)
    expect(h.calls).toHaveLength(1)
    expect(nativeEvents(h.events)).toEqual([])
  })

  it("C19 rateLimited: a 429 is not a sign native compaction is unsupported — no fallback, no route marked, native stays on", async () => {
    const { rateLimited, control } = c19.providerResponses
    const h = harness((_params, call) => {
      if (call === 0) throw httpError(rateLimited.status, rateLimited.headers, rateLimited.body)
      return answer(control.response)
    })
    await expect(send(h, conversation)).rejects.toMatchObject({ statusCode: 429 })
    expect(nativeEvents(h.events)).toEqual([])
    expect(h.middleware.controller.nativeRoutes.reasonFor(`openai.responses:${c19.route.model}`)).toBeUndefined()
    expect(checkpoints(await h.transcript())).toEqual([])
    // Retried later as usual: still native.
    await send(h, conversation)
    expect(h.calls.map(carriesNative)).toEqual([true, true])
  })

  it("C19 control: one compaction item — native works, the provider's item is recorded, no local summarization", async () => {
    const { control } = c19.providerResponses
    const h = harness(() => answer(control.response))
    const first = await send(h, conversation)
    const entries = await h.transcript()
    expect(nativeEvents(h.events)).toEqual([])
    expect(checkpoints(entries)).toEqual([])
    expect(h.events.filter((event) => event.type === "compaction")).toEqual([])
    expect(
      entries.filter((entry) => entry.kind === "event" && entry.event.name === ProviderNativeEngine.EVENT_COMPACTION)
    ).toHaveLength(1)
    await send(h, [...conversation, ...first.response.messages, ...c19.providerResponses.A.appendThen])
    expect(h.calls.map(carriesNative)).toEqual([true, true])
    expect(checkpoints(await h.transcript())).toEqual([])
  })
})
