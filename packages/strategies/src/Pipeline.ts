/**
 * The pipeline runner (DESIGN.md "The tiered pipeline"): runs strategies in
 * order (least destructive first), re-measures after each stage, stops as
 * soon as the view fits the target, and reports every stage.
 *
 * Before the first stage the view is normalized (tool pairing repaired,
 * empty messages and reasoning-only assistant messages dropped); after every stage {@link Invariants.enforce}
 * refuses edits that break an invariant and repairs pairing. A stage whose
 * edits free fewer tokens than its `minReclaimTokens` (the prompt-cache
 * guard) is discarded and reported as `skipped`; a strategy that throws or
 * returns a malformed result (a Promise, an edit without an op or message, an
 * edit naming an entry not in the view) is reported as `skipped` with the
 * error and leaves the view as it was.
 *
 * Re-measuring is incremental: per-message counts are cached by object
 * identity ({@link MeasureCache}), so a stage costs only the messages it
 * replaced or inserted.
 *
 * @since 0.1.0
 */

import type { Budget, ContextEngine, ContextView, Measurer, ModelPolicy, ViewEdit } from "@context-engine/core"
import { MeasureCache, Measurement, PluginGuard, ReasoningTokens, Strategy } from "@context-engine/core"
import { Effect } from "effect"
import * as Invariants from "./Invariants.ts"
import * as Normalization from "./Normalization.ts"

/**
 * What the pipeline runs on.
 *
 * @category models
 */
export interface Input {
  readonly view: ContextView.ContextView
  readonly strategies: ReadonlyArray<Strategy.Strategy>
  /** Stop once the request input is at most this many tokens. */
  readonly targetTokens: number
  readonly budget: Budget.Budget
  readonly measurer: Measurer.Measurer
  readonly policy: ModelPolicy.ModelPolicy
  /** The measurement of `view`, when the caller already has it (saves one full count). */
  readonly measurement?: Measurement.Measurement
  /**
   * Keep the latest user message verbatim (DESIGN.md invariant). Set to
   * `false` only when the policy allows clamping user input; drops are
   * refused either way. Default true.
   */
  readonly protectLatestUserMessage?: boolean
  /**
   * Deadline of one strategy's `apply`, in milliseconds (default
   * `PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`). `apply` is synchronous (a
   * Promise it returns is a `malformed` result, not awaited) and cannot be
   * interrupted: a result that arrives after the deadline is discarded (the
   * view before it stays) and reported as a `timeout` failure.
   */
  readonly strategyTimeoutMs?: number
  /** The caller's signal: once it fires, no further plug-in strategy runs (an `aborted` failure is reported). */
  readonly signal?: AbortSignal
  /**
   * The strategies the deadline and the signal apply to (the caller's own);
   * default: all. Built-in stages are bounded and always run, so an aborted
   * compaction still leaves a request that fits.
   */
  readonly isPlugin?: (strategy: Strategy.Strategy) => boolean
}

/**
 * What the pipeline produced.
 *
 * @category models
 */
export interface Result {
  readonly view: ContextView.ContextView
  /** Every accepted edit, in the order applied (normalization first). */
  readonly edits: ReadonlyArray<ViewEdit.ViewEdit>
  readonly stages: ReadonlyArray<ContextEngine.StageReport>
  readonly before: Measurement.Measurement
  readonly after: Measurement.Measurement
  /** Strategies that threw, returned a malformed result, overran their deadline or were aborted (their stage is skipped). */
  readonly failures?: ReadonlyArray<PluginGuard.PluginFailed>
  /** `after.inputTokens <= targetTokens`. */
  readonly fits: boolean
}

/**
 * Stage name of the normalization that runs before the strategies
 * (tool-pairing repair, empty messages dropped); see {@link Normalization}.
 *
 * @category constants
 */
export const NORMALIZE_STAGE = Normalization.NORMALIZE_STAGE

type Counts = { -readonly [K in Measurement.Category]: number }

const now = (): number => performance.now()

/**
 * Keeps a running measurement: the part of the first measurement that is not
 * per-message (tool schemas, request framing, anchoring) stays fixed; the
 * per-message part is re-summed from identity-cached counts.
 */
