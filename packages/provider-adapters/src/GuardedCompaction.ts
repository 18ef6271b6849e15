/**
 * One compaction on the request path that can never stop the agent
 * (issue #12 req 2): the engine's `shouldCompact` and `compact` run under a
 * deadline and the caller's `AbortSignal`; any failure — typed, a raw throw
 * inside the engine or a plug-in, a hang, an abort — comes back as a value,
 * so the caller keeps the previous valid context and still sends the
 * request. A per-route {@link PluginGuard.CircuitBreaker} stops automatic
 * summarizing compaction after `maxConsecutiveFailures` failures in a row and
 * says so.
 *
 * While the circuit is open, a request the engine says is over its budget
 * still gets the engine's deterministic reduction
 * (`EngineInput.deterministicOnly`: clamp, dedupe, tool-output trim, media,
 * the sliding window and `clamp.fit` — no summarizer, hook or memory-extractor
 * call, no checkpoint written), and the request goes out whether or not that
 * fits. Why: the breaker exists to stop paying for a compaction that keeps
 * failing (`PluginGuard.DEFAULT_MAX_CONSECUTIVE_FAILURES`: Claude Code's cap
 * of 3 on its summarizing autocompact), and Claude Code's microcompact, which
 * clears old tool results without a model call, is a separate tier that cap
 * does not stop (https://claude-wiki.com/auto-compact.html, "Three tiers of
 * compression" and "circuit breaker"). A reduction costs no model call
 * and cannot fail validation, so the breaker's reason does not apply to it,
 * while skipping it sends requests over the window that the provider rejects
 * (Codex ends the turn with "ran out of room in the model's context window"
 * when its compaction fails, openai/codex#11071; a breaker that latches while
 * the history grows crashed OpenClaude's sessions, Gitlawb/openclaude#1375).
 * A reduction does not close the circuit: it says nothing about the
 * summarizer; a manual compaction that succeeds, or `CircuitBreaker.reset`,
 * does.
 *
 * A compaction that fails with `BudgetExceeded` but carries the reduction it
 * made (`ContextEngine.bestEffortOf`: the request smaller, still over the
 * input budget) comes back as compacted with that reduction and the
 * failure: sending the unreduced request instead, several windows long after
 * a few such failures, is what made requests grow without bound (new-user
 * trial: 27,832 tokens into an 8,000-token window after a 3,452-token
 * reduction missed a 3,200-token budget).
 *
 * @since 0.2.0
 */
import { ContextEngine, PluginGuard } from "@context-engine/core"
import { Cause, Effect, Exit } from "effect"

/**
 * Deadline of one whole compaction on the request path: 180,000 ms, three
 * plug-in deadlines (`PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`: summary,
 * repair, fallback), so the engine's own per-plug-in deadlines fire first.
 *
 * @category constants
 */
export const DEFAULT_COMPACTION_TIMEOUT_MS = 3 * PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS

/**
 * Why a compaction failed: the engine's typed error, or a
 * {@link PluginGuard.PluginFailed} for a raw throw, hang or abort.
 *
 * @category models
 */
export type Failure = ContextEngine.CompactionError | PluginGuard.PluginFailed

/**
 * What happened.
 *
 * @category models
 */
export type Outcome =
  | { readonly _tag: "NotNeeded"; readonly decision?: ContextEngine.CompactionDecision }
  | {
      readonly _tag: "Compacted"
      readonly decision: ContextEngine.CompactionDecision
      readonly result: ContextEngine.CompactionResult
      /** The route's circuit is open: only the deterministic reduction ran (see the module notes). */
      readonly circuitOpen?: PluginGuard.RouteState
      /**
       * The compaction failed with `BudgetExceeded`, and `result` is the reduction it carried
       * (`ContextEngine.bestEffortOf`, `fits: false`): sent rather than the unreduced request, and reported as a
       * failure too. `route` is the breaker's state after it (a failure for the breaker).
       */
      readonly shortfall?: { readonly error: Failure; readonly route: PluginGuard.RouteState }
    }
  | {
      readonly _tag: "Failed"
      readonly decision?: ContextEngine.CompactionDecision
      readonly error: Failure
      readonly route: PluginGuard.RouteState
    }
  | {
      /**
       * The route's circuit is open and no compaction happened: none was due
       * (`decision.compact` false), or the deterministic reduction failed
       * (`error`) — the request goes out as it is.
       */
      readonly _tag: "CircuitOpen"
      readonly route: PluginGuard.RouteState
      readonly decision?: ContextEngine.CompactionDecision
      readonly error?: Failure
    }

