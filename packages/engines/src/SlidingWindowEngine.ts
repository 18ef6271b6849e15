/**
 * The sliding-window engine: the cheap tier. It never calls a model. It
 * measures, and when the next request would not fit it runs the
 * deterministic strategies (clamp → dedupe → soft trim → hard clear →
 * media) and then the sliding window (oldest whole turns), stopping as soon
 * as the view fits. Nothing in the transcript changes: the result is a list
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
 * - `BudgetExceeded` when even the system prompt, tool schemas and the turn
 *   in progress do not fit (shared case C09); the latest user message is
 *   never dropped or clamped silently.
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

import type { Checkpoint, Measurement, ModelPolicy, Strategy, ViewEdit } from "@context-engine/core"
import {
  ActiveView,
  Budget,
  ContextEngine,
  ContextView,
  EngineInput,
  Entry,
  Errors,
  Measurer,
  Tokenizers
} from "@context-engine/core"
import { Invariants, Pipeline, SlidingWindow, Tiers } from "@context-engine/strategies"
import { Effect } from "effect"

/**
 * Options. Shares are fractions 0..1.
 *
 * @category models
 */
export interface Options {
  /**
   * Measurer per policy. Default: `Measurer.make(Tokenizers.forPolicy(policy))`,
   * one per tokenizer id, kept for the engine's lifetime so counts are cached.
   */
  readonly measurer?: (policy: ModelPolicy.ModelPolicy) => Measurer.Measurer
  /** Options of the built-in stages (see each strategy for defaults and their sources). */
  readonly strategies?: Tiers.Options
  /** Custom strategies, run after the built-in lossless stages and before the window. */
  readonly extraStrategies?: ReadonlyArray<Strategy.Strategy>
  /** Drop whole turns when the lossless stages are not enough. Default true. */
  readonly window?: boolean
  /**
   * Compaction aims at this share of the input budget, so the next step does
   * not trigger again at once (hysteresis). Default 0.9 (own choice; Codex
   * auto-compacts at 90% of the window).
   */
  readonly targetShare?: number
  /**
   * Whether the latest user message may be clamped when it alone does not
   * fit. Default false: the engine fails with `BudgetExceeded` instead.
   */
  readonly clampLatestUserMessage?: boolean
  /** Timestamp of appended entries. Default: the last entry's timestamp (deterministic). */
  readonly now?: () => string
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = { window: true, targetShare: 0.9, clampLatestUserMessage: false } as const

/**
 * The engine's name.
 *
 * @category constants
 */
export const NAME = "sliding-window"

interface Prepared {
  readonly view: ContextView.ContextView
  readonly measurer: Measurer.Measurer
  readonly budget: Budget.Budget
  readonly overhead: { readonly systemTokens: number; readonly toolSchemaTokens: number }
  readonly measurement: Measurement.Measurement
  /** The latest checkpoint's view item and its tokens, when the transcript has one. */
  readonly checkpoint: { readonly item: ContextView.ViewItem; readonly tokens: number } | undefined
}

/**
 * The view of an engine input, built like the tiered engine's
 * (core's `ActiveView.reconstruct`): system messages and memory, the latest
 * checkpoint (ours or imported, e.g. a Pi compaction), the latest user
 * message when the checkpoint covered it, then the messages from the
 * checkpoint's `firstKeptEntryId` on, with the transcript's edit entries
 * applied. Without a checkpoint: every message, edits applied. This engine
 * never writes a checkpoint, but it keeps the one it finds, so switching
 * engines never brings back covered messages or loses a summary.
 *
 * @category constructors
 */
export const viewOf = (input: ContextEngine.EngineInput): ContextView.ContextView =>
  ActiveView.reconstruct(input.entries, { tools: input.tools ?? [] }).view

const withoutItem = (view: ContextView.ContextView, entryId: string): ContextView.ContextView => ({
  ...view,
  items: view.items.filter((item) => item.entryId !== entryId)
})

/** Puts the checkpoint item back after the stable prefix (system and memory items), where `viewOf` has it. */
const withCheckpoint = (view: ContextView.ContextView, item: ContextView.ViewItem): ContextView.ContextView => {
  let at = 0
  while (at < view.items.length && (view.items[at]!.source === "memory" || view.items[at]!.message.role === "system"))
    at++
  return { ...view, items: [...view.items.slice(0, at), item, ...view.items.slice(at)] }
}

/**
 * Deterministic id of the `index`-th edit entry appended after `lastEntryId`.
 *
 * @category constructors
 */
export const editEntryId = (lastEntryId: string, index: number): string => `${lastEntryId}/edit/${index}`

/**
 * Builds the engine.
 *
 * @category constructors
 */
export const make = (options: Options = {}): ContextEngine.ContextEngine => {
  const measurers = new Map<string, Measurer.Measurer>()
  const measurerFor = (policy: ModelPolicy.ModelPolicy): Measurer.Measurer => {
    if (options.measurer) return options.measurer(policy)
    let measurer = measurers.get(policy.tokenizer)
    if (measurer === undefined) {
      measurer = Measurer.make(Tokenizers.forPolicy(policy))
      measurers.set(policy.tokenizer, measurer)
    }
    return measurer
  }
  let anchor: Measurer.Anchor | undefined
  let overflow: Errors.ContextOverflow | undefined
  const targetShare = options.targetShare ?? defaults.targetShare
  const clampLatestUser = options.clampLatestUserMessage ?? defaults.clampLatestUserMessage

  const prepare = (input: ContextEngine.EngineInput): Effect.Effect<Prepared, Errors.InvalidInput> =>
    Effect.suspend(() => {
      if (!Array.isArray(input.entries))
        return Effect.fail(
          new Errors.InvalidInput({ what: "engine input", path: "entries", detail: "expected an array" })
        )
      const checkpointView = ActiveView.reconstruct(input.entries, { tools: input.tools ?? [] })
      const view = checkpointView.view
      const measurer = measurerFor(input.policy)
      let systemTokens = 0
      for (const item of checkpointView.prefix) systemTokens += measurer.messageTokens(item.message, item.source)
      const overhead = { systemTokens, toolSchemaTokens: measurer.toolSchemaTokens(view.tools) }
      const budget = Budget.make(input.policy, overhead)
      const measurement = measurer.measure(view, { budget, ...(anchor ? { anchor } : {}) })
      const item = view.items.find((candidate) => candidate.source === "checkpoint")
      const checkpoint = item ? { item, tokens: measurer.messageTokens(item.message, item.source) } : undefined
      return Effect.succeed({ view, measurer, budget, overhead, measurement, checkpoint })
    })

  const reasonsOf = (input: ContextEngine.EngineInput, prepared: Prepared): Array<ContextEngine.CompactionReason> => {
    if (prepared.budget.availableTokens <= 0) return ["fixed-overhead-exceeded"]
    const reasons: Array<ContextEngine.CompactionReason> = []
    if (input.manual === true) reasons.push("manual")
    if (overflow !== undefined) reasons.push("overflow")
    if (prepared.measurement.inputTokens > prepared.budget.inputBudgetTokens) reasons.push("threshold")
    return reasons
  }

  const targetOf = (input: ContextEngine.EngineInput, prepared: Prepared): number => {
    const { budget } = prepared
    let target = Math.floor(budget.inputBudgetTokens * targetShare)
    if (overflow?.limitTokens !== undefined)
      target = Math.min(
        target,
        Math.floor((overflow.limitTokens - budget.reservedOutputTokens - budget.toolLoopReserveTokens) * targetShare)
      )
    // A manual compaction keeps about `keepRecentTokens` of conversation (Pi's manual /compact).
    if (input.manual === true) target = Math.min(target, budget.fixedOverheadTokens + input.policy.keepRecentTokens)
    return target
  }

  const strategiesOf = (input: ContextEngine.EngineInput, prepared: Prepared): Array<Strategy.Strategy> => {
    const lossless = Tiers.deterministic(input.policy, prepared.budget, {
      ...options.strategies,
      clamp: { clampLatestUserMessage: clampLatestUser, ...options.strategies?.clamp }
    })
    const window = options.window ?? defaults.window
    return [
      ...lossless,
      ...(options.extraStrategies ?? []),
      ...(window ? [SlidingWindow.make(options.strategies?.slidingWindow)] : [])
    ]
  }

  /**
   * The pipeline on the view. The latest checkpoint is not the strategies'
   * to edit or drop (a rebuilt view always shows it): they run on the view
   * without it, against a target and budget lowered by its tokens, and it is
   * put back afterwards; stage reports and measurements count it.
   */
  const runPipeline = (input: ContextEngine.EngineInput, prepared: Prepared, targetTokens: number): Pipeline.Result => {
    const common = {
      strategies: strategiesOf(input, prepared),
      measurer: prepared.measurer,
      policy: input.policy,
      protectLatestUserMessage: !clampLatestUser
    }
    const checkpoint = prepared.checkpoint
    if (checkpoint === undefined)
      return Pipeline.run({
        ...common,
        view: prepared.view,
        targetTokens,
        budget: prepared.budget,
        measurement: prepared.measurement
      })
    const budget = Budget.make(input.policy, {
      systemTokens: prepared.overhead.systemTokens + checkpoint.tokens,
      toolSchemaTokens: prepared.overhead.toolSchemaTokens
    })
    const result = Pipeline.run({
      ...common,
      view: withoutItem(prepared.view, checkpoint.item.entryId),
      targetTokens: targetTokens - checkpoint.tokens,
      budget
    })
    const view = withCheckpoint(result.view, checkpoint.item)
    const after = prepared.measurer.measure(view, { budget: prepared.budget })
    return {
      ...result,
      view,
      stages: result.stages.map((stage) => ({
        ...stage,
        tokensBefore: stage.tokensBefore + checkpoint.tokens,
        tokensAfter: stage.tokensAfter + checkpoint.tokens
      })),
      before: prepared.measurement,
      after,
      fits: after.inputTokens <= targetTokens
    }
  }

  const entriesFor = (
    input: ContextEngine.EngineInput,
    edits: ReadonlyArray<ViewEdit.ViewEdit>
  ): Array<Entry.EditEntry> => {
    const last = input.entries.at(-1)
    const lastId = last?.id ?? "root"
    const timestamp = options.now?.() ?? last?.timestamp ?? new Date(0).toISOString()
    let parentId: string | null = last?.id ?? null
    return edits.map((edit, index) => {
      const id = editEntryId(lastId, index)
      const entry: Entry.EditEntry = {
        id,
        parentId,
        timestamp,
        schemaVersion: Entry.CURRENT_SCHEMA_VERSION,
        kind: "edit",
        edit
      }
      parentId = id
      return entry
    })
  }

  const measure: ContextEngine.ContextEngine["measure"] = (input) =>
    Effect.map(prepare(input), (prepared) => prepared.measurement)

  const shouldCompact: ContextEngine.ContextEngine["shouldCompact"] = (input) =>
    Effect.map(prepare(input), (prepared) => {
      const reasons = reasonsOf(input, prepared)
      return {
        compact: reasons.length > 0 && !reasons.includes("fixed-overhead-exceeded"),
        reasons,
        measurement: prepared.measurement,
        budget: prepared.budget
      }
    })

  const plan: ContextEngine.ContextEngine["plan"] = (input) =>
    Effect.map(prepare(input), (prepared) => ({
      reasons: reasonsOf(input, prepared),
      targetTokens: targetOf(input, prepared),
      stages: [Pipeline.NORMALIZE_STAGE, ...strategiesOf(input, prepared).map((strategy) => strategy.name)]
    }))

  const compact: ContextEngine.ContextEngine["compact"] = (input, givenPlan) =>
    Effect.gen(function* () {
      const prepared = yield* prepare(input)
      yield* Budget.checkFixedOverhead(prepared.budget, prepared.overhead)
      const result = runPipeline(input, prepared, givenPlan?.targetTokens ?? targetOf(input, prepared))
      yield* Budget.checkConversation(
        prepared.budget,
        result.after.inputTokens - prepared.budget.fixedOverheadTokens,
        `after every deterministic stage${(options.window ?? defaults.window) ? " and the sliding window" : ""}, the system prompt, tool schemas and the turn in progress (kept verbatim) still need ${result.after.inputTokens} tokens`
      )
      overflow = undefined
      const compaction: ContextEngine.CompactionResult = {
        view: result.view,
        edits: result.edits,
        entriesToAppend: entriesFor(input, result.edits),
        stages: result.stages,
        before: result.before,
        after: result.after,
        fits: result.after.inputTokens <= prepared.budget.inputBudgetTokens
      }
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

  const assembleContext: ContextEngine.ContextEngine["assembleContext"] = (input) =>
    Effect.map(prepare(input), (prepared) => {
      // Pairing repair and empty-message removal apply to every request, compacted or not.
      const normalized = Pipeline.run({
        view: prepared.view,
        strategies: [],
        targetTokens: Number.POSITIVE_INFINITY,
        budget: prepared.budget,
        measurer: prepared.measurer,
        policy: input.policy,
        measurement: prepared.measurement
      })
      return {
        messages: ContextView.toMessages(normalized.view),
        view: normalized.view,
        measurement: normalized.after
      }
    })

  // The anchor carries the fingerprint of the view the usage describes, so
  // it expires by itself once a compaction edits that prefix.
  const recordOutcome: ContextEngine.ContextEngine["recordOutcome"] = (input, outcome) =>
    Effect.sync(() => {
      if (outcome.overflow !== undefined) {
        overflow = outcome.overflow
        anchor = undefined
      } else if (outcome.inputTokens !== undefined && outcome.lastEntryId !== undefined)
        anchor = Measurer.anchorFor(viewOf(input), {
          inputTokens: outcome.inputTokens,
          lastEntryId: outcome.lastEntryId
        })
    })

  // Every method validates its input first (typed InvalidInput / PolicyInvalid, never a raw TypeError).
  return EngineInput.guard({
    name: NAME,
    measure,
    shouldCompact,
    plan,
    compact,
    validate,
    assembleContext,
    recordOutcome
  })
}

/**
 * The engine with its Promise face (`ContextEngine.toAsync`): same methods,
 * plain async; failures reject with the typed error.
 *
 * @category constructors
 */
export const makeAsync = (options: Options = {}): ContextEngine.AsyncContextEngine =>
  ContextEngine.toAsync(make(options))
