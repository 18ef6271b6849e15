/**
 * The tiered-summary engine (DESIGN.md "The tiered pipeline" and
 * "Summarize, validate, commit"): cheap, lossless strategies first, re-measure,
 * and write a validated checkpoint only if the request is still over target.
 *
 * The ladder of one `compact`:
 * 1. the deterministic stages (`Tiers.deterministic`: clamp → dedupe → soft
 *    trim → hard clear → input clear → media). A compaction the threshold
 *    triggered pays one prompt-cache rewrite whatever it edits, so they go
 *    as deep as they can (every old tool result and long tool-call argument
 *    but the protected newest, as Anthropic's `clear_tool_uses` clears all
 *    but `keep`), and are applied alone when that reaches the low-water mark
 *    ({@link LOW_WATER_SHARE}): each rewrite buys the most steps the lossless
 *    stages can give (unguarded: see `Kernel.ladder`'s `rewriting`). Short
 *    of the mark a checkpoint follows. A manual or overflow compaction's
 *    stages stop at its target;
 * 2. if still over (or manual / overflow), a cut point ({@link CutPoint.find}; tail: `keepRecentTokens`),
 *    covered user messages kept verbatim (`KeptUsers`) and a summary of the newly covered range with its key
 *    identifiers (`KeyIdentifiers`) onto the previous checkpoint (beforeCompact hooks may supply it or cancel);
 * 3. deterministic validation; on failure one repair retry naming what is
 *    missing, then the fallback summarizer;
 * 4. if the summarizer threw, or every attempt failed validation: keep the
 *    previous checkpoint and reduce deterministically ({@link
 *    reductionStrategies}: tool output cleared down to the last result, then
 *    the oldest whole turns after the checkpoint dropped) to the low-water mark a checkpoint lands at
 *    (the next compaction is as far off), reporting the failure in `failures`; only when even that cannot fit, fail with
 *    `BudgetExceeded` and the numbers. A summarizer that throws is not replaced by another summary in the
 *    same compaction (shared case C05: nothing is committed); the next compaction retries.
 *
 * Commit is atomic: the result either carries a validated checkpoint and all
 * its edits, or no checkpoint; an empty or error-text summary never passes
 * validation. Nothing is written: `entriesToAppend` is for the caller.
 *
 * Defaults (Pi's `DEFAULT_COMPACTION_SETTINGS`): `keepRecentTokens` and
 * `reserveTokens` come from the {@link ModelPolicy} (Pi: 20,000 / 16,384);
 * the summary cap is `0.8 × reserveTokens` (Pi's `generateSummary`
 * `maxTokens`), at most a quarter of the conversation budget and at most
 * `maxCheckpointTokens` (default 2,000: a handoff, not an index — issue #11).
 *
 * @since 0.1.0
 */
import {
  ActiveView,
  Budget,
  type Checkpoint,
  ContextEngine,
  Errors,
  Measurer,
  type ModelPolicy,
  type PluginGuard,
  type Strategy
} from "@context-engine/core"
import { Pipeline, type Tiers } from "@context-engine/strategies"
import { Effect, Layer, Option } from "effect"
import type { Hooks } from "./CompactionHooks.ts"
import type * as CutPoint from "./CutPoint.ts"
import * as Build from "./checkpoint/Build.ts"
import * as Commit from "./checkpoint/Commit.ts"
import * as Prepare from "./checkpoint/Prepare.ts"
import * as Reduce from "./checkpoint/Reduce.ts"
import * as Summarize from "./checkpoint/Summarize.ts"
import * as Engine from "./Engine.ts"
import * as ExtractiveSummarizer from "./ExtractiveSummarizer.ts"
import * as MemoryExtractor from "./MemoryExtractor.ts"
import * as MemoryFlush from "./MemoryFlush.ts"
import { type Summarizer, SummarizerService } from "./Summarizer.ts"

export { MAX_SHARE_OF_AVAILABLE, SUMMARY_SHARE_OF_RESERVE } from "./checkpoint/Prepare.ts"
export { reductionStrategies } from "./checkpoint/Reduce.ts"

/**
 * The low-water mark's default share, now the kernel's
 * ({@link Engine.DEFAULT_LOW_WATER_SHARE}, with its sources).
 *
 * @deprecated Use `Engine.DEFAULT_LOW_WATER_SHARE`.
 * @category constants
 */
export const LOW_WATER_SHARE = Engine.DEFAULT_LOW_WATER_SHARE

/**
 * Options. Token counts are in tokens of the policy's tokenizer.
 *
 * @category models
 */
