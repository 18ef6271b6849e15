/**
 * What a context controller is built from (`ContextController.make`): the
 * engine, how a model's policy is found, the store, the session id, the
 * event callback and the request-path switches (overflow recovery, rollout
 * mode, offload, idle return, deadlines).
 *
 * @since 0.3.0
 */
import type { ContextEngine, ModelPolicy, PolicyRegistry } from "@context-engine/core"
import type { Offload } from "@context-engine/strategies"
import type { ContextEvent } from "./ContextEvent.ts"
import type * as IdleReturn from "./IdleReturn.ts"
import type * as MessageMatch from "./MessageMatch.ts"
import type * as RolloutMode from "./RolloutMode.ts"
import type * as Session from "./Session.ts"

/**
 * The model a request goes to (`LanguageModelV4.provider` / `.modelId`).
 *
 * @category models
 */
export interface ModelRef {
  readonly provider: string
  readonly modelId: string
}

/**
 * How the policy for a model is found:
 *
 * - a `PolicyRegistry` (e.g. from `PolicyFile.loadPolicyFilePromise` of
 *   `@context-engine/core/node`): its
 *   lookup of the model id;
 * - a partial policy, or a function of the model returning one: resolved
 *   with core's built-in registry (`PolicyRegistry.resolve`: catalog facts,
 *   derived reserves, the given fields on top);
 * - nothing: the built-in registry's lookup of the model id.
 *
 * A model the registry does not know gets the provider profile's fallback
 * policy ({@link ProviderProfile.fallbackPolicy}) with the given fields, and
 * the profile's tokenizer unless one is given. An impossible policy object
 * throws core's `PolicyInvalid` (when the controller is made, where the
 * object alone shows it). A function is a plug-in: when it throws, rejects,
 * hangs past the plug-in deadline or gives an impossible policy, the
 * request goes out as the application sent it and a `compaction-skipped`
 * event carries its `PluginFailed` (kind `"policy"`). The window learned
 * after an overflow is applied on top.
 *
 * @category models
 */
export type PolicyOption =
  | Partial<ModelPolicy.ModelPolicy>
  | PolicyRegistry.PolicyRegistry
  | ((model: ModelRef) => Partial<ModelPolicy.ModelPolicy> | Promise<Partial<ModelPolicy.ModelPolicy>>)

/**
 * Whether the policy option is a registry (has a `lookup` function).
 *
 * @category guards
 */
export const isRegistry = (option: PolicyOption | undefined): option is PolicyRegistry.PolicyRegistry =>
  typeof option === "object" && option !== null && "lookup" in option && typeof option.lookup === "function"

/**
 * The route of a model, `provider:modelId` (circuit breaker, native fallback).
 *
 * @category utils
 */
export const routeOf = (model: ModelRef): string => `${model.provider}:${model.modelId}`

/**
 * Controller options.
 *
 * @category models
 */
export interface ControllerOptions {
  /** Any engine implementing the `ContextEngine` interface (Effect or Promise face). */
  readonly engine: ContextEngine.ContextEngine | ContextEngine.AsyncContextEngine
  readonly policy?: PolicyOption
  /**
   * Persists the transcript; in memory when absent. A failing store never
   * stops a request: a write it refuses is held and stored later
   * (`store-failed`); a load that fails or has not settled within
   * `Session.STORE_LOAD_TIMEOUT_MS` (60 s; the first request of a session
   * waits for it) opens the session in memory (`store-load-failed`) and is
   * tried again in the background with backoff until it works
   * (`ControllerSessions`).
   */
  readonly store?: Session.SessionStore
  /** Session id, or a function of the model. Default `"default"`. */
  readonly sessionId?: string | ((model: ModelRef) => string)
  /**
   * Entry ids of the application's messages by position (`Session.MessageId`),
   * e.g. a replayed transcript's own ids; default `<sessionId>:<n>`.
   */
  readonly messageId?: Session.MessageId
  /**
   * How much of the history each step's sync compares with the transcript
   * (`MessageMatch.HistoryCheck`): `"sampled"` (default; bounded per step,
   * an in-place edit of an older message is seen within a few steps) or
   * `"full"` (every message every step; O(history) per step).
   */
  readonly historyCheck?: MessageMatch.HistoryCheck
  readonly onEvent?: (event: ContextEvent) => void
  /** Compact-and-retry once on a classified context overflow. Default `true`. */
  readonly overflowRecovery?: boolean
  /**
   * Rollout mode (`RolloutMode.ts`): `shadow` records what compaction would
   * do and sends the request unchanged; `advisory` applies only the
   * deterministic tiers; `active` (default) applies everything. Any other
   * value fails when the controller is made, with `InvalidInput` naming it.
   */
  readonly mode?: RolloutMode.RolloutMode
  /**
   * Offload large tool results as they arrive (`Offload`: head + tail + a
   * pointer in the view, original in the transcript). Default on with
   * `Offload.defaults` (20,000 tokens, in the policy's tokenizer); `false`
   * turns it off.
   */
  readonly offload?: Offload.Options | false
  /**
   * Idle return (`IdleReturn`): after the provider's prompt cache expired, a
   * request of at least `thresholdTokens` (default 100,000) is compacted
   * (as a manual compaction) before it is sent, once per cache window.
   * Default on; `false` turns it off.
   */
  readonly idleReturn?: IdleReturn.Options | false
  /** Clock (default `() => new Date()`), for the idle-return check. */
  readonly now?: () => Date
  /** Deadline of one compaction in ms (default `GuardedCompaction.DEFAULT_COMPACTION_TIMEOUT_MS`). */
  readonly compactionTimeoutMs?: number
  /**
   * Consecutive failed compactions after which the route's circuit opens
   * (default `PluginGuard.DEFAULT_MAX_CONSECUTIVE_FAILURES`, 3): automatic
   * compactions then run only the engine's deterministic reduction (no
   * summarizer call, no checkpoint) and the request goes out even when that
   * does not fit (`GuardedCompaction`).
   */
  readonly maxConsecutiveCompactionFailures?: number
  /**
   * Deadline in ms for the first content part of a response to a request
   * that carries native compaction options; past it the request is aborted
   * and the route falls back to local compaction (`NativeFallback`, C19).
   * Default `NativeFallback.DEFAULT_RESPONSE_TIMEOUT_MS` (300,000).
   */
  readonly nativeResponseTimeoutMs?: number
}