const makeTracker = (
  measurer: Measurer.CachedMeasurer,
  view: ContextView.ContextView,
  first: Measurement.Measurement
) => {
  // Counted as the measurer counts a view: reasoning before the current tool loop by its provider rule.
  const itemCounts = (items: ReadonlyArray<ContextView.ViewItem>): Counts => {
    const sum: Counts = Measurement.zeroCounts()
    const loopStart = ReasoningTokens.currentLoopStart(items, (item) => item.message)
    for (let index = 0; index < items.length; index++) {
      const item = items[index]!
      const counts = measurer.countMessage(item.message, item.source, index < loopStart ? "prior" : "current")
      for (const key in counts) sum[key as Measurement.Category] += counts[key as Measurement.Category] ?? 0
    }
    return sum
  }
  const initial = itemCounts(view.items)
  const base = { ...first.byCategory } as Counts
  for (const key in initial) base[key as Measurement.Category] -= initial[key as Measurement.Category]
  return (next: ContextView.ContextView): Measurement.Measurement => {
    const counts = itemCounts(next.items)
    for (const key in counts) counts[key as Measurement.Category] += base[key as Measurement.Category]
    // An edited view is no longer the request the usage described: its count is an estimate (C13).
    const edited = first.method === "anchored" && next !== view
    return Measurement.fromCounts(
      counts,
      edited
        ? {
            ...first,
            method: "estimate",
            notes: [...(first.notes ?? []), "anchored usage less the local count of what the edits removed"]
          }
        : first
    )
  }
}

/** What the stages share while the pipeline runs: the view so far, its measurement and the reports. */
interface RunState {
  view: ContextView.ContextView
  current: Measurement.Measurement
  readonly edits: Array<ViewEdit.ViewEdit>
  readonly stages: Array<ContextEngine.StageReport>
  readonly failures: Array<PluginGuard.PluginFailed>
}

/** The normalization stage (tool pairing repaired, empty messages dropped) — always first, never skipped. */
const normalizeStage = (
  input: Input,
  before: Measurement.Measurement,
  measure: (view: ContextView.ContextView) => Measurement.Measurement
): RunState => {
  const started = now()
  const normalized = Normalization.normalize(input.view)
  const current = normalized.edits.length === 0 ? before : measure(normalized.view)
  const stage: ContextEngine.StageReport = {
    stage: NORMALIZE_STAGE,
    tokensBefore: before.inputTokens,
    tokensAfter: current.inputTokens,
    edits: normalized.edits.length,
    durationMs: now() - started,
    status: normalized.edits.length === 0 ? "not-needed" : "applied",
    ...(normalized.edits.length === 0
      ? {}
      : { note: "repaired tool pairing / dropped empty or reasoning-only messages" })
  }
  return { view: normalized.view, current, edits: [...normalized.edits], stages: [stage], failures: [] }
}

/**
 * Runs the pipeline. Pure and synchronous; never throws for a misbehaving
 * strategy (its stage is reported as skipped).
 *
 * @category constructors
 */
export const run = (input: Input): Result => {
  const measurer = MeasureCache.wrap(input.measurer)
  const before = input.measurement ?? measurer.measure(input.view, { budget: input.budget })
  const measure = makeTracker(measurer, input.view, before)
  const state = normalizeStage(input, before, measure)
  for (const strategy of input.strategies) {
    if (state.current.inputTokens <= input.targetTokens)
      state.stages.push({
        stage: strategy.name,
        tokensBefore: state.current.inputTokens,
        tokensAfter: state.current.inputTokens,
        edits: 0,
        durationMs: 0,
        status: "not-needed",
        note: "already within target"
      })
    else runStrategy(input, strategy, state, measurer, measure)
  }
  return {
    view: state.view,
    edits: state.edits,
    stages: state.stages,
    before,
    after: state.current,
    fits: state.current.inputTokens <= input.targetTokens,
    ...(state.failures.length > 0 ? { failures: state.failures } : {})
  }
}

/**
 * One strategy's stage: version check, the caller's signal and deadline, the
 * result's shape, the invariants and the prompt-cache guard; updates `state`
 * (the view and measurement only when the stage is applied) and reports it.
 */