export interface Options extends Omit<Engine.Options, "strategies"> {
  /** The summarizer; default {@link ExtractiveSummarizer.make}. */
  readonly summarizer?: Summarizer
  /**
   * Used when the summarizer's output fails validation twice. Default: the
   * extractive summarizer when the primary is another kind, none otherwise.
   */
  readonly fallbackSummarizer?: Summarizer | null
  /** @deprecated Use `measurer` (the same option in every engine). */
  readonly measurerFor?: (policy: ModelPolicy.ModelPolicy) => Measurer.Measurer
  /**
   * Options of the built-in stages ({@link Engine.Options.strategies}). The
   * function form replaced the built-in stages and is deprecated: use
   * `replaceBuiltInStrategies` for that, `extraStrategies` to add a stage.
   */
  readonly strategies?:
    | Tiers.Options
    | ((policy: ModelPolicy.ModelPolicy, budget: Budget.Budget) => ReadonlyArray<Strategy.Strategy>)
  /** Turns always kept (default {@link CutPoint.DEFAULT_MIN_RECENT_TURNS}). */
  readonly minRecentTurns?: number
  /** Minimum identifier retention (default `CheckpointValidation.DEFAULT_MIN_IDENTIFIER_RETENTION`). */
  readonly minIdentifierRetention?: number
  /**
   * Largest checkpoint in tokens (default `ExtractiveSummarizer.DEFAULT_CHECKPOINT_TOKENS`, 2,000), filled by
   * priority; the engine lowers it further to the room the request has left.
   */
  readonly maxCheckpointTokens?: number
  readonly hooks?: Hooks
  /**
   * Deadline of each plug-in call (summarizer, hook, memory extractor) in ms;
   * default `PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`. A plug-in that throws,
   * hangs, is aborted by `input.signal` or returns a malformed result leaves
   * the previous checkpoint in place (reported in `failures`).
   */
  readonly pluginTimeoutMs?: number
  /**
   * Durable memory: the extractor the once-per-cycle flush runs before each
   * checkpoint (default the offline {@link MemoryExtractor.make}; `null`
   * turns the flush off) and the memory budget of the view in tokens
   * (default `Memory.DEFAULT_MEMORY_BUDGET_TOKENS`). See {@link MemoryFlush}.
   */
  readonly memory?: {
    readonly extractor?: MemoryExtractor.MemoryExtractor | null
    readonly budgetTokens?: number
  }
}

/**
 * Engine name, reported as `ContextEngine.name`.
 *
 * @category constants
 */
export const NAME = "tiered-summary"

type Failure = Errors.SummarizerFailed | Errors.ValidationFailed | PluginGuard.PluginFailed

/**
 * Creates the engine. One instance per session: `recordOutcome` state
 * (usage anchor, a pending overflow) lives in it.
 *
 * `compact` runs the checkpoint tier's phases (`checkpoint/`, plain records
 * between them): `Prepare` → `Summarize` (hooks, ladder; each attempt
 * `Build` + validate) → `Commit`, or `Reduce` when no checkpoint is written.
 *
 * @example
 * ```ts
 * import { PolicyRegistry } from "@context-engine/core"
 * import { TieredSummaryEngine } from "@context-engine/engines"
 *
 * const engine = TieredSummaryEngine.makeAsync()
 * const input = { entries: [], policy: PolicyRegistry.lookupSync("claude-sonnet-4-5") }
 * const decision = await engine.shouldCompact(input)
 * if (decision.compact) {
 *   const result = await engine.compact(input)
 *   // append result.entriesToAppend to the transcript, send result.view
 * }
 * ```
 *
 * @category constructors
 */