/**
 * Inputs of {@link run}.
 *
 * @category models
 */
export interface Request {
  readonly engine: ContextEngine.ContextEngine
  readonly input: ContextEngine.EngineInput
  /** Route key for the circuit breaker (provider + model). */
  readonly route: string
  readonly breaker: PluginGuard.CircuitBreaker
  /** Default {@link DEFAULT_COMPACTION_TIMEOUT_MS}. */
  readonly timeoutMs?: number | undefined
}

const guarded = <A, E>(
  request: Request,
  effect: Effect.Effect<A, E>
): Promise<Exit.Exit<A, E | PluginGuard.PluginFailed>> =>
  PluginGuard.runGuarded(
    Effect.suspend(() => effect),
    {
      plugin: request.engine.name,
      kind: "strategy",
      timeoutMs: request.timeoutMs ?? DEFAULT_COMPACTION_TIMEOUT_MS,
      signal: request.input.signal
    }
  )

const failureOf = <E>(cause: Cause.Cause<E>, request: Request): Failure => {
  const error = Cause.squash(cause) as { _tag?: unknown }
  return typeof error === "object" && error !== null && typeof error._tag === "string"
    ? (error as Failure)
    : new PluginGuard.PluginFailed({
        plugin: request.engine.name,
        kind: "strategy",
        failure: "threw",
        timeoutMs: request.timeoutMs ?? DEFAULT_COMPACTION_TIMEOUT_MS,
        detail: String(error)
      })
}

/** The open circuit's path: decide, and when due run only the deterministic reduction (see the module notes). */
const reduceOnly = async (request: Request, route: PluginGuard.RouteState): Promise<Outcome> => {
  const decided = await guarded(request, request.engine.shouldCompact(request.input))
  if (Exit.isFailure(decided)) return { _tag: "CircuitOpen", route, error: failureOf(decided.cause, request) }
  const decision = decided.value
  if (!decision.compact) return { _tag: "CircuitOpen", route, decision }
  const reduced = await guarded(request, request.engine.compact({ ...request.input, deterministicOnly: true }))
  if (Exit.isFailure(reduced)) {
    const error = failureOf(reduced.cause, request)
    const bestEffort = ContextEngine.bestEffortOf(error)
    return bestEffort !== undefined
      ? { _tag: "Compacted", decision, result: bestEffort, circuitOpen: route, shortfall: { error, route } }
      : { _tag: "CircuitOpen", route, decision, error }
  }
  return { _tag: "Compacted", decision, result: reduced.value, circuitOpen: route }
}

/**
 * Decides and, when needed, compacts. Never rejects. Manual compactions
 * (`input.manual`) run even when the route's circuit is open, and a success
 * closes it; an automatic one on an open circuit runs only the deterministic
 * reduction (see the module notes) and leaves the circuit as it is.
 *
 * @category constructors
 */
export const run = async (request: Request): Promise<Outcome> => {
  const { breaker, route, input, engine } = request
  const state = breaker.state(route)
  if (state.open && input.manual !== true) return reduceOnly(request, state)
  const decided = await guarded(request, engine.shouldCompact(input))
  if (Exit.isFailure(decided)) {
    return { _tag: "Failed", error: failureOf(decided.cause, request), route: breaker.recordFailure(route) }
  }
  const decision = decided.value
  if (!decision.compact) return { _tag: "NotNeeded", decision }
  const compacted = await guarded(request, engine.compact(input))
  if (Exit.isFailure(compacted)) {
    const error = failureOf(compacted.cause, request)
    const failed = breaker.recordFailure(route)
    // Over the budget by a little after the best reduction: that reduction goes out, not the unreduced request.
    const bestEffort = ContextEngine.bestEffortOf(error)
    if (bestEffort !== undefined)
      return { _tag: "Compacted", decision, result: bestEffort, shortfall: { error, route: failed } }
    return { _tag: "Failed", decision, error, route: failed }
  }
  breaker.recordSuccess(route)
  return { _tag: "Compacted", decision, result: compacted.value }
}
