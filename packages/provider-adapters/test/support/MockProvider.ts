/**
 * Test doubles around `MockLanguageModelV4` (`ai/test`): a model that
 * enforces a real context window (counting the prompt it receives with the
 * core measurer) and answers with a scripted tool call or text.
 */
import {
  APICallError,
  type LanguageModelV4CallOptions,
  type LanguageModelV4GenerateResult,
  type LanguageModelV4StreamPart
} from "@ai-sdk/provider"
import { ContextView, Measurer, type Message, type ModelPolicy, Tokenizers, ToolPairing } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { jsonSchema, tool, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { contextEngineMiddleware, type MiddlewareOptions, toolDefinitions } from "../../src/ContextEngineMiddleware.ts"
import { fromPrompt } from "../../src/PromptConversion.ts"

export const measurer = Measurer.make(Tokenizers.get("o200k_base"))

/**
 * The middleware tests' small policy: a `windowTokens` window (8,000 unless
 * given) with 1,000 output and reserve tokens, 2,000 keep-recent tokens, a
 * 200-token safety margin and no tool-loop reserve, counted in o200k.
 */
export const smallPolicy = (windowTokens = 8_000): Partial<ModelPolicy.ModelPolicy> => ({
  model: "claude-test",
  contextWindowTokens: windowTokens,
  maxOutputTokens: 1_000,
  reserveTokens: 1_000,
  keepRecentTokens: 2_000,
  toolLoopReserveTokens: 0,
  safetyMarginTokens: 200,
  tokenizer: "o200k_base"
})

/** Input tokens of a call's prompt + tool schemas, as our measurer counts them. */
export const promptTokens = (params: LanguageModelV4CallOptions): number =>
  measurer.measure(ContextView.fromMessages(fromPrompt(params.prompt), toolDefinitions(params.tools))).inputTokens

/** Whether every tool call in the prompt has its result and every result its call. */
export const pairingIntact = (params: LanguageModelV4CallOptions): boolean => {
  const report = ToolPairing.analyze(ContextView.fromMessages(fromPrompt(params.prompt)).items)
  return report.problems.length === 0
}

export const usage = (inputTokens: number, outputTokens = 10): LanguageModelV4GenerateResult["usage"] => ({
  inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 }
})

export const anthropicOverflow = (requested: number, limit: number): APICallError =>
  new APICallError({
    message: `prompt is too long: ${requested} tokens > ${limit} maximum`,
    url: "https://api.anthropic.com/v1/messages",
    requestBodyValues: {},
    statusCode: 400,
    responseBody: JSON.stringify({
      type: "error",
      error: { type: "invalid_request_error", message: `prompt is too long: ${requested} tokens > ${limit} maximum` }
    }),
    isRetryable: false
  })

export type Reply =
  | { readonly text: string }
  | { readonly toolCall: { readonly toolName: string; readonly input: unknown } }

const content = (reply: Reply, step: number): LanguageModelV4GenerateResult["content"] =>
  "text" in reply
    ? [{ type: "text", text: reply.text }]
    : [
        {
          type: "tool-call",
          toolCallId: `call_${step}`,
          toolName: reply.toolCall.toolName,
          input: JSON.stringify(reply.toolCall.input)
        }
      ]

const streamParts = (reply: Reply, step: number, inputTokens: number): Array<LanguageModelV4StreamPart> => [
  { type: "stream-start", warnings: [] },
  ...("text" in reply
    ? ([
        { type: "text-start", id: "t" },
        { type: "text-delta", id: "t", delta: reply.text },
        { type: "text-end", id: "t" }
      ] as Array<LanguageModelV4StreamPart>)
    : ([
        {
          type: "tool-call",
          toolCallId: `call_${step}`,
          toolName: reply.toolCall.toolName,
          input: JSON.stringify(reply.toolCall.input)
        }
      ] as Array<LanguageModelV4StreamPart>)),
  {
    type: "finish",
    finishReason: { unified: "text" in reply ? "stop" : "tool-calls", raw: undefined },
    usage: usage(inputTokens)
  }
]

export interface WindowedModel {
  readonly model: MockLanguageModelV4
  /** Every prompt the model received (accepted or rejected), in order. */
  readonly calls: Array<{
    readonly params: LanguageModelV4CallOptions
    readonly tokens: number
    readonly rejected: boolean
  }>
}

/**
 * A model with a real window of `windowTokens` (input + `maxOutputTokens`)
 * that rejects longer prompts with Anthropic's overflow error (thrown, or as
 * the first stream part when `errorInStream`), and otherwise replies with
 * `replies(step)`.
 */
