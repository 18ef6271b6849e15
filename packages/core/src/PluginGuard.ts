/**
 * Guards for code the engine does not own — summarizers, compaction hooks,
 * memory extractors, custom strategies — so a plug-in can never stop the
 * agent (issue #12 req 2): every call runs with a deadline and the caller's
 * `AbortSignal`, and a throw, a hang, an abort or a malformed result becomes
 * a typed {@link PluginFailed} the engine turns into "keep the previous
 * valid context" while the request still goes out.
 *
 * A {@link CircuitBreaker} stops retrying compaction on a route after
 * {@link DEFAULT_MAX_CONSECUTIVE_FAILURES} consecutive failures and says so,
 * instead of paying for a failing summarizer on every step.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { PluginGuard } from "@context-engine/core"
 *
 * const guarded = PluginGuard.guardPromise({
 *   plugin: "my-hook",
 *   kind: "hook",
 *   run: async (_signal) => "ok"
 * })
 * Effect.runPromise(guarded) // "ok", or fails with PluginFailed
 * ```
 *
 * @since 0.2.0
 */
import { Effect, type Exit, Fiber, Schema } from "effect"

/**
 * Default deadline of one plug-in call: 60,000 ms. Long enough for an LLM
 * summarizer to write a ~2,000-token checkpoint at a slow 40 tokens/s with
 * room for queueing; short enough that a hung plug-in costs one minute, not
 * the session. Configure per engine (`pluginTimeoutMs`).
 *
 * @category constants
 */
export const DEFAULT_PLUGIN_TIMEOUT_MS = 60_000

/**
 * Default number of consecutive compaction failures after which a route's
 * circuit opens: 3, Claude Code's cap (`MAX_CONSECUTIVE_AUTOCOMPACT_FAILURES`,
 * added after 1,279 sessions retried a failing autocompact ≥ 50 times).
 *
 * @category constants
 */
export const DEFAULT_MAX_CONSECUTIVE_FAILURES = 3

/**
 * Which kind of plug-in failed (`store`: the transcript store refused a
 * write, e.g. during an outage; `policy`: a controller's policy function
 * threw, rejected, hung or returned an impossible policy).
 *
 * @category models
 */
export type PluginKind = "summarizer" | "hook" | "memory-extractor" | "strategy" | "store" | "policy"

/**
 * How it failed: `threw` (an exception or rejected promise), `timeout`
 * (no answer within `timeoutMs`), `aborted` (the caller's signal fired),
 * `malformed` (the result did not have the promised shape).
 *
 * @category models
 */
export type PluginFailure = "threw" | "timeout" | "aborted" | "malformed"

/**
 * A plug-in call failed. `timeoutMs` is the deadline it ran under.
 *
 * @category errors
 */
export class PluginFailed extends Schema.TaggedError<PluginFailed>()("PluginFailed", {
  plugin: Schema.String,
  kind: Schema.Literals(["summarizer", "hook", "memory-extractor", "strategy", "store", "policy"]),
  failure: Schema.Literals(["threw", "timeout", "aborted", "malformed"]),
  timeoutMs: Schema.Number,
  detail: Schema.String
}) {
  override get message(): string {
    const how =
      this.failure === "timeout"
        ? `did not answer within ${this.timeoutMs} ms`
        : this.failure === "aborted"
          ? "was aborted by the caller"
          : this.failure === "malformed"
            ? "returned a malformed result"
            : "threw"
    // "The summarizer anthropic:claude-haiku-4-5 threw", but "The transcript store threw", not "The store transcript store"
    const name = this.plugin.split(" ").includes(this.kind) ? this.plugin : `${this.kind} ${this.plugin}`
    return `The ${name} ${how}${this.detail ? `: ${this.detail}` : ""}`
  }
}

/**
 * Options of one guarded call.
 *
 * @category models
 */
export interface GuardOptions {
  /** The plug-in's name, for the error. */
  readonly plugin: string
  readonly kind: PluginKind
  /** Deadline in milliseconds (default {@link DEFAULT_PLUGIN_TIMEOUT_MS}); `Infinity` turns it off. */
  readonly timeoutMs?: number | undefined
  /** The caller's signal (AI SDK `abortSignal`); when it fires the call is abandoned as `aborted`. */
  readonly signal?: AbortSignal | undefined
}

