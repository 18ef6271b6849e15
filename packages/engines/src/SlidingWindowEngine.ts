/**
 * The sliding-window engine: the cheap tier. It never calls a model. It
 * measures, and when the next request would not fit it runs the
 * deterministic strategies (clamp → dedupe → soft trim → hard clear →
 * media), then the sliding window (oldest whole turns), then the last
 * resort for a turn in progress too large alone (`Tiers.lastResort`: the
 * tool loop's older results trimmed and cleared down to its latest step, then
 * the largest editable messages clamped to head + tail), stopping as soon as
 * the view fits. Nothing in the transcript changes: the result is a list
 * of view edits, returned as `edit` entries for the caller to append.
 *
 * It never writes a checkpoint, but it respects one already in the
 * transcript (ours or an imported Pi compaction): its view starts from the
 * latest checkpoint like every view (core's `ActiveView`), the
 * checkpoint is never edited or dropped, and covered messages stay covered.
 *
 * Outcomes a caller acts on are typed:
 * - `FixedOverheadExceedsBudget` when system prompt + tool schemas alone
 *   leave no room (reported once, no compaction attempted; shared case C04);
 * - `BudgetExceeded` when even the system prompt, tool schemas and the latest
 *   user message do not fit (shared case C09); the latest user message is
 *   never dropped or clamped silently. With `window: false` the last resort
 *   is off too, and a turn in progress over the budget fails the same way.
 *
 * @example
 * ```ts
 * import { ContextEngine, PolicyRegistry } from "@context-engine/core"
 * import { SlidingWindowEngine } from "@context-engine/engines"
 *
 * const engine = ContextEngine.toAsync(SlidingWindowEngine.make())
 * const policy = PolicyRegistry.lookupSync("claude-sonnet-4-5")
 * const input = { entries, policy }
 * if ((await engine.shouldCompact(input)).compact) {
 *   const result = await engine.compact(input)
 *   await store.append(result.entriesToAppend)
 * }
 * ```
 *
 * @since 0.1.0
 */

import type { Checkpoint, ContextView as ContextViewType } from "@context-engine/core"
import { ActiveView, Budget, ContextEngine, ContextView, Measurement, Measurer } from "@context-engine/core"
import { Invariants, Pipeline, SlidingWindow, Tiers } from "@context-engine/strategies"
import { Effect, Layer, Option } from "effect"
import * as Engine from "./Engine.ts"

/**
 * Options: the kernel's ({@link Engine.Options}: measurer, built-in stage
 * options, custom strategies, low-water mark, clock) plus the window.
 *
 * @category models
 */
export interface Options extends Engine.Options {
  /**
   * Drop whole turns when the lossless stages are not enough, then trim the
   * turn in progress down to its latest step (`Tiers.lastResort`). Default true.
   */
  readonly window?: boolean
  /**
   * Whether the latest user message may be clamped when it alone does not
   * fit. Default false: the engine fails with `BudgetExceeded` instead.
   */
  readonly clampLatestUserMessage?: boolean
}

/**
 * The defaults, with their sources in {@link Options} and {@link Engine.DEFAULT_LOW_WATER_SHARE}.
 *
 * @category constants
 */
export const defaults = {
  window: true,
  lowWaterShare: Engine.DEFAULT_LOW_WATER_SHARE,
  clampLatestUserMessage: false
} as const

/**
 * The engine's name.
 *
 * @category constants
 */
export const NAME = "sliding-window"

/**
 * The view of an engine input: core's `ActiveView.reconstruct` (system
 * messages and memory, the latest checkpoint — ours or imported, e.g. a Pi
 * compaction — the latest user message when the checkpoint covered it, then
 * the messages from the checkpoint's `firstKeptEntryId` on, with the
 * branch's edit entries applied). This engine never writes a checkpoint, but
 * it keeps the one it finds, so switching engines never brings back covered
 * messages or loses a summary.
 *
 * @category constructors
 */
export const viewOf = (input: ContextEngine.EngineInput): ContextViewType.ContextView =>
  ActiveView.reconstruct(input.entries, { tools: input.tools ?? [] }).view

/**
 * Deterministic id of the `index`-th edit entry appended after `lastEntryId` ({@link Engine.editEntryId}).
 *
 * @category constructors
 */
export const editEntryId = Engine.editEntryId

/**
 * Builds the engine.
 *
 * @category constructors
 */
