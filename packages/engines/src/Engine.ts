/**
 * The engine kernel: what every engine does the same way, written once.
 * Sliding-window and tiered-summary engines are configurations of it: they
 * name the lossy tier that follows the built-in stages (the sliding window,
 * or a checkpoint) and leave the rest here:
 *
 * - one measurer per tokenizer id for the engine's lifetime (counts cached);
 * - the view (`ActiveView.reconstruct`: branch, checkpoint, pinned latest
 *   user message), fixed overhead, budget and measurement of an input;
 * - the reasons to compact, and the target and low-water mark
 *   ({@link DEFAULT_LOW_WATER_SHARE}, hysteresis) of a compaction;
 * - anchor (provider usage) and pending-overflow state, set by
 *   `recordOutcome`;
 * - the ladder of stages: the built-in deterministic stages, the custom
 *   strategies after them ({@link Options.extraStrategies}), or an explicit
 *   replacement ({@link Options.replaceBuiltInStrategies}); run with the
 *   checkpoint kept out of the strategies' reach;
 * - edit entries (one id scheme, one clock), one assembly normalization
 *   (`Pipeline`'s normalize stage: pairing repair, no empty messages), the
 *   input guard and the Promise face.
 *
 * @since 0.2.0
 */
import type { Measurement, Message, ModelPolicy, Strategy } from "@context-engine/core"
import {
  type ActiveView,
  Budget,
  ContextEngine,
  type ContextView,
  EngineInput,
  Entry,
  IncrementalActiveView,
  Measurer,
  RequestShape,
  Tokenizers,
  UsageScale
} from "@context-engine/core"
import { Pipeline, Tiers } from "@context-engine/strategies"
import { Effect } from "effect"
import * as ByteCap from "./ByteCap.ts"
import type { Options } from "./EngineOptions.ts"
import * as EstimateFirst from "./EstimateFirst.ts"
import type { Kernel, Prepared } from "./Kernel.ts"
import * as RequestPath from "./RequestPath.ts"

/**
 * Low-water mark of a threshold-triggered compaction, as a share of the
 * conversation budget (`Budget.availableTokens`): a compaction continues
 * past "fits" down to at most `fixedOverheadTokens + 0.5 × availableTokens`,
 * so the next one is many steps away and each prompt-cache rewrite buys
 * headroom (hysteresis). In the tiered engine it is the bar a resolution
 * by the lossless stages alone must clear: one that lands above it buys
 * less than half the budget of growth for its rewrite, so a checkpoint is
 * written instead; a checkpoint itself lands at `keepRecentTokens` plus the
 * summary when that is lower (`Prepare.cutOf`). Own choice for the bar; the
 * peers' landings are all lower: Pi compacts to `keepRecentTokens` (20,000)
 * plus a summary of at most `0.8 × reserveTokens`; Codex auto-compacts at
 * 90% of the window to a summary plus at most 20,000 tokens of recent user
 * messages; Claude Code auto-compacts near the end of the window to a
 * summary plus a few re-read files.
 *
 * @category constants
 */
export const DEFAULT_LOW_WATER_SHARE = 0.5

export type { Options } from "./EngineOptions.ts"

export type { Kernel, Prepared, Targets } from "./Kernel.ts"

/**
 * The built-in stages' options with the prompt-cache guard off (`minReclaimTokens` 0) unless the caller set
 * `toolTrim.minReclaimTokens` itself: for a compaction that rewrites the cache whatever its stages free.
 */
const withoutCacheGuard = (strategies: Tiers.Options = {}): Tiers.Options => ({
  ...strategies,
  toolTrim: { minReclaimTokens: 0, ...strategies.toolTrim }
})

/** Id of the `index`-th edit entry after `lastEntryId`, before `Entry.freshId`. @category constructors */
export const editEntryId = (lastEntryId: string, index: number): string => `${lastEntryId}/edit/${index}`

const withoutItem = (view: ContextView.ContextView, entryId: string): ContextView.ContextView => ({
  ...view,
  items: view.items.filter((item) => item.entryId !== entryId)
})

/** Puts the checkpoint item back after the stable prefix (system and memory items). */
const withCheckpoint = (view: ContextView.ContextView, item: ContextView.ViewItem): ContextView.ViewItem[] => {
  let at = 0
  while (at < view.items.length && (view.items[at]!.source === "memory" || view.items[at]!.message.role === "system"))
    at++
  return [...view.items.slice(0, at), item, ...view.items.slice(at)]
}