const describe = (cause: unknown): string => {
  try {
    if (cause instanceof Error) return cause.message.slice(0, 500)
    return String(cause).slice(0, 500)
  } catch {
    return "unprintable error"
  }
}

const fail = (options: GuardOptions, failure: PluginFailure, detail: string): PluginFailed =>
  new PluginFailed({
    plugin: options.plugin,
    kind: options.kind,
    failure,
    timeoutMs: options.timeoutMs ?? DEFAULT_PLUGIN_TIMEOUT_MS,
    detail
  })

/**
 * Runs a Promise-returning plug-in with a deadline and the caller's signal.
 * The plug-in receives a signal that fires on the deadline or the caller's
 * abort, so a well-behaved plug-in stops its own work; one that ignores it is
 * abandoned (its promise is left to settle unobserved). A synchronous throw,
 * a rejection, a timeout or an abort all become {@link PluginFailed};
 * `validate`, when given, turns a result of the wrong shape into
 * `malformed`.
 *
 * @category combinators
 */
export const guardPromise = <A>(
  options: GuardOptions & {
    readonly run: (signal: AbortSignal) => Promise<A> | A
    readonly validate?: ((value: A) => string | undefined) | undefined
  }
): Effect.Effect<A, PluginFailed> =>
  Effect.callback<A, PluginFailed>((resume) => {
    const timeoutMs = options.timeoutMs ?? DEFAULT_PLUGIN_TIMEOUT_MS
    const controller = new AbortController()
    let settled = false
    let timer: ReturnType<typeof setTimeout> | undefined
    const finish = (effect: Effect.Effect<A, PluginFailed>): void => {
      if (settled) return
      settled = true
      if (timer !== undefined) clearTimeout(timer)
      options.signal?.removeEventListener("abort", onAbort)
      resume(effect)
    }
    const onAbort = (): void => {
      controller.abort(options.signal?.reason)
      finish(Effect.fail(fail(options, "aborted", describe(options.signal?.reason ?? "aborted"))))
    }
    if (options.signal?.aborted) {
      onAbort()
      return
    }
    options.signal?.addEventListener("abort", onAbort, { once: true })
    if (Number.isFinite(timeoutMs)) {
      timer = setTimeout(() => {
        controller.abort(new Error(`timed out after ${timeoutMs} ms`))
        finish(Effect.fail(fail(options, "timeout", "")))
      }, timeoutMs)
    }
    const succeed = (value: A): void => {
      let problem: string | undefined
      try {
        problem = options.validate?.(value)
      } catch (cause) {
        problem = describe(cause)
      }
      finish(problem === undefined ? Effect.succeed(value) : Effect.fail(fail(options, "malformed", problem)))
    }
    try {
      Promise.resolve(options.run(controller.signal)).then(succeed, (cause) =>
        finish(Effect.fail(fail(options, "threw", describe(cause))))
      )
    } catch (cause) {
      finish(Effect.fail(fail(options, "threw", describe(cause))))
    }
    return Effect.sync(() => {
      controller.abort(new Error("interrupted"))
      finish(Effect.fail(fail(options, "aborted", "interrupted")))
    })
  })

/** `effect` with its defects (a raw `throw`, a `TypeError`) as {@link PluginFailed} `threw`. */
const catchDefects = <A, E>(effect: Effect.Effect<A, E>, options: GuardOptions): Effect.Effect<A, E | PluginFailed> =>
  Effect.catchDefect(effect, (defect) => Effect.fail(fail(options, "threw", describe(defect))))

/** `value`, or {@link PluginFailed} `malformed` when `validate` finds a problem (or throws). */
const checked = <A>(
  value: A,
  options: GuardOptions & { readonly validate?: ((value: A) => string | undefined) | undefined }
): Effect.Effect<A, PluginFailed> => {
  let problem: string | undefined
  try {
    problem = options.validate?.(value)
  } catch (cause) {
    problem = describe(cause)
  }
  return problem === undefined ? Effect.succeed(value) : Effect.fail(fail(options, "malformed", problem))
}

/**
 * Runs a plug-in that is an Effect (a `Summarizer.summarize`, a strategy)
 * with the same deadline and signal, and turns its defects (a raw `throw`
 * inside `Effect.sync`, a `TypeError` from a bad result) into
 * {@link PluginFailed}. Its typed failures pass through unchanged.
 *
 * @category combinators
 */
