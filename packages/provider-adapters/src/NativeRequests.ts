/**
 * The middleware's side of `NativeFallback` (shared case C19): requests that
 * carry native compaction options run under a deadline with their own abort
 * signal; a `no-item`, `http-500` or `timeout` failure turns native
 * compaction off on the route and the request is prepared again, compacted
 * locally and sent without native options.
 *
 * @since 0.3.0
 */
import type { LanguageModelV4CallOptions, LanguageModelV4Usage } from "@ai-sdk/provider"
import type { ContextView, Message } from "@context-engine/core"
import type { ProviderNativeEngine } from "@context-engine/engines"
import type * as ContextController from "./ContextController.ts"
import * as NativeFallback from "./NativeFallback.ts"
import * as PromptConversion from "./PromptConversion.ts"

/**
 * What the middleware lends: the deadline (ms; default
 * `NativeFallback.DEFAULT_RESPONSE_TIMEOUT_MS`), how params are built from a
 * prepared context, and its tool-definition cache.
 *
 * @category models
 */
export interface Dependencies {
  readonly timeoutMs?: number
  readonly paramsFor: (
    params: LanguageModelV4CallOptions,
    prepared: ContextController.Prepared
  ) => LanguageModelV4CallOptions
  readonly tools: (tools: LanguageModelV4CallOptions["tools"]) => ReadonlyArray<ContextView.ToolDefinition>
}

/**
 * The params without native context management options.
 *
 * @category utils
 */
export const withoutNative = (params: LanguageModelV4CallOptions): LanguageModelV4CallOptions => {
  const providerOptions = NativeFallback.withoutNative(params.providerOptions)
  return providerOptions === params.providerOptions ? params : { ...params, providerOptions: providerOptions ?? {} }
}

/**
 * Builds the native request helpers of one middleware.
 *
 * @category constructors
 */
export const make = (controller: ContextController.ContextController, dependencies: Dependencies) => {
  const { paramsFor } = dependencies
  const timeoutMs = dependencies.timeoutMs ?? NativeFallback.DEFAULT_RESPONSE_TIMEOUT_MS
  // The application's params and messages behind each outgoing params object, to prepare a fallback from.
  const originals = new WeakMap<
    LanguageModelV4CallOptions,
    { readonly params: LanguageModelV4CallOptions; readonly messages: ReadonlyArray<Message.Message> }
  >()

  /** The native threshold (tokens) the params ask for, `undefined` when none. */
  const thresholdOf = (params: LanguageModelV4CallOptions): number | undefined =>
    NativeFallback.thresholdTokens(params.providerOptions)

  /** The outgoing params: without native options on a route where native failed; remembered for a fallback. */
  const outgoing = (
    model: ContextController.ModelRef,
    params: LanguageModelV4CallOptions,
    messages: ReadonlyArray<Message.Message>,
    next: LanguageModelV4CallOptions
  ): LanguageModelV4CallOptions => {
    const off = controller.nativeRoutes.reasonFor(`${model.provider}:${model.modelId}`) !== undefined
    const sent = off ? withoutNative(next) : next
    originals.set(sent, { params, messages })
    return sent
  }

  const reasonOf = (error: unknown): NativeFallback.Reason | undefined =>
    error instanceof NativeFallback.Stalled
      ? "timeout"
      : NativeFallback.isUnsupportedStatus(error)
        ? "http-500"
        : undefined

  /** Runs a native request under the deadline with its own abort, so a stalled one is aborted, not left running. */
  const deadlined = async <A>(
    params: LanguageModelV4CallOptions,
    call: (params: LanguageModelV4CallOptions, read: <B>(promise: Promise<B>) => Promise<B>) => Promise<A>
  ): Promise<A> => {
    const abort = new AbortController()
    const signal = params.abortSignal ? AbortSignal.any([params.abortSignal, abort.signal]) : abort.signal
    const read = <B>(promise: Promise<B>) => NativeFallback.withDeadline(promise, timeoutMs, params.abortSignal)
    try {
      return await call({ ...params, abortSignal: signal }, read)
    } catch (error) {
      abort.abort(error)
      throw error
    }
  }

  /** Turns native compaction off on the route and prepares the request again, compacted locally. */
  const fallBack = async (
    context: ContextController.Prepared,
    params: LanguageModelV4CallOptions,
    reason: NativeFallback.Reason
  ): Promise<{ readonly context: ContextController.Prepared; readonly params: LanguageModelV4CallOptions }> => {
    await controller.nativeUnavailable(context, reason, thresholdOf(params))
    const original = originals.get(params) ?? { params, messages: PromptConversion.fromPrompt(params.prompt) }
    const retry = await controller.prepare(
      context.model,
      original.messages,
      dependencies.tools(original.params.tools),
      [],
      params.abortSignal
    )
    params.abortSignal?.throwIfAborted()
    return { context: retry, params: withoutNative(paramsFor(original.params, retry)) }
  }

  /** Scenario A: the answer has no compaction item although the input crossed the threshold sent. */
  const checkItem = async (
    context: ContextController.Prepared,
    params: LanguageModelV4CallOptions,
    usage: LanguageModelV4Usage | undefined,
    content: ProviderNativeEngine.NativeResponse["content"]
  ): Promise<void> => {
    const threshold = thresholdOf(params)
    const inputTokens = usage?.inputTokens.total ?? context.assembled.measurement.inputTokens
    if (!NativeFallback.itemMissing(threshold, inputTokens, content ?? [])) return
    await controller.nativeUnavailable(context, "no-item", threshold).catch(() => undefined)
  }

  return { thresholdOf, outgoing, reasonOf, deadlined, fallBack, checkItem }
}