export const make = (options: Options = {}): ContextEngine.ContextEngine => {
  const extractive = () => ExtractiveSummarizer.make()
  const summarizer = options.summarizer ?? extractive()
  const fallback =
    options.fallbackSummarizer !== undefined
      ? options.fallbackSummarizer
      : summarizer.name === "extractive"
        ? null
        : extractive()
  const legacyLadder = typeof options.strategies === "function" ? options.strategies : undefined
  const replaceBuiltInStrategies = options.replaceBuiltInStrategies ?? legacyLadder
  const measurerOption = options.measurer ?? options.measurerFor
  const memoryOptions = (measurer: Measurer.Measurer) => ({
    countTokens: measurer.tokenizer.count,
    ...(options.memory?.budgetTokens !== undefined ? { budgetTokens: options.memory.budgetTokens } : {})
  })
  const core = Engine.kernel(
    {
      ...options,
      strategies: typeof options.strategies === "function" ? {} : (options.strategies ?? {}),
      ...(measurerOption ? { measurer: measurerOption } : {}),
      ...(replaceBuiltInStrategies ? { replaceBuiltInStrategies } : {})
    },
    (_input, measurer) => ({ memory: memoryOptions(measurer) })
  )
  const extractor =
    options.memory?.extractor === null ? undefined : (options.memory?.extractor ?? MemoryExtractor.make())

  const planOf = (input: ContextEngine.EngineInput, ctx: Engine.Prepared): ContextEngine.CompactionPlan => {
    const cutPoint = Prepare.plannedCut({
      entries: input.entries,
      view: ctx.view,
      prefix: ctx.active.prefix,
      measurer: ctx.measurer,
      budget: ctx.budget,
      policy: input.policy,
      minRecentTurns: options.minRecentTurns
    })
    return {
      reasons: core.reasons(input, ctx),
      targetTokens: ctx.budget.inputBudgetTokens,
      stages: [Pipeline.NORMALIZE_STAGE, ...core.ladder(input, ctx).map((s) => s.name), "checkpoint"],
      ...(cutPoint ? { cutPoint } : {})
    }
  }

  // The summarize step after the hooks: this cycle's memory flush, on the covered originals (its records join
  // the prefix the summary is sized against, and are committed with the checkpoint or not at all), then the
  // ladder on the prepared range, each attempt built and validated.
  const summarizeStep = (
    input: ContextEngine.EngineInput,
    ctx: Engine.Prepared,
    preparation: Prepare.Preparation,
    hookSummary: Checkpoint.CheckpointContent | undefined,
    step: { readonly targetTokens: number; readonly timestamp: string; readonly tools: Build.BuildInput["tools"] }
  ) =>
    Effect.gen(function* () {
      const { measurer } = ctx
      const { generation } = preparation
      const flush: MemoryFlush.FlushResult = extractor
        ? yield* MemoryFlush.run({
            entries: input.entries,
            cycle: generation,
            covered: [...preparation.covered, ...preparation.turnPrefix],
            keptEntryIds: preparation.keptUserEntryIds,
            extractor,
            timestamp: step.timestamp,
            parentId: input.entries.at(-1)?.id ?? null,
            signal: input.signal,
            timeoutMs: options.pluginTimeoutMs
          })
        : { entries: [] }
      const prefix =
        flush.entries.length > 0
          ? ActiveView.reconstruct([...input.entries, ...flush.entries], {
              tools: input.tools ?? [],
              memory: memoryOptions(measurer)
            }).prefix
          : ctx.active.prefix
      const fixed = { ...step, preparation, prefix, measurer, budget: ctx.budget }
      const ladder = yield* Summarize.summarize({
        summarizer,
        fallback,
        hookSummary,
        preparation,
        maxTokens: Build.summaryMaxTokens(fixed),
        countTokens: measurer.tokenizer.count,
        instructions: input.compactInstructions,
        signal: input.signal,
        timeoutMs: options.pluginTimeoutMs,
        build: (result) =>
          Build.build(
            {
              ...fixed,
              tokensBefore: core.measured(input, ctx).inputTokens,
              minIdentifierRetention: options.minIdentifierRetention
            },
            result
          )
      })
      return { ladder, flush }
    })

  const compact = (
    input: ContextEngine.EngineInput,
    plan?: ContextEngine.CompactionPlan
  ): Effect.Effect<ContextEngine.CompactionResult, ContextEngine.CompactionError> =>
    Effect.gen(function* () {
      const ctx = core.prepare(input)
      yield* Budget.checkFixedOverhead(ctx.budget, ctx.overhead)
      const { measurer, budget } = ctx
      // Hysteresis: a threshold compaction aims at the low-water mark; a caller's plan (e.g. overflow
      // recovery) may lower the target; a manual compaction and an overflow keep their own targets.
      const { targetTokens, lowWaterTokens, force } = core.targets(input, ctx, plan)
      const timestamp = core.timestamp(input)
      const editEntries: Commit.EditEntries = (edits, after) => core.editEntries(input, edits, timestamp, after)
      // A threshold compaction's lossless stages run to the bottom, unguarded (target: the fixed overhead).
      const floorTokens = force ? lowWaterTokens : budget.fixedOverheadTokens
      const cheap = core.run(input, ctx, core.ladder(input, ctx, !force), floorTokens)
      const failures: Array<Failure> = [...(cheap.failures ?? [])]
      const common = { cheap, before: core.measured(input, ctx), targetTokens, lowWaterTokens, editEntries }
      const reduce = (note: string) => {
        const reduced = Reduce.reduce({
          ...common,
          note,
          policy: input.policy,
          budget,
          measurer,
          hasCheckpoint: ctx.active.checkpoint !== undefined,
          failures
        })
        if (reduced instanceof Errors.BudgetExceeded) return Effect.fail(reduced)
        core.compacted()
        return Effect.succeed(reduced)
      }
      // The cheap stages alone only when they reach the low-water mark: short of it a checkpoint is needed
      // anyway, and a cache rewrite that leaves the request near the threshold would buy a few steps.
      if (cheap.after.inputTokens <= lowWaterTokens && !force) {
        core.compacted()
        return Commit.notNeeded(common)
      }
      const preparation = Prepare.prepare({
        entries: input.entries,
        active: ctx.active,
        view: cheap.view,
        viewTokens: cheap.after.inputTokens,
        measurer,
        budget,
        policy: input.policy,
        targetTokens,
        lowWaterTokens,
        minRecentTurns: options.minRecentTurns,
        maxCheckpointTokens: options.maxCheckpointTokens,
        nextGeneration: input.nextGeneration
      })
      if (preparation._tag === "NothingToSummarize") return yield* reduce(preparation.note)
      if (input.deterministicOnly === true) return yield* reduce("deterministic only (advisory mode, open circuit)")
      const hooks = yield* Summarize.beforeCompact({
        hooks: options.hooks?.beforeCompact ?? [],
        input,
        plan: plan ?? planOf(input, ctx),
        preparation,
        timeoutMs: options.pluginTimeoutMs
      })
      if (hooks._tag === "Stop") {
        if (hooks.failure) failures.push(hooks.failure)
        return yield* reduce(hooks.note)
      }
      const { ladder, flush } = yield* summarizeStep(input, ctx, preparation, hooks.summary, {
        targetTokens,
        timestamp,
        tools: cheap.view.tools
      })
      failures.push(...ladder.failures)
      if (ladder._tag === "Failed") return yield* reduce(ladder.reason)
      core.compacted()
      const result = Commit.commit({
        ...common,
        preparation,
        built: ladder.built,
        tried: ladder.tried,
        memoryEntries: flush.entries,
        memoryNote: MemoryFlush.note(flush),
        lastEntryId: input.entries.at(-1)?.id ?? null,
        timestamp,
        failures
      })
      yield* Commit.afterCompact(options.hooks?.afterCompact ?? [], { input, result }, options.pluginTimeoutMs)
      return result
    })

  return Engine.make(core, {
    name: NAME,
    plan: (input) => Effect.sync(() => planOf(input, core.prepare(input))),
    compact,
    validate: (input, result) =>
      Effect.sync(() => Build.revalidate(input, result, core.measurerFor(input.policy), options.minIdentifierRetention))
  })
}

