/**
 * The Vercel AI SDK 7 middleware: keeps every request of a wrapped model
 * inside the model's context window.
 *
 * ```ts
 * import { wrapLanguageModel, generateText } from "ai"
 * import { contextEngineMiddleware } from "@context-engine/provider-adapters"
 *
 * const model = wrapLanguageModel({ model: anthropic("claude-sonnet-4-5"), middleware: contextEngineMiddleware({ engine }) })
 * const result = await generateText({ model, tools, messages, stopWhen: stepCountIs(200) })
 * ```
 *
 * - `transformParams` (AI SDK `LanguageModelV4Middleware`): syncs the prompt
 *   into the session transcript, measures it (system, messages and tool
 *   schemas), compacts when the engine says so, and returns the assembled
 *   context. Unchanged params are returned as is, and so are the params of a
 *   request whose policy function failed. Provider-native engines add
 *   their provider options (the application's explicit options win).
 * - `wrapGenerate` / `wrapStream`: record the provider's usage with
 *   `recordOutcome`; on a classified context overflow (thrown by
 *   `doGenerate` / `doStream`, or the first stream part being an `error`),
 *   compact against the reported limit, retry exactly once through
 *   `model.doGenerate` / `model.doStream` (the `wrapLanguageModel` source
 *   binds `doGenerate()` to the original params, so the retry calls the
 *   inner model directly), and surface the original error if the retry
 *   overflows again.
 *
 * Works for `generateText`, `streamText` and `ToolLoopAgent`: they all call
 * the wrapped model once per step with the full history.
 *
 * @since 0.1.0
 */
import type {
  LanguageModelV4,
  LanguageModelV4CallOptions,
  LanguageModelV4GenerateResult,
  LanguageModelV4Middleware,
  LanguageModelV4StreamPart,
  LanguageModelV4StreamResult,
  LanguageModelV4Usage
} from "@ai-sdk/provider"
import type { ContextView, Message } from "@context-engine/core"
import type { ProviderNativeEngine } from "@context-engine/engines"
import * as ContextController from "./ContextController.ts"
import * as NativeRequests from "./NativeRequests.ts"
import * as PromptConversion from "./PromptConversion.ts"

/**
 * Options: the engine (any `ContextEngine`), an optional policy (partial policy or resolver), an optional
 * transcript store (a failing one never stops a request: `ControllerOptions.store`), a session id and an
 * event callback. See {@link ContextController.ControllerOptions}.
 *
 * @category models
 */
export type MiddlewareOptions = ContextController.ControllerOptions

/**
 * The middleware, with its controller exposed for inspection (sessions,
 * policies) in apps and tests.
 *
 * @category models
 */
export interface ContextEngineMiddleware extends LanguageModelV4Middleware {
  readonly controller: ContextController.ContextController
}

/**
 * Tool definitions as measured: function tools with their JSON schema;
 * provider tools with their configuration arguments.
 *
 * @category conversions
 */
export const toolDefinitions = (
  tools: LanguageModelV4CallOptions["tools"]
): ReadonlyArray<ContextView.ToolDefinition> =>
  (tools ?? []).map((tool) =>
    tool.type === "function"
      ? {
          name: tool.name,
          ...(tool.description !== undefined ? { description: tool.description } : {}),
          inputSchema: tool.inputSchema as Message.JsonValue
        }
      : { name: tool.name, inputSchema: tool.args as Message.JsonValue }
  )

/**
 * Usage fields the engine records, from the AI SDK V4 usage.
 *
 * @category conversions
 */
export const usageOf = (usage: LanguageModelV4Usage | undefined): ContextController.Usage => ({
  inputTokens: usage?.inputTokens.total,
  outputTokens: usage?.outputTokens.total,
  cachedInputTokens: usage?.inputTokens.cacheRead
})

