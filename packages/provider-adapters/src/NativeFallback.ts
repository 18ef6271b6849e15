/**
 * Provider-native compaction that does not work on a route, and the local
 * fallback (shared case C19). A route (provider + model id as the AI SDK
 * reports them; `createOpenAI({ name })` tells gateways apart) can carry
 * native compaction options and still not compact:
 *
 * - `no-item`: a 200 answer without a compaction item although the input
 *   crossed the threshold that was sent (Codex #42393, #31742 through
 *   non-OpenAI proxies: "remote compaction v2 expected exactly one compaction
 *   output item, got 0");
 * - `http-500`: HTTP 500 / 501 for every request that carries the options
 *   (Hermes `agent/native_compaction.py` notes on gpt-5.1/5.2);
 * - `timeout`: a response that stalls before its first content part (the
 *   same notes: "a stream that never finishes").
 *
 * On any of them the route is marked native-unavailable for the life of the
 * controller: its requests carry no native options, its policy enables no
 * native compaction, and the compaction that was due is done by the local
 * engine (as a manual compaction) before the retried or next request.
 * Look-alikes do not mark a route: a 429 (rate limit), a 502/503/504
 * (gateway, overload) or a classified context overflow.
 *
 * @since 0.3.0
 */
import type { Message } from "@context-engine/core"

/**
 * Why native compaction was taken as unavailable on a route.
 *
 * @category models
 */
export type Reason = "no-item" | "http-500" | "timeout"

/**
 * Default deadline (ms) for the first content part of a response that
 * carries native compaction options: Codex's `stream_idle_timeout_ms`
 * default (300,000 ms, openai/codex `config.md` model providers).
 *
 * @category constants
 */
export const DEFAULT_RESPONSE_TIMEOUT_MS = 300_000

/**
 * HTTP statuses that say the route cannot serve the native options: 500
 * (internal error, C19 scenario B) and 501 (not implemented). 502–504 are
 * gateway or overload errors that the same request without the options
 * would meet too, and 429 is a rate limit: neither marks the route.
 *
 * @category constants
 */
export const UNSUPPORTED_STATUSES: ReadonlySet<number> = new Set([500, 501])

const isRecord = (value: unknown): value is Record<string, unknown> => typeof value === "object" && value !== null

/**
 * The input size (tokens) at which the provider was asked to compact, read
 * from outgoing provider options: OpenAI Responses
 * `openai.contextManagement[{ type: "compaction", compactThreshold }]`,
 * Anthropic `anthropic.contextManagement.edits[{ type: "compact_20260112",
 * trigger: { value } }]`. `undefined` when no native compaction was asked for.
 *
 * @category utils
 */
export const thresholdTokens = (providerOptions: unknown): number | undefined => {
  if (!isRecord(providerOptions)) return undefined
  const openai = isRecord(providerOptions.openai) ? providerOptions.openai.contextManagement : undefined
  if (Array.isArray(openai))
    for (const item of openai)
      if (isRecord(item) && item.type === "compaction" && typeof item.compactThreshold === "number")
        return item.compactThreshold
  const anthropic = isRecord(providerOptions.anthropic) ? providerOptions.anthropic.contextManagement : undefined
  const edits = isRecord(anthropic) && Array.isArray(anthropic.edits) ? anthropic.edits : []
  for (const edit of edits)
    if (isRecord(edit) && edit.type === "compact_20260112" && isRecord(edit.trigger))
      return typeof edit.trigger.value === "number" ? edit.trigger.value : undefined
  return undefined
}

/**
 * Provider options without native context management (`contextManagement`
 * of `openai` and `anthropic` removed; a provider entry left empty is
 * dropped). Returns the same object when there is nothing to remove; never
 * mutates its argument.
 *
 * @category utils
 */
export const withoutNative = <A extends Readonly<Record<string, unknown>> | undefined>(providerOptions: A): A => {
  if (providerOptions === undefined) return providerOptions
  let changed = false
  const next: Record<string, unknown> = {}
  for (const [provider, options] of Object.entries(providerOptions)) {
    if ((provider === "openai" || provider === "anthropic") && isRecord(options) && "contextManagement" in options) {
      changed = true
      const { contextManagement: _removed, ...rest } = options
      if (Object.keys(rest).length > 0) next[provider] = rest
      continue
    }
    next[provider] = options
  }
  return (changed ? next : providerOptions) as A
}

