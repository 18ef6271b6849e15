/**
 * The request-path driver shared by the AI SDK middleware and the
 * `prepareStep` helper: syncs the session transcript with the messages the
 * application sends, asks the engine whether to compact, compacts, assembles
 * the context to send, records the provider's outcome, recovers once from a
 * context overflow, and (for provider-native engines) builds provider options
 * and reads applied edits / compaction items back.
 *
 * Plain async throughout; the engine's Effects are run with `toAsync`.
 * The parts live beside it: options (`ControllerOptions`), events
 * (`ContextEvent`), the sessions and a failing store's load
 * (`ControllerSessions`), policy resolution (`ControllerPolicies`), the shared
 * runtime and assembly (`ControllerRuntime`), one request
 * (`PrepareRequest`) and the overflow retry (`OverflowRetry`).
 *
 * @since 0.1.0
 */
import {
  type ContextEngine,
  type ContextView,
  Entry,
  Errors,
  type Message,
  type ModelPolicy
} from "@context-engine/core"
import type { ProviderNativeEngine } from "@context-engine/engines"
import * as BodyLimitRetry from "./BodyLimitRetry.ts"
import { type ControllerOptions, type ModelRef, routeOf } from "./ControllerOptions.ts"
import * as ControllerPolicies from "./ControllerPolicies.ts"
import type { Prepared } from "./ControllerRuntime.ts"
import * as ControllerRuntime from "./ControllerRuntime.ts"
import * as ControllerSessions from "./ControllerSessions.ts"
import * as MessageMatch from "./MessageMatch.ts"
import * as NativeFallback from "./NativeFallback.ts"
import * as OverflowRetry from "./OverflowRetry.ts"
import * as PrepareRequest from "./PrepareRequest.ts"
import * as RolloutMode from "./RolloutMode.ts"
import * as Session from "./Session.ts"

export type { ContextEvent } from "./ContextEvent.ts"
export type { ControllerOptions, ModelRef, PolicyOption } from "./ControllerOptions.ts"
export type { Prepared } from "./ControllerRuntime.ts"

/**
 * Provider usage as the controller records it.
 *
 * @category models
 */
export interface Usage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

/**
 * The controller.
 *
 * @category models
 */
export interface ContextController {
  readonly engine: ContextEngine.ContextEngine
  /**
   * The session for a model (opened on first use). Resolves even when the store fails: while its load fails, a
   * session held in memory (see {@link ControllerOptions.store}).
   */
  readonly session: (model: ModelRef) => Promise<Session.Session>
  /** The policy used for a model, learned window applied. */
  readonly policyFor: (model: ModelRef, session?: Session.Session) => Promise<ModelPolicy.ModelPolicy>
  /**
   * Syncs `messages` into the transcript, compacts when the engine says so,
   * and assembles what to send. `ephemeralSystem` (e.g. `prepareStep`
   * instructions) is measured but not stored or returned. When the policy
   * function fails it rejects with its `PluginFailed` (kind `"policy"`,
   * reported as `compaction-skipped`): send the request unchanged
   * ({@link unlessPolicyFailed}).
   */
  readonly prepare: (
    model: ModelRef,
    messages: ReadonlyArray<Message.Message>,
    tools: ReadonlyArray<ContextView.ToolDefinition>,
    ephemeralSystem?: ReadonlyArray<Message.Message>,
    /** The caller's abort signal (AI SDK `abortSignal`): compaction stops when it fires. */
    signal?: AbortSignal
  ) => Promise<Prepared>
  /** Records a successful response's usage and reads provider-native items back. */
  readonly recordSuccess: (
    prepared: Prepared,
    usage: Usage,
    response?: ProviderNativeEngine.NativeResponse
  ) => Promise<void>
  /**
   * On a classified overflow: compacts against the reported limit, records
   * the overflow, learns the window and returns the context for the single
   * retry. On a body-size refusal (HTTP 413, C20): learns the route's byte
   * cap and reduces bytes instead (`BodyLimitRetry`). Returns `undefined`
   * when `error` is neither (or recovery is off) — the caller rethrows it.
   */
  readonly recoverOverflow: (prepared: Prepared, error: unknown) => Promise<Prepared | undefined>
  /** Routes (`provider:modelId`) on which native compaction was found unavailable. */
  readonly nativeRoutes: NativeFallback.Routes
  /**
   * Native compaction failed on the prepared request's route (C19): turns it
   * off for the route, records an `provider-native-unavailable` event entry,
   * emits `native-unavailable`, and makes the session's next `prepare`
   * compact locally (as a manual compaction).
   */
  readonly nativeUnavailable: (
    prepared: Prepared,
    reason: NativeFallback.Reason,
    thresholdTokens: number | undefined
  ) => Promise<void>
}

/**
 * For `prepare(…).catch`: `undefined` when the policy function failed
 * (`ControllerPolicies.isPolicyFailure`; already reported as a
 * `compaction-skipped` event), so the caller sends the request as the
 * application passed it; any other error is rethrown.
 *
 * @category utils
 */
export const unlessPolicyFailed = (error: unknown): undefined => {
  if (ControllerPolicies.isPolicyFailure(error)) return undefined
  throw error
}

/**
 * Builds a controller.
 *
 * @category constructors
 */