export const windowedModel = (options: {
  readonly windowTokens: number
  readonly maxOutputTokens?: number
  readonly rejectAll?: boolean
  readonly errorInStream?: boolean
  readonly replies: (step: number) => Reply
  readonly provider?: string
  readonly modelId?: string
}): WindowedModel => {
  const calls: WindowedModel["calls"] = []
  let accepted = 0
  const check = (params: LanguageModelV4CallOptions): { tokens: number; error?: APICallError } => {
    const tokens = promptTokens(params)
    const tooLong = options.rejectAll === true || tokens + (options.maxOutputTokens ?? 0) > options.windowTokens
    calls.push({ params, tokens, rejected: tooLong })
    return tooLong ? { tokens, error: anthropicOverflow(tokens, options.windowTokens) } : { tokens }
  }
  const model = new MockLanguageModelV4({
    provider: options.provider ?? "anthropic.messages",
    modelId: options.modelId ?? "claude-test",
    doGenerate: async (params) => {
      const { tokens, error } = check(params)
      if (error) throw error
      const step = accepted++
      return {
        content: content(options.replies(step), step),
        finishReason: { unified: "stop", raw: undefined },
        usage: usage(tokens),
        warnings: []
      }
    },
    doStream: async (params) => {
      const { tokens, error } = check(params)
      if (error && !options.errorInStream) throw error
      if (error) {
        return {
          stream: new ReadableStream<LanguageModelV4StreamPart>({
            start(controller) {
              controller.enqueue({ type: "stream-start", warnings: [] })
              controller.enqueue({
                type: "error",
                error: { type: "error", error: { type: "invalid_request_error", message: error.message } }
              })
              controller.close()
            }
          })
        }
      }
      const step = accepted++
      const parts = streamParts(options.replies(step), step, tokens)
      return {
        stream: new ReadableStream<LanguageModelV4StreamPart>({
          start(controller) {
            for (const part of parts) controller.enqueue(part)
            controller.close()
          }
        })
      }
    }
  })
  return { model, calls }
}

/** A system prompt and `turns` user/tool-heavy exchanges, as ModelMessages. */
export const longHistory = (turns: number, resultChars = 4000): Array<Message.Message> => {
  const messages: Array<Message.Message> = []
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: "user", content: [{ type: "text", text: `Inspect file ${turn}` }] })
    messages.push({
      role: "assistant",
      content: [{ type: "tool-call", toolCallId: `h${turn}`, toolName: "read", input: { path: `src/file${turn}.ts` } }]
    })
    messages.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `h${turn}`,
          toolName: "read",
          output: {
            type: "text",
            value: `// file ${turn}\n${"export const value = 1 // line\n".repeat(resultChars / 32)}`
          }
        }
      ]
    })
    messages.push({ role: "assistant", content: [{ type: "text", text: `File ${turn} exports value.` }] })
  }
  messages.push({ role: "user", content: [{ type: "text", text: "Which files export value?" }] })
  return messages
}

/**
 * New message and part objects around the same values: what the AI SDK hands
 * the middleware every step (`convertToLanguageModelPrompt` copies each
 * message and part).
 */
export const rewrapped = (messages: ReadonlyArray<Message.Message>): Array<Message.Message> =>
  messages.map((message) =>
    typeof message.content === "string"
      ? ({ ...message } as Message.Message)
      : ({ ...message, content: message.content.map((part) => ({ ...part })) } as Message.Message)
  )

/**
 * `provider`'s model wrapped in the context-engine middleware with the tiered engine on session "s", and that
 * middleware (its `controller` reads the session back) — the setup the store tests share (the store, policy and
 * the rest of the options are the test's).
 */
export const tieredMiddleware = (
  provider: { readonly model: MockLanguageModelV4 },
  options: Omit<MiddlewareOptions, "engine" | "sessionId">
) => {
  const middleware = contextEngineMiddleware({ engine: TieredSummaryEngine.make(), sessionId: "s", ...options })
  return { model: wrapLanguageModel({ model: provider.model, middleware }), middleware }
}

/** {@link tieredMiddleware}'s wrapped model alone. */
export const tieredModel = (
  provider: { readonly model: MockLanguageModelV4 },
  options: Omit<MiddlewareOptions, "engine" | "sessionId">
) => tieredMiddleware(provider, options).model

/** A `read` tool whose result is 120 lines of a file named by its `path` argument. */
export const readTool = tool({
  description: "Read a file",
  inputSchema: jsonSchema<{ path: string }>({
    type: "object",
    properties: { path: { type: "string" } },
    required: ["path"]
  }),
  execute: async ({ path }) => `// ${path}\n${"export const value = 1 // line\n".repeat(120)}`
})

/** Replies of a tool loop of `steps` model calls: `read` of a new file at each step, then "finished" at the last. */
export const toolLoopReplies =
  (steps: number) =>
  (step: number): Reply =>
    step < steps - 1 ? { toolCall: { toolName: "read", input: { path: `src/f${step}.ts` } } } : { text: "finished" }

/**
 * What `promise` has settled with so far, read through the returned getter: "pending", "answered" (fulfilled) or
 * the rejection's reason — for tests that advance fake timers and look at a request in between.
 */
export const settlement = (promise: Promise<unknown>): (() => unknown) => {
  let outcome: unknown = "pending"
  void promise.then(
    () => {
      outcome = "answered"
    },
    (error: unknown) => {
      outcome = error
    }
  )
  return () => outcome
}