/**
 * Whether a response's content holds a native compaction item: an OpenAI
 * `custom` part of kind `openai.compaction`, or an Anthropic text part whose
 * `providerMetadata.anthropic.type` is `compaction`.
 *
 * @category guards
 */
export const hasCompactionItem = (
  content: ReadonlyArray<{ readonly type: string; readonly kind?: string; readonly providerMetadata?: unknown }>
): boolean =>
  content.some(
    (part) =>
      (part.type === "custom" && part.kind === "openai.compaction") ||
      (part.type === "text" &&
        isRecord(part.providerMetadata) &&
        isRecord(part.providerMetadata.anthropic) &&
        part.providerMetadata.anthropic.type === "compaction")
  )

/**
 * Scenario A: native compaction was asked for at `threshold` tokens, the
 * input (the provider's reported input tokens, else our measure) reached
 * it, and the answer holds no compaction item.
 *
 * @category guards
 */
export const itemMissing = (
  threshold: number | undefined,
  inputTokens: number,
  content: Parameters<typeof hasCompactionItem>[0]
): boolean => threshold !== undefined && inputTokens >= threshold && !hasCompactionItem(content)

/**
 * Scenario B: the HTTP status of an error (AI SDK `APICallError.statusCode`,
 * or `status`, also on `lastError` / `cause`) is one of
 * {@link UNSUPPORTED_STATUSES}.
 *
 * @category guards
 */
export const isUnsupportedStatus = (error: unknown): boolean => {
  let current: unknown = error
  for (let depth = 0; depth < 4 && isRecord(current); depth++) {
    const status = current.statusCode ?? current.status
    if (typeof status === "number") return UNSUPPORTED_STATUSES.has(status)
    current = current.lastError ?? current.cause
  }
  return false
}

/**
 * The routes on which native compaction was found unavailable, with the
 * reason. One per controller.
 *
 * @category models
 */
export interface Routes {
  readonly reasonFor: (route: string) => Reason | undefined
  /** Marks the route; returns `false` when it was already marked. */
  readonly disable: (route: string, reason: Reason) => boolean
}

/**
 * An empty {@link Routes}.
 *
 * @category constructors
 */
export const makeRoutes = (): Routes => {
  const disabled = new Map<string, Reason>()
  return {
    reasonFor: (route) => disabled.get(route),
    disable: (route, reason) => {
      if (disabled.has(route)) return false
      disabled.set(route, reason)
      return true
    }
  }
}

/**
 * Name of the transcript event that records a failed native attempt (never
 * a compaction: no checkpoint and no compaction item is written).
 *
 * @category constants
 */
export const EVENT_UNAVAILABLE = "provider-native-unavailable"

/**
 * The event data of {@link EVENT_UNAVAILABLE}.
 *
 * @category constructors
 */
export const eventData = (route: string, reason: Reason, threshold: number | undefined): Message.JsonValue => ({
  route,
  reason,
  ...(threshold !== undefined ? { thresholdTokens: threshold } : {})
})

/** Thrown by {@link withDeadline} when the deadline passes first. @category errors */
export class Stalled extends Error {
  readonly _tag = "Stalled"
  readonly timeoutMs: number
  constructor(timeoutMs: number) {
    super(`no response part within ${timeoutMs} ms`)
    this.timeoutMs = timeoutMs
  }
}

/**
 * Races `promise` against a deadline (ms) and the caller's signal: rejects
 * with {@link Stalled} at the deadline, with the signal's reason when it
 * fires first. The timer is cleared either way. A deadline that is not a
 * finite number (`Infinity`) sets no timer: only the signal is raced.
 *
 * @category utils
 */
export const withDeadline = <A>(promise: PromiseLike<A>, timeoutMs: number, signal?: AbortSignal): Promise<A> =>
  new Promise<A>((resolve, reject) => {
    const timer = Number.isFinite(timeoutMs)
      ? setTimeout(() => finish(() => reject(new Stalled(timeoutMs))), timeoutMs)
      : undefined
    const onAbort = () => finish(() => reject(signal?.reason))
    const finish = (settle: () => void) => {
      clearTimeout(timer)
      signal?.removeEventListener("abort", onAbort)
      settle()
    }
    if (signal?.aborted) return onAbort()
    signal?.addEventListener("abort", onAbort, { once: true })
    promise.then(
      (value) => finish(() => resolve(value)),
      (error) => finish(() => reject(error))
    )
  })