export const make = (options: Options = {}): ContextEngine.ContextEngine => {
  const clampLatestUser = options.clampLatestUserMessage ?? defaults.clampLatestUserMessage
  const window = options.window ?? defaults.window
  const core = Engine.kernel({
    ...options,
    strategies: {
      ...options.strategies,
      clamp: { clampLatestUserMessage: clampLatestUser, ...options.strategies?.clamp }
    }
  })

  // After the window, the last resort (`Tiers.lastResort`): a tool loop whose protected newest results are
  // over the target alone is trimmed down to its latest step, then clamped to the request's own target.
  const strategiesOf = (
    input: ContextEngine.EngineInput,
    prepared: Engine.Prepared,
    plan?: ContextEngine.CompactionPlan
  ) => [
    ...core.ladder(input, prepared),
    ...(window
      ? [
          SlidingWindow.make(options.strategies?.slidingWindow),
          ...Tiers.lastResort(core.targets(input, prepared, plan).targetTokens, options.strategies)
        ]
      : [])
  ]

  // A manual compaction keeps about `keepRecentTokens` of conversation (Pi's manual /compact).
  const targetOf = (
    input: ContextEngine.EngineInput,
    prepared: Engine.Prepared,
    plan?: ContextEngine.CompactionPlan
  ) => {
    const targets = core.targets(input, prepared, plan)
    return input.manual === true && plan?.targetTokens === undefined
      ? Math.min(targets.targetTokens, prepared.budget.fixedOverheadTokens + input.policy.keepRecentTokens)
      : targets.lowWaterTokens
  }

  const plan: ContextEngine.ContextEngine["plan"] = (input) =>
    Effect.sync(() => {
      const prepared = core.prepare(input)
      return {
        reasons: core.reasons(input, prepared),
        targetTokens: targetOf(input, prepared),
        stages: [Pipeline.NORMALIZE_STAGE, ...strategiesOf(input, prepared).map((strategy) => strategy.name)]
      }
    })

  const compact: ContextEngine.ContextEngine["compact"] = (input, givenPlan) =>
    Effect.gen(function* () {
      const prepared = core.prepareToCompact(input)
      yield* Budget.checkFixedOverhead(prepared.budget, prepared.overhead)
      const strategies = strategiesOf(input, prepared, givenPlan)
      const result = core.run(input, prepared, strategies, targetOf(input, prepared, givenPlan), !clampLatestUser)
      const compaction: ContextEngine.CompactionResult = {
        view: result.view,
        edits: result.edits,
        entriesToAppend: core.editEntries(input, result.edits, core.timestamp(input)),
        stages: result.stages,
        before: core.measured(input, prepared),
        after: result.after,
        fits: result.after.inputTokens <= prepared.budget.inputBudgetTokens,
        ...(result.failures ? { failures: result.failures } : {})
      }
      // Over the budget: the typed error, with the reduction when it made the request smaller (the request path
      // sends it rather than the unreduced request).
      yield* Budget.checkConversation(
        prepared.budget,
        result.after.inputTokens - prepared.budget.fixedOverheadTokens,
        window
          ? `after every deterministic stage, the sliding window and the last resort (the turn in progress trimmed to its latest step, then clamped), the system prompt, tool schemas and the latest user message (kept verbatim) still need ${result.after.inputTokens} tokens (${Measurement.breakdown(result.after)})`
          : `after every deterministic stage, the system prompt, tool schemas and the turn in progress (kept verbatim) still need ${result.after.inputTokens} tokens (${Measurement.breakdown(result.after)})`,
        result.after.inputTokens < compaction.before.inputTokens ? compaction : undefined
      )
      core.compacted()
      return compaction
    })

  const validate: ContextEngine.ContextEngine["validate"] = (input, result) =>
    Effect.sync((): Checkpoint.ValidationReport => {
      const before = viewOf(input)
      const violations = Invariants.check(before, result.view)
      const replayed = ContextView.applyEdits(
        before,
        result.entriesToAppend.flatMap((entry) => (entry.kind === "edit" ? [entry.edit] : []))
      )
      const checks: Array<Checkpoint.ValidationReport["checks"][number]> = [
        {
          name: "invariants",
          ok: violations.length === 0,
          detail:
            violations.length === 0
              ? "pairing, verbatim system/latest user, no empty or reasoning-only messages, latest reasoning untouched"
              : violations
                  .map((violation) => `${violation.invariant} at ${violation.entryId}: ${violation.detail}`)
                  .join("; ")
        },
        {
          name: "fits",
          ok: result.fits,
          detail: `${result.after.inputTokens} of ${result.after.budgetTokens} input tokens`
        },
        {
          name: "entries-reproduce-view",
          ok: JSON.stringify(ContextView.toMessages(replayed)) === JSON.stringify(ContextView.toMessages(result.view)),
          detail: "appending entriesToAppend and rebuilding the view yields the compacted view"
        }
      ]
      return { ok: checks.every((check) => check.ok), checks, identifierRetention: 1, missing: [] }
    })

  return Engine.make(core, { name: NAME, plan, compact, validate })
}

/**
 * Provides `ContextEngine.ContextEngineService`: the engine, with the
 * `Measurer.MeasurerService` in context as its measurer for every policy when
 * one is provided (one tokenizer; without it, one measurer per policy's
 * tokenizer). `options.measurer` is ignored in favour of the service.
 *
 * @example
 * ```ts
 * import { SlidingWindowEngine } from "@context-engine/engines"
 * const EngineLive = SlidingWindowEngine.layer()
 * ```
 *
 * @category layers
 */
export const layer = (options: Omit<Options, "measurer"> = {}): Layer.Layer<ContextEngine.ContextEngineService> =>
  Layer.effect(
    ContextEngine.ContextEngineService,
    Effect.gen(function* () {
      const measurer = yield* Effect.serviceOption(Measurer.MeasurerService)
      return make({ ...options, ...(Option.isSome(measurer) ? { measurer: () => measurer.value } : {}) })
    })
  )

/**
 * The engine with its Promise face (`ContextEngine.toAsync`): same methods,
 * plain async; failures reject with the typed error.
 *
 * @category constructors
 */
export const makeAsync = (options: Options = {}): ContextEngine.AsyncContextEngine =>
  ContextEngine.toAsync(make(options))