const mergeProviderOptions = (
  engineOptions: Message.ProviderOptions | undefined,
  appOptions: LanguageModelV4CallOptions["providerOptions"]
): LanguageModelV4CallOptions["providerOptions"] | undefined => {
  if (engineOptions === undefined) return appOptions
  const merged: Record<string, Record<string, unknown>> = {}
  for (const [key, value] of Object.entries(engineOptions)) merged[key] = { ...value }
  for (const [key, value] of Object.entries(appOptions ?? {})) merged[key] = { ...merged[key], ...value }
  return merged as LanguageModelV4CallOptions["providerOptions"]
}

const paramsFor = (
  params: LanguageModelV4CallOptions,
  prepared: ContextController.Prepared,
  toPrompt: (
    messages: ReadonlyArray<Message.Message>,
    original: LanguageModelV4CallOptions["prompt"]
  ) => LanguageModelV4CallOptions["prompt"]
): LanguageModelV4CallOptions => {
  if (!prepared.rewritten && prepared.providerOptions === undefined) return params
  return {
    ...params,
    prompt: prepared.rewritten ? toPrompt(prepared.messages, params.prompt) : params.prompt,
    ...(prepared.providerOptions !== undefined
      ? { providerOptions: mergeProviderOptions(prepared.providerOptions, params.providerOptions) ?? {} }
      : {})
  }
}

const modelRef = (model: LanguageModelV4): ContextController.ModelRef => ({
  provider: model.provider,
  modelId: model.modelId
})

/** Reads the first meaningful part; returns it with everything read so far and a stream of the rest. */
const peek = async (
  stream: ReadableStream<LanguageModelV4StreamPart>,
  read: <A>(promise: Promise<A>) => Promise<A> = (promise) => promise
): Promise<{
  readonly head: ReadonlyArray<LanguageModelV4StreamPart>
  readonly firstError?: unknown
  readonly rest: ReadableStream<LanguageModelV4StreamPart>
}> => {
  const reader = stream.getReader()
  const head: Array<LanguageModelV4StreamPart> = []
  let firstError: unknown
  let done = false
  while (true) {
    let next: Awaited<ReturnType<typeof reader.read>>
    try {
      next = await read(reader.read())
    } catch (error) {
      await reader.cancel(error).catch(() => undefined)
      throw error
    }
    if (next.done) {
      done = true
      break
    }
    head.push(next.value)
    if (next.value.type === "stream-start" || next.value.type === "response-metadata" || next.value.type === "raw")
      continue
    if (next.value.type === "error") firstError = next.value.error
    break
  }
  const rest = new ReadableStream<LanguageModelV4StreamPart>({
    start(controller) {
      for (const part of head) controller.enqueue(part)
      if (done) controller.close()
    },
    async pull(controller) {
      if (done) return
      const next = await reader.read()
      if (next.done) controller.close()
      else controller.enqueue(next.value)
    },
    cancel(reason) {
      return reader.cancel(reason)
    }
  })
  return { head, ...(firstError !== undefined ? { firstError } : {}), rest }
}

/** Passes parts through; on `finish`, records usage and the native items seen. */
const observe = (
  stream: ReadableStream<LanguageModelV4StreamPart>,
  onFinish: (usage: LanguageModelV4Usage | undefined, response: ProviderNativeEngine.NativeResponse) => Promise<void>
): ReadableStream<LanguageModelV4StreamPart> => {
  const content: Array<{ type: string; kind?: string; text?: string; providerMetadata?: Record<string, unknown> }> = []
  const texts = new Map<string, { text: string; providerMetadata?: Record<string, unknown> }>()
  return stream.pipeThrough(
    new TransformStream<LanguageModelV4StreamPart, LanguageModelV4StreamPart>({
      async transform(part, controller) {
        switch (part.type) {
          case "text-start":
            if (part.providerMetadata !== undefined)
              texts.set(part.id, { text: "", providerMetadata: part.providerMetadata })
            break
          case "text-delta": {
            const text = texts.get(part.id)
            if (text) text.text += part.delta
            break
          }
          case "text-end": {
            const text = texts.get(part.id)
            if (text)
              content.push({
                type: "text",
                text: text.text,
                ...(text.providerMetadata ? { providerMetadata: text.providerMetadata } : {})
              })
            texts.delete(part.id)
            break
          }
          case "custom":
            content.push({
              type: "custom",
              kind: part.kind,
              ...(part.providerMetadata ? { providerMetadata: part.providerMetadata } : {})
            })
            break
          case "finish":
            try {
              await onFinish(part.usage, { providerMetadata: part.providerMetadata, content })
            } catch {
              // Recording is best effort; it never breaks the stream.
            }
            break
        }
        controller.enqueue(part)
      }
    })
  )
}