export const guardEffect = <A, E>(
  effect: Effect.Effect<A, E>,
  options: GuardOptions & { readonly validate?: ((value: A) => string | undefined) | undefined }
): Effect.Effect<A, E | PluginFailed> => {
  const timeoutMs = options.timeoutMs ?? DEFAULT_PLUGIN_TIMEOUT_MS
  const guarded = catchDefects(effect, options)
  const timed = Number.isFinite(timeoutMs)
    ? Effect.timeoutOrElse(guarded, {
        duration: timeoutMs,
        orElse: () => Effect.fail(fail(options, "timeout", ""))
      })
    : guarded
  const validated = Effect.flatMap(timed, (value) => checked(value, options))
  const signal = options.signal
  if (signal === undefined) return validated
  return Effect.raceFirst(
    validated,
    guardPromise<never>({
      ...options,
      timeoutMs: Number.POSITIVE_INFINITY,
      run: () => new Promise<never>(() => {})
    })
  )
}

/**
 * Runs `effect` as {@link guardEffect} would and resolves with its exit
 * (never rejects), without setting up the deadline and the abort race when
 * the effect completes synchronously: a deadline cannot pass, nor an abort
 * be seen, inside one synchronous run (JavaScript runs it to its end either
 * way; `guardEffect`'s race is won by it too, even on an already aborted
 * signal), so the exit is the same — only the race's fibers are skipped
 * (≈ 3 µs warm, more on a cold step, on every request through the
 * middleware: issue #13 req 1). An effect that suspends is guarded from
 * there on, and interrupted when its deadline passes or the signal aborts.
 *
 * @category combinators
 */
export const runGuarded = <A, E>(
  effect: Effect.Effect<A, E>,
  options: GuardOptions & { readonly validate?: ((value: A) => string | undefined) | undefined }
): Promise<Exit.Exit<A, E | PluginFailed>> => {
  const fiber = Effect.runFork(catchDefects(effect, options))
  const exit = fiber.pollUnsafe()
  if (exit === undefined) {
    const joined = Effect.onInterrupt(Fiber.join(fiber), () => Fiber.interrupt(fiber))
    return Effect.runPromiseExit(guardEffect(joined, options))
  }
  if (exit._tag === "Failure" || options.validate === undefined) return Promise.resolve(exit)
  return Effect.runPromiseExit(checked(exit.value, options))
}

/**
 * The state of one route in a {@link CircuitBreaker}.
 *
 * @category models
 */
export interface RouteState {
  readonly consecutiveFailures: number
  /** Open: automatic compaction on this route is skipped until a reset or a successful (manual) compaction. */
  readonly open: boolean
}

/**
 * Counts consecutive compaction failures per route (provider + model, or any
 * key the caller chooses) and opens after `maxConsecutiveFailures`
 * (default {@link DEFAULT_MAX_CONSECUTIVE_FAILURES}). A success closes it.
 *
 * @category models
 */
export interface CircuitBreaker {
  readonly maxConsecutiveFailures: number
  readonly state: (route: string) => RouteState
  /** Records a failure; returns the new state (`open` turns true on the failure that reaches the cap). */
  readonly recordFailure: (route: string) => RouteState
  readonly recordSuccess: (route: string) => void
  /** Closes the route's circuit (e.g. after the user fixed the summarizer). */
  readonly reset: (route: string) => void
}

/**
 * Builds a {@link CircuitBreaker}.
 *
 * @category constructors
 */
export const makeCircuitBreaker = (
  maxConsecutiveFailures: number = DEFAULT_MAX_CONSECUTIVE_FAILURES
): CircuitBreaker => {
  const failures = new Map<string, number>()
  const state = (route: string): RouteState => {
    const consecutiveFailures = failures.get(route) ?? 0
    return { consecutiveFailures, open: consecutiveFailures >= maxConsecutiveFailures }
  }
  return {
    maxConsecutiveFailures,
    state,
    recordFailure: (route) => {
      failures.set(route, (failures.get(route) ?? 0) + 1)
      return state(route)
    },
    recordSuccess: (route) => {
      failures.delete(route)
    },
    reset: (route) => {
      failures.delete(route)
    }
  }
}