/**
 * Provides `ContextEngine.ContextEngineService`: the engine built from the
 * `SummarizerService` in context (required; e.g. `ExtractiveSummarizer.layer`)
 * and, when provided, `Measurer.MeasurerService` as the measurer of every
 * policy (else one measurer per policy's tokenizer).
 *
 * @example
 * ```ts
 * import { ContextEngine } from "@context-engine/core"
 * import { ExtractiveSummarizer, TieredSummaryEngine } from "@context-engine/engines"
 * import { Layer } from "effect"
 * const EngineLive = TieredSummaryEngine.layer().pipe(Layer.provide(ExtractiveSummarizer.layer))
 * ```
 *
 * @category layers
 */
export const layer = (
  options: Omit<Options, "summarizer" | "measurer" | "measurerFor"> = {}
): Layer.Layer<ContextEngine.ContextEngineService, never, SummarizerService> =>
  Layer.effect(
    ContextEngine.ContextEngineService,
    Effect.gen(function* () {
      const summarizer = yield* SummarizerService
      const measurer = yield* Effect.serviceOption(Measurer.MeasurerService)
      return make({ ...options, summarizer, ...(Option.isSome(measurer) ? { measurer: () => measurer.value } : {}) })
    })
  )

/**
 * The engine's Promise face (`ContextEngine.toAsync`): same methods, plain
 * async; failures reject with the typed error.
 *
 * @category constructors
 */
export const makeAsync = (options: Options = {}): ContextEngine.AsyncContextEngine =>
  ContextEngine.toAsync(make(options))