/**
 * Creates the middleware.
 *
 * @category constructors
 * @example
 * ```ts
 * const middleware = contextEngineMiddleware({ engine, policy: { contextWindowTokens: 32_000 } })
 * const model = wrapLanguageModel({ model: openai("gpt-4o"), middleware })
 * ```
 */
export const contextEngineMiddleware = (options: MiddlewareOptions): ContextEngineMiddleware => {
  const controller = ContextController.make(options)
  // A rewritten view is converted to a prompt every step: positions holding the application's own message
  // (ControllerRuntime.assemble keeps it where the view did not change it) stay as the application sent them, and
  // only messages not converted at that position last step are converted.
  const toPrompt = PromptConversion.makeToPrompt()
  const prepared = new WeakMap<LanguageModelV4CallOptions, ContextController.Prepared>()
  // The AI SDK passes new tool objects each step; equal tools keep one definitions array, so the
  // engine's validated-input and measurement caches hit (cost: one serialization of the tools).
  let lastTools: { readonly key: string; readonly definitions: ReadonlyArray<ContextView.ToolDefinition> } | undefined
  const sameTools = (tools: LanguageModelV4CallOptions["tools"]): ReadonlyArray<ContextView.ToolDefinition> => {
    const key = JSON.stringify(tools ?? [])
    if (lastTools?.key !== key) lastTools = { key, definitions: toolDefinitions(tools) }
    return lastTools.definitions
  }

  const recover = async (
    context: ContextController.Prepared,
    params: LanguageModelV4CallOptions,
    error: unknown
  ): Promise<
    { readonly context: ContextController.Prepared; readonly params: LanguageModelV4CallOptions } | undefined
  > => {
    let retry: ContextController.Prepared | undefined
    try {
      retry = await controller.recoverOverflow(context, error)
    } catch {
      return undefined
    }
    return retry === undefined ? undefined : { context: retry, params: paramsFor(params, retry, toPrompt) }
  }

  /** Recording is best effort: a failing store or engine never loses the model's answer. */
  const record = async (
    context: ContextController.Prepared,
    usage: LanguageModelV4Usage | undefined,
    response: ProviderNativeEngine.NativeResponse
  ): Promise<void> => {
    try {
      await controller.recordSuccess(context, usageOf(usage), response)
    } catch {
      // Nothing to undo: the response stands; the next request measures afresh.
    }
  }

  const surfaced = (context: ContextController.Prepared, original: unknown, second: unknown): unknown =>
    context.profile.classifyOverflow(second) !== undefined ? original : second

  const native = NativeRequests.make(controller, {
    ...(options.nativeResponseTimeoutMs !== undefined ? { timeoutMs: options.nativeResponseTimeoutMs } : {}),
    paramsFor: (params, prepared) => paramsFor(params, prepared, toPrompt),
    tools: sameTools
  })
  const { thresholdOf, reasonOf, deadlined, fallBack, checkItem } = native

  return {
    specificationVersion: "v4",
    controller,
    transformParams: async ({ params, model }) => {
      const messages = PromptConversion.fromPrompt(params.prompt)
      const context = await controller
        .prepare(modelRef(model), messages, sameTools(params.tools), [], params.abortSignal)
        .catch(ContextController.unlessPolicyFailed)
      // Aborted while compacting: do not call the model (throwIfAborted throws the signal's reason).
      params.abortSignal?.throwIfAborted()
      // The policy function failed (reported as `compaction-skipped`): the request goes out as the app sent it.
      if (context === undefined) return params
      const next = native.outgoing(modelRef(model), params, messages, paramsFor(params, context, toPrompt))
      prepared.set(next, context)
      return next
    },
    wrapGenerate: async ({ doGenerate, params, model }) => {
      const context = prepared.get(params)
      if (context === undefined) return doGenerate()
      let result: LanguageModelV4GenerateResult
      const isNative = thresholdOf(params) !== undefined
      try {
        result = isNative
          ? await deadlined(params, (sent, read) => read(Promise.resolve(model.doGenerate(sent))))
          : await doGenerate()
      } catch (error) {
        const reason = isNative ? reasonOf(error) : undefined
        if (reason !== undefined) {
          const fallback = await fallBack(context, params, reason)
          const answer = await model.doGenerate(fallback.params)
          await record(fallback.context, answer.usage, answer)
          return answer
        }
        const retry = await recover(context, params, error)
        if (retry === undefined) throw error
        try {
          result = await model.doGenerate(retry.params)
        } catch (second) {
          throw surfaced(context, error, second)
        }
        await record(retry.context, result.usage, result)
        return result
      }
      if (isNative) await checkItem(context, params, result.usage, result.content)
      await record(context, result.usage, result)
      return result
    },
    wrapStream: async ({ doStream, params, model }) => {
      const context = prepared.get(params)
      if (context === undefined) return doStream()
      const isNative = thresholdOf(params) !== undefined
      const recordFor =
        (target: ContextController.Prepared, sent?: LanguageModelV4CallOptions) =>
        async (usage: LanguageModelV4Usage | undefined, response: ProviderNativeEngine.NativeResponse) => {
          if (sent !== undefined) await checkItem(target, sent, usage, response.content)
          await record(target, usage, response)
        }
      const attempt = async (
        call: () => PromiseLike<LanguageModelV4StreamResult>,
        read?: <B>(promise: Promise<B>) => Promise<B>
      ): Promise<{ readonly result?: LanguageModelV4StreamResult; readonly error?: unknown }> => {
        try {
          const result = await (read ? read(Promise.resolve(call())) : call())
          const peeked = await peek(result.stream, read)
          if (peeked.firstError !== undefined && context.profile.classifyOverflow(peeked.firstError) !== undefined) {
            await peeked.rest.cancel().catch(() => undefined)
            return { error: peeked.firstError }
          }
          return { result: { ...result, stream: peeked.rest } }
        } catch (error) {
          return { error }
        }
      }
      const first = isNative
        ? await deadlined(params, async (sent, read) => {
            const outcome = await attempt(() => model.doStream(sent), read)
            if (outcome.error !== undefined) throw outcome.error
            return outcome
          }).catch(
            (error: unknown) =>
              ({ error }) as { readonly result?: LanguageModelV4StreamResult; readonly error?: unknown }
          )
        : await attempt(doStream)
      if (first.result)
        return {
          ...first.result,
          stream: observe(first.result.stream, recordFor(context, isNative ? params : undefined))
        }
      const reason = isNative ? reasonOf(first.error) : undefined
      if (reason !== undefined) {
        const fallback = await fallBack(context, params, reason)
        const result = await model.doStream(fallback.params)
        return { ...result, stream: observe(result.stream, recordFor(fallback.context)) }
      }
      const retry = await recover(context, params, first.error)
      if (retry === undefined) throw first.error
      const second = await attempt(() => model.doStream(retry.params))
      if (second.result) return { ...second.result, stream: observe(second.result.stream, recordFor(retry.context)) }
      throw surfaced(context, first.error, second.error)
    }
  }
}