/**
 * Builds the kernel from the engine's options. `viewOptions` adds view
 * options (e.g. the memory budget) per input.
 *
 * @category constructors
 */
export const kernel = (
  options: Options,
  viewOptions: (input: ContextEngine.EngineInput, measurer: Measurer.Measurer) => ActiveView.ViewOptions = () => ({})
): Kernel & {
  readonly state: RequestPath.State
} => {
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
  const state: RequestPath.State = { anchor: undefined, usage: undefined, overflow: undefined }
  const lowWaterShare = options.lowWaterShare ?? DEFAULT_LOW_WATER_SHARE

  // The last input's preparation, reused while its entries, tools, policy and the anchor are the same
  // objects: shouldCompact, assembleContext and recordOutcome of one step derive the view once.
  let last:
    | {
        readonly input: ContextEngine.EngineInput
        readonly anchor: Measurer.Anchor | undefined
        readonly usage: UsageScale.UsageRatio | undefined
        prepared: Prepared
      }
    | undefined
  const isPrepared = (input: ContextEngine.EngineInput): boolean =>
    last !== undefined &&
    last.anchor === state.anchor &&
    last.usage === state.usage &&
    last.input.entries === input.entries &&
    last.input.tools === input.tools &&
    last.input.policy === input.policy
  const prepare = (input: ContextEngine.EngineInput): Prepared => {
    if (last !== undefined && isPrepared(input)) return last.prepared
    const prepared = freshPrepare(input)
    last = { input, anchor: state.anchor, usage: state.usage, prepared }
    return prepared
  }

  // The view derivation is incremental across steps of one session (a step that appends messages extends the
  // previous view); its memory options depend on the measurer's tokenizer, so a new local measurer starts a new
  // one. The usage-scaled measurer (UsageScale.scaled) is a new object whenever the provider reports usage, with
  // the same tokenizer: it must not restart the derivation, or every step of a real run is derived cold.
  let views:
    | { readonly measurer: Measurer.Measurer; readonly reconstruct: IncrementalActiveView.Incremental }
    | undefined
  const reconstruct = (
    input: ContextEngine.EngineInput,
    local: Measurer.Measurer,
    measurer: Measurer.Measurer
  ): ActiveView.ActiveView => {
    if (views?.measurer !== local) views = { measurer: local, reconstruct: IncrementalActiveView.make() }
    return views.reconstruct(input.entries, { tools: input.tools ?? [], ...viewOptions(input, measurer) })
  }

  /** `counting`: the measurer of the view's messages (default: the exact one); overhead is always exact. */
  const freshPrepare = (input: ContextEngine.EngineInput, counting?: Measurer.Measurer): Prepared => {
    // On the provider's scale once it reported usage (UsageScale): trigger, stages and `after` agree.
    const local = measurerFor(input.policy)
    const exact = state.usage ? UsageScale.scaled(local, state.usage) : local
    const measurer = counting ?? exact
    const tools = input.tools ?? []
    const active = reconstruct(input, local, exact)
    let systemTokens = 0
    for (const item of active.prefix) systemTokens += exact.messageTokens(item.message, item.source)
    const overhead = { systemTokens, toolSchemaTokens: exact.toolSchemaTokens(tools) }
    const budget = Budget.make(input.policy, overhead)
    const view = active.view
    const measurement = measurer.measure(view, { budget, ...(state.anchor ? { anchor: state.anchor } : {}) })
    const item =
      active.checkpoint === undefined ? undefined : view.items.find((candidate) => candidate.source === "checkpoint")
    const checkpoint = item ? { item, tokens: exact.messageTokens(item.message, item.source) } : undefined
    return { active, view, measurer, overhead, budget, measurement, checkpoint, ...(counting ? { exact } : {}) }
  }

  const prepareToCompact = (input: ContextEngine.EngineInput): Prepared => {
    const local = measurerFor(input.policy) as Partial<Measurer.CachedMeasurer> & Measurer.Measurer
    if (isPrepared(input) || state.usage || state.anchor || local.tokenizer.method !== "exact" || !local.withEstimates)
      return prepare(input)
    let exact: Set<Message.Message> | undefined
    const counting = local.withEstimates(EstimateFirst.estimator, (message) => !exact?.has(message))
    const rough = freshPrepare(input, counting)
    exact = EstimateFirst.exactSuffix(rough.view, counting, targets(input, rough).lowWaterTokens)
    if (exact === undefined) return prepare(input)
    return { ...rough, measurement: counting.measure(rough.view, { budget: rough.budget }) }
  }

  const reasons = (input: ContextEngine.EngineInput, prepared: Prepared): Array<ContextEngine.CompactionReason> => {
    if (prepared.budget.availableTokens <= 0) return ["fixed-overhead-exceeded"]
    const found: Array<ContextEngine.CompactionReason> = []
    if (input.manual === true) found.push("manual")
    if (state.overflow !== undefined) found.push("overflow")
    if (sentMeasurement(input, prepared).inputTokens > prepared.budget.inputBudgetTokens) found.push("threshold")
    if (ByteCap.isOver(input.policy, prepared.view)) found.push("request-bytes")
    return found
  }

  const targets: Kernel["targets"] = (input, prepared, plan) => {
    const { budget } = prepared
    const all = [...new Set([...reasons(input, prepared), ...(plan?.reasons ?? [])])]
    const force = all.includes("manual") || all.includes("overflow")
    // Less the executed-command marks assembling adds to the request's trailing commands (`RequestShape`): the
    // strategies measure the view, the provider is sent the marked request.
    const markTokens = RequestShape.markTokens(prepared.view.items, (message) =>
      prepared.measurer.messageTokens(message, "transcript")
    )
    let targetTokens = Math.min(budget.inputBudgetTokens, plan?.targetTokens ?? Number.POSITIVE_INFINITY) - markTokens
    const limit = state.overflow?.limitTokens
    // The provider's reported limit, less what the reply and the tool loop need.
    if (limit !== undefined)
      targetTokens = Math.min(targetTokens, limit - budget.reservedOutputTokens - budget.toolLoopReserveTokens)
    // Also with a caller's plan (its target is at most the input budget; a lower one, e.g. overflow recovery,
    // wins through the min); a manual compaction and an overflow keep their own targets.
    const lowWaterTokens = force
      ? targetTokens
      : Math.min(targetTokens, budget.fixedOverheadTokens + Math.floor(budget.availableTokens * lowWaterShare))
    return { reasons: all, force, targetTokens, lowWaterTokens }
  }

  // The caller's strategies (custom, or the built-in stages' replacement) as the ladder hands them out: deadline + signal.
  const custom = new WeakSet<Strategy.Strategy>()
  const remember = (strategies: ReadonlyArray<Strategy.Strategy>) => {
    for (const strategy of strategies) custom.add(strategy)
    return strategies
  }
  const ladder: Kernel["ladder"] = (input, prepared, rewriting = false) => [
    ...(options.replaceBuiltInStrategies
      ? remember(options.replaceBuiltInStrategies(input.policy, prepared.budget))
      : Tiers.deterministic(
          input.policy,
          prepared.budget,
          rewriting ? withoutCacheGuard(options.strategies) : options.strategies
        )),
    ...remember(options.extraStrategies ?? [])
  ]

  // The latest checkpoint is not the strategies' to edit or drop (a rebuilt view always shows it): they run on
  // the view without it, against a target and budget lowered by its tokens; it is put back afterwards, and the
  // stage reports and measurements count it.
  // The token ladder, then the byte cap (media references) on what it leaves.
  const run: Kernel["run"] = (input, prepared, strategies, targetTokens, protectLatestUserMessage = true) => {
    const result = runCounted(input, prepared, strategies, targetTokens, protectLatestUserMessage)
    // An estimate-first preparation's result is measured exactly: so is what the byte cap leaves.
    const measurer = prepared.exact ?? prepared.measurer
    const reduced = ByteCap.reduce(result.view, input.policy, measurer)
    if (reduced === undefined) return result
    const after = measurer.measure(reduced.view, { budget: prepared.budget })
    return {
      ...result,
      view: reduced.view,
      edits: [...result.edits, ...reduced.edits],
      stages: [...result.stages, reduced.stage],
      after,
      fits: after.inputTokens <= targetTokens && !ByteCap.isOver(input.policy, reduced.view)
    }
  }
  // The ladder; after an estimate-first preparation, its result measured exactly (and the ladder run again,
  // exactly, when that is over the target — EstimateFirst.finish).
  const runCounted: Kernel["run"] = (input, prepared, strategies, targetTokens, protectLatestUserMessage = true) => {
    const first = runLadder(input, prepared, strategies, targetTokens, protectLatestUserMessage)
    const { exact, ...exactly } = prepared
    if (exact === undefined) return first
    return EstimateFirst.finish(first, exact, { budget: prepared.budget }, targetTokens, (view, measurement) =>
      runLadder(
        input,
        { ...exactly, view, measurer: exact, measurement },
        strategies,
        targetTokens,
        protectLatestUserMessage
      )
    )
  }
  const runLadder: Kernel["run"] = (input, prepared, strategies, targetTokens, protectLatestUserMessage = true) => {
    const common = {
      strategies,
      measurer: prepared.measurer,
      policy: input.policy,
      protectLatestUserMessage,
      ...(options.strategyTimeoutMs !== undefined ? { strategyTimeoutMs: options.strategyTimeoutMs } : {}),
      ...(input.signal !== undefined ? { signal: input.signal } : {}),
      isPlugin: (strategy: Strategy.Strategy) => custom.has(strategy)
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
    const view = { ...result.view, items: withCheckpoint(result.view, checkpoint.item) }
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

  const editEntries: Kernel["editEntries"] = (input, edits, timestamp, after = []) => {
    const lastId = input.entries.at(-1)?.id ?? "root"
    const fresh = (id: string) => Entry.freshId(id, input.entries)
    return Entry.chain(
      after.at(-1)?.id ?? input.entries.at(-1)?.id ?? null,
      timestamp,
      edits.map((edit, index) => ({ id: fresh(editEntryId(lastId, index)), body: { kind: "edit" as const, edit } }))
    )
  }

  // Once per preparation: shouldCompact's decision, measure and the request assembleContext sends share them.
  const { normalize, request } = RequestPath.perPreparation()
  /**
   * What the request will measure once assembled (`RequestPath.shape`: pairing repair synthesizes a result for
   * every unanswered tool call, recorded commands at the end are marked). A preparation counted by estimates
   * (`prepareToCompact`) keeps its own measurement: it is compacted next, normalize stage first.
   */
  const sentMeasurement = (input: ContextEngine.EngineInput, prepared: Prepared): Measurement.Measurement =>
    prepared.exact === undefined ? request(input, prepared).measurement : prepared.measurement

  return {
    measurerFor,
    prepare,
    prepareToCompact,
    normalize,
    request,
    measured: sentMeasurement,
    reasons,
    targets,
    ladder,
    run,
    editEntries,
    timestamp: (input) => options.now?.().toISOString() ?? input.entries.at(-1)?.timestamp ?? new Date(0).toISOString(),
    compacted: () => {
      state.overflow = undefined
    },
    state
  }
}

/** What a configuration supplies: its name, compaction, plan and validation. @category models */
export interface Configuration {
  readonly name: string
  readonly plan: ContextEngine.ContextEngine["plan"]
  readonly compact: ContextEngine.ContextEngine["compact"]
  readonly validate: ContextEngine.ContextEngine["validate"]
}

/**
 * The engine: the configuration's methods plus the kernel's `measure`,
 * `shouldCompact`, `assembleContext` and `recordOutcome`, behind the input
 * guard (typed `InvalidInput` / `PolicyInvalid`, never a raw TypeError).
 *
 * @category constructors
 */
export const make = (core: ReturnType<typeof kernel>, configuration: Configuration): ContextEngine.ContextEngine =>
  EngineInput.guard({
    specificationVersion: ContextEngine.SPECIFICATION_VERSION,
    name: configuration.name,
    measure: (input) => Effect.sync(() => core.measured(input, core.prepare(input))),
    shouldCompact: (input) =>
      Effect.sync(() => {
        const prepared = core.prepare(input)
        const reasons = core.reasons(input, prepared)
        return {
          compact: reasons.length > 0 && !reasons.includes("fixed-overhead-exceeded"),
          reasons,
          measurement: core.measured(input, prepared),
          budget: prepared.budget
        }
      }),
    plan: configuration.plan,
    compact: configuration.compact,
    validate: configuration.validate,
    assembleContext: (input) => RequestPath.assemble(core, input),
    recordOutcome: (input, outcome) => RequestPath.recordOutcome(core, input, outcome)
  })