const runStrategy = (
  input: Input,
  strategy: Strategy.Strategy,
  state: RunState,
  measurer: Measurer.CachedMeasurer,
  measure: (view: ContextView.ContextView) => Measurement.Measurement
): void => {
  const started = now()
  const timeoutMs = input.strategyTimeoutMs ?? PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS
  const report = (status: "skipped" | "applied", tokensAfter: number, edits: number, note?: string): void => {
    state.stages.push({
      stage: strategy.name,
      tokensBefore: state.current.inputTokens,
      tokensAfter,
      edits,
      durationMs: now() - started,
      status,
      ...(note !== undefined ? { note } : {})
    })
  }
  const skip = (note: string): void => report("skipped", state.current.inputTokens, 0, note)
  const fail = (failure: PluginGuard.PluginFailed["failure"], detail: string): void => {
    state.failures.push(
      new PluginGuard.PluginFailed({ plugin: strategy.name, kind: "strategy", failure, timeoutMs, detail })
    )
    skip(`strategy ${failure === "threw" ? "threw" : failure}: ${detail}`)
  }
  const version = strategy.specificationVersion
  if (version !== undefined && version !== Strategy.SPECIFICATION_VERSION) {
    skip(
      `strategy implements specificationVersion ${String(version)}; this pipeline runs ${Strategy.SPECIFICATION_VERSION}`
    )
    return
  }
  const plugin = input.isPlugin?.(strategy) ?? true
  if (plugin && input.signal?.aborted) {
    fail("aborted", "the caller's signal fired before it ran")
    return
  }
  let proposed: Strategy.StrategyResult
  try {
    proposed = strategy.apply({
      view: state.view,
      measurement: state.current,
      targetTokens: input.targetTokens,
      budget: input.budget,
      measurer,
      policy: input.policy
    })
  } catch (error) {
    fail("threw", error instanceof Error ? error.message : String(error))
    return
  }
  if (plugin && now() - started > timeoutMs) {
    fail("timeout", `answered after ${Math.round(now() - started)} ms; its result is discarded`)
    return
  }
  const malformed = malformedResult(proposed, state.view)
  if (malformed !== undefined) {
    fail("malformed", malformed)
    return
  }
  if (proposed.edits.length === 0) {
    skip(proposed.note ?? "nothing to do")
    return
  }
  const enforced = Invariants.enforce(state.view, proposed.edits, strategy.name, {
    allowLatestUserReplace: input.protectLatestUserMessage === false
  })
  const next = measure(enforced.view)
  const freed = state.current.inputTokens - next.inputTokens
  const minimum = strategy.minReclaimTokens ?? 0
  const refusedNote = enforced.refused > 0 ? `; ${enforced.refused} edit(s) refused by invariants` : ""
  if (freed <= 0 || freed < minimum) {
    skip(`freed ${freed} tokens, less than its minimum of ${Math.max(1, minimum)}${refusedNote}`)
    return
  }
  const note =
    proposed.note !== undefined || refusedNote !== ""
      ? `${proposed.note ?? ""}${refusedNote}`.replace(/^; /, "")
      : undefined
  report("applied", next.inputTokens, enforced.edits.length, note)
  state.view = enforced.view
  for (const edit of enforced.edits) state.edits.push(edit)
  state.current = next
}

const EDIT_OPS = new Set(["drop", "replace", "insert"])

/**
 * Whether `value` is a thenable (a Promise, or anything with a `then`
 * function). `apply` is synchronous (`Strategy.apply` returns a
 * `StrategyResult`; the pipeline is pure and synchronous): an `async apply`
 * returns a Promise, which is not a result. Its eventual rejection is
 * observed and ignored here, so it cannot surface as an unhandled rejection.
 */
const isThenable = (value: unknown): boolean => {
  if ((typeof value !== "object" && typeof value !== "function") || value === null) return false
  try {
    const then = (value as { then?: unknown }).then
    if (typeof then !== "function") return false
    then.call(value, undefined, () => undefined)
  } catch {
    // a throwing `then` getter or call: still a thenable, still not a result
  }
  return true
}

/**
 * Why a strategy's result is not a `StrategyResult` (edits with an op, an
 * entry id of the view it was given — or of an insert earlier in the same
 * result — and, where needed, a message), or undefined. An edit naming an
 * entry the view does not hold would be ignored by `ContextView.applyEdits`:
 * the strategy looked at something else, so its result is malformed as a
 * whole, like any other shape error (one rule: none of its edits apply).
 */
const malformedResult = (proposed: unknown, view: ContextView.ContextView): string | undefined => {
  if (isThenable(proposed))
    return "it returned a Promise (a thenable): `apply` must return its result synchronously (an `async apply` is not supported)"
  const edits = (proposed as { edits?: unknown } | null)?.edits
  if (!Array.isArray(edits)) return "its result has no edits array"
  let known: Set<string> | undefined
  for (let index = 0; index < edits.length; index++) {
    const edit = edits[index] as Partial<Record<string, unknown>> | null
    if (typeof edit !== "object" || edit === null || !EDIT_OPS.has(edit.op as string))
      return `edit ${index} has no valid op (drop, replace or insert)`
    const anchor = edit.op === "insert" ? edit.afterEntryId : edit.entryId
    if (typeof anchor !== "string") return `edit ${index} (${String(edit.op)}) names no entry id`
    const message = edit.message as { role?: unknown } | undefined
    if (edit.op !== "drop" && (typeof message !== "object" || message === null || typeof message.role !== "string"))
      return `edit ${index} (${String(edit.op)}) has no message`
    known ??= new Set(view.items.map((item) => item.entryId))
    if (!known.has(anchor))
      return `edit ${index} (${String(edit.op)}) names entry id ${JSON.stringify(anchor)}, which is not in the view it was given`
    if (edit.op === "insert" && typeof edit.id === "string") known.add(edit.id)
  }
  return undefined
}

/**
 * {@link run} as an `Effect` (it cannot fail).
 *
 * @category constructors
 */
export const runEffect = (input: Input): Effect.Effect<Result> => Effect.sync(() => run(input))