export const make = (options: ControllerOptions): ContextController => {
  // A bad value fails here, not at the first request.
  if (typeof options !== "object" || options === null)
    throw new Errors.InvalidInput({
      what: "controller options",
      path: "options",
      detail: `${JSON.stringify(options) ?? String(options)} is not an options object; pass { engine, … }`
    })
  MessageMatch.historyCheckOf(options.historyCheck, "options.historyCheck")
  if (options.mode !== undefined && !RolloutMode.modes.includes(options.mode))
    throw new Errors.InvalidInput({
      what: "rollout mode",
      path: "options.mode",
      detail: `${JSON.stringify(options.mode) ?? String(options.mode)} is not a rollout mode; expected ${RolloutMode.modes.map((mode) => JSON.stringify(mode)).join(", ")}`
    })
  // Requests of one session are prepared one at a time, so concurrent calls never interleave their transcript syncs.
  const locks = new Map<string, Promise<unknown>>()
  const exclusive = <A>(sessionId: string, task: () => Promise<A>): Promise<A> => {
    const previous = locks.get(sessionId) ?? Promise.resolve()
    const next = previous.then(task, task)
    locks.set(
      sessionId,
      next.catch(() => undefined)
    )
    return next
  }

  // Opened on first use; a failed load opens the session in memory and is tried again later (ControllerSessions).
  const sessions = ControllerSessions.make(options, (event) => runtime.emit(event))
  const session = (model: ModelRef): Promise<Session.Session> =>
    sessions.get(typeof options.sessionId === "function" ? options.sessionId(model) : (options.sessionId ?? "default"))

  const nativeRoutes = NativeFallback.makeRoutes()
  const learnedBodyBytes = new Map<string, number>()
  const policyFor = ControllerPolicies.make(options.policy, session, nativeRoutes, learnedBodyBytes)
  const runtime = ControllerRuntime.make(options, policyFor)

  const prepare: ContextController["prepare"] = (model, messages, tools, ephemeralSystem = [], signal) => {
    const prepared = prepareInTurn(model, messages, tools, ephemeralSystem, signal)
    // A store's load or write may hold the request up to its deadline (60 s), and the session's earlier request
    // may hold the turn: an abort settles the request at once (with the signal's reason, as the model call would),
    // while the preparation finishes in the background and keeps the session's order.
    return signal ? NativeFallback.withDeadline(prepared, Number.POSITIVE_INFINITY, signal) : prepared
  }

  const prepareInTurn: ContextController["prepare"] = async (model, messages, tools, ephemeralSystem = [], signal) => {
    const current = await session(model)
    return exclusive(current.sessionId, async () => {
      try {
        return await PrepareRequest.prepare(runtime, current, model, messages, tools, ephemeralSystem, signal)
      } catch (error) {
        // The store holds writes this controller has not read (another worker on the session): read it again, once.
        if (options.store === undefined || !Session.isStaleWrite(error)) throw error
        sessions.reload(current.sessionId)
        const fresh = await session(model)
        return PrepareRequest.prepare(runtime, fresh, model, messages, tools, ephemeralSystem, signal)
      }
    })
  }

  const nativeUnavailable: ContextController["nativeUnavailable"] = async (prepared, reason, thresholdTokens) => {
    const route = routeOf(prepared.model)
    nativeRoutes.disable(route, reason)
    runtime.nativeDueSessions.add(prepared.session)
    const current = prepared.session
    await current.append([
      Entry.make(
        { id: current.nextId(), parentId: current.entries().at(-1)?.id ?? null, timestamp: new Date().toISOString() },
        {
          kind: "event",
          event: {
            name: NativeFallback.EVENT_UNAVAILABLE,
            data: NativeFallback.eventData(route, reason, thresholdTokens)
          }
        }
      )
    ])
    runtime.emit({
      type: "native-unavailable",
      sessionId: current.sessionId,
      route,
      reason,
      ...(thresholdTokens !== undefined ? { thresholdTokens } : {})
    })
  }

  const recordSuccess: ContextController["recordSuccess"] = async (prepared, usage, response) => {
    const lastEntryId = prepared.assembled.view.items.at(-1)?.entryId
    const outcome: ContextEngine.Outcome = {
      ...(usage.inputTokens !== undefined ? { inputTokens: usage.inputTokens } : {}),
      ...(usage.outputTokens !== undefined ? { outputTokens: usage.outputTokens } : {}),
      ...(usage.cachedInputTokens !== undefined ? { cachedInputTokens: usage.cachedInputTokens } : {}),
      ...(lastEntryId !== undefined ? { lastEntryId } : {})
    }
    // Shadow mode sent the application's request, while the engine decides on the transcript with its shadow
    // compactions and the offload applied (`RolloutMode.applied`): the reported input tokens measure other content
    // than the engine's view, and their ratio to the local count, applied to that view, skewed every decision
    // (one compaction per step when a large tool result was offloaded). The engine counts locally instead.
    const engineOutcome: ContextEngine.Outcome =
      runtime.mode === "shadow"
        ? { ...(usage.outputTokens !== undefined ? { outputTokens: usage.outputTokens } : {}) }
        : outcome
    await runtime.asyncEngine.recordOutcome(prepared.input, engineOutcome)
    runtime.emit({ type: "usage", sessionId: prepared.session.sessionId, ...outcome })
    if (runtime.native && response) {
      const entries = runtime.native.readResponse(prepared.input, response, {
        nextId: prepared.session.nextId,
        timestamp: new Date().toISOString()
      })
      if (entries.length > 0) {
        await prepared.session.append(entries)
        runtime.emit({ type: "native", sessionId: prepared.session.sessionId, entries })
      }
    }
  }

  return {
    engine: runtime.engine,
    session,
    policyFor,
    prepare,
    recordSuccess,
    recoverOverflow: async (prepared, error) =>
      (await OverflowRetry.recover(runtime, prepared, error)) ??
      BodyLimitRetry.recover(runtime, prepared, error, learnedBodyBytes),
    nativeRoutes,
    nativeUnavailable
  }
}
