/**
 * The tiered-summary engine (DESIGN.md "The tiered pipeline" and
 * "Summarize, validate, commit"): cheap, lossless strategies first, re-measure,
 * and write a validated checkpoint only if the request is still over target.
 *
 * The ladder of one `compact`:
 * 1. the deterministic stages (`Tiers.deterministic`: clamp → dedupe → soft
 *    trim → hard clear → media) until the request fits — for a compaction
 *    the threshold triggered, until it reaches the low-water mark
 *    ({@link LOW_WATER_SHARE}), so the next compaction is many steps away;
 *    stages that stop short of that mark are not applied alone;
 * 2. if it is still over (or compaction is manual / an overflow), a cut
 *    point ({@link CutPoint.find}) and a summary of the newly covered range
 *    onto the previous checkpoint (beforeCompact hooks may supply it or cancel);
 * 3. deterministic validation; on failure one repair retry naming what is
 *    missing, then the fallback summarizer;
 * 4. if the summarizer threw, or every attempt failed validation: keep the
 *    previous checkpoint and reduce deterministically ({@link
 *    reductionStrategies}: tool output cleared down to the last result, then
 *    the oldest whole turns after the checkpoint dropped), reporting the
 *    failure in `failures`; only when even that cannot fit, fail with
 *    `BudgetExceeded` and the numbers. A
 *    summarizer that throws is not replaced by another summary in the same
 *    compaction (shared case C05: nothing is committed); the next compaction
 *    retries.
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
  CheckpointRenderer,
  CheckpointValidation,
  ContextEngine,
  type ContextView,
  type Entry,
  Errors,
  type Measurement,
  type Measurer,
  type Message,
  type ModelPolicy,
  PluginGuard,
  type Strategy
} from "@context-engine/core"
import { Pipeline, Tiers } from "@context-engine/strategies"
import { Effect } from "effect"
import { type Hooks, malformedBeforeCompactResult } from "./CompactionHooks.ts"
import * as CutPoint from "./CutPoint.ts"
import * as Engine from "./Engine.ts"
import * as ExtractiveSummarizer from "./ExtractiveSummarizer.ts"
import * as MemoryExtractor from "./MemoryExtractor.ts"
import * as MemoryFlush from "./MemoryFlush.ts"
import type { CoveredItem, SummarizeResult, Summarizer } from "./Summarizer.ts"
import * as SummaryLadder from "./SummaryLadder.ts"

/**
 * Share of `reserveTokens` a summary may use: Pi's `generateSummary` caps the
 * summary at `Math.floor(0.8 * reserveTokens)`.
 *
 * @category constants
 */
export const SUMMARY_SHARE_OF_RESERVE = 0.8

/**
 * Largest share of the conversation budget (`availableTokens`) a summary or
 * the kept tail may use — own choice, so small windows still leave room for
 * the other (Pi has no such cap; its windows are ≥ 128K).
 *
 * @category constants
 */
export const MAX_SHARE_OF_AVAILABLE = { summary: 0.25, keepRecent: 0.5 } as const

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

const memoryNote = (flush: MemoryFlush.FlushResult): string =>
  flush.skipped !== undefined
    ? `; memory flush ${flush.skipped}`
    : flush.entries.length > 0
      ? `; memory flush: ${flush.entries.length - 1} records`
      : ""

const sum = (values: ReadonlyArray<number>): number => values.reduce((total, value) => total + value, 0)

/**
 * The reduction used when no checkpoint can be written (DESIGN.md: "keep the
 * previous checkpoint and fall back to deterministic reduction"): the whole
 * deterministic ladder, `Tiers.withWindow` — the lossless stages with the
 * prompt-cache guard off and only the last tool result and assistant message
 * protected, then the sliding window, which drops the oldest whole turns
 * after the previous checkpoint (never a system message or the turn in
 * progress; the transcript keeps everything it drops).
 *
 * @category constructors
 */
export const reductionStrategies = (
  policy: ModelPolicy.ModelPolicy,
  budget: Budget.Budget
): ReadonlyArray<Strategy.Strategy> =>
  Tiers.withWindow(policy, budget, {
    toolTrim: { minReclaimTokens: 0, keepRecentToolResults: 1, keepLastAssistants: 1 },
    slidingWindow: { minReclaimTokens: 0 }
  }).map(keepingCheckpoint)

/**
 * A strategy that never drops or rewrites the previous checkpoint: it sees
 * the checkpoint item as a system message, which the sliding window keeps in
 * place (and does not count as freed).
 */
const keepingCheckpoint = (strategy: Strategy.Strategy): Strategy.Strategy => ({
  ...strategy,
  apply: (input) => {
    const result = strategy.apply({
      ...input,
      view: {
        ...input.view,
        items: input.view.items.map((item) =>
          item.source === "checkpoint"
            ? { ...item, message: { ...item.message, role: "system" } as Message.Message }
            : item
        )
      }
    })
    const checkpointIds = new Set(
      input.view.items.flatMap((item) => (item.source === "checkpoint" ? [item.entryId] : []))
    )
    return { ...result, edits: result.edits.filter((edit) => !("entryId" in edit && checkpointIds.has(edit.entryId))) }
  }
})

/**
 * Creates the engine. One instance per session: `recordOutcome` state
 * (usage anchor, a pending overflow) lives in it.
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
/**
 * Id of the last of `items` that is a transcript entry. View items can be
 * synthesized (an "interrupted" result for a call without one, id
 * `ToolPairing.interruptedResultId`); a checkpoint that referenced one would
 * point at nothing the store or a rebuilt view knows.
 */
const lastRealEntryId = (
  entries: ReadonlyArray<{ readonly id: string }>,
  items: ReadonlyArray<{ readonly entryId: string }>
): string => {
  const ids = new Set<string>()
  for (const entry of entries) ids.add(entry.id)
  for (let index = items.length - 1; index >= 0; index--)
    if (ids.has(items[index]!.entryId)) return items[index]!.entryId
  return items[items.length - 1]!.entryId
}

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
  const measurerFor = core.measurerFor
  const extractor =
    options.memory?.extractor === null ? undefined : (options.memory?.extractor ?? MemoryExtractor.make())
  const viewOf = (entries: ReadonlyArray<Entry.Entry>, input: ContextEngine.EngineInput) =>
    ActiveView.reconstruct(entries, { tools: input.tools ?? [], memory: memoryOptions(measurerFor(input.policy)) })

  const context = (input: ContextEngine.EngineInput) => {
    const prepared = core.prepare(input)
    return { ...prepared, checkpointView: prepared.active }
  }

  const reasonsOf = (input: ContextEngine.EngineInput, ctx: ReturnType<typeof context>) => core.reasons(input, ctx)

  const conversationOf = (view: ContextView.ContextView, ctx: ReturnType<typeof context>) => {
    const skip = new Set(ctx.checkpointView.prefix.map((item) => item.entryId))
    return view.items.filter((item) => !skip.has(item.entryId) && item.source !== "checkpoint")
  }

  const cutFor = (
    conversation: ReadonlyArray<ContextView.ViewItem>,
    ctx: ReturnType<typeof context>,
    policy: ModelPolicy.ModelPolicy,
    landAtTokens?: number
  ) => {
    const tokens = conversation.map((item) => ctx.measurer.messageTokens(item.message, item.source))
    // A threshold compaction lands at the low-water mark: the kept tail fills the room the mark leaves beside
    // the summary (more than keepRecentTokens when there is room), so it neither stops short nor overshoots.
    const keepRecentTokens = Math.max(
      1,
      Math.min(
        landAtTokens ?? policy.keepRecentTokens,
        Math.floor(ctx.budget.availableTokens * MAX_SHARE_OF_AVAILABLE.keepRecent)
      )
    )
    const cut = CutPoint.find({
      items: conversation,
      tokens,
      keepRecentTokens,
      ...(options.minRecentTurns !== undefined ? { minRecentTurns: options.minRecentTurns } : {})
    })
    return { cut, tokens }
  }

  const planOf = (input: ContextEngine.EngineInput, ctx: ReturnType<typeof context>): ContextEngine.CompactionPlan => {
    const conversation = conversationOf(ctx.checkpointView.view, ctx)
    const { cut } = cutFor(conversation, ctx, input.policy)
    const covered = conversation.slice(0, cut.firstKeptIndex)
    return {
      reasons: reasonsOf(input, ctx),
      targetTokens: ctx.budget.inputBudgetTokens,
      stages: [Pipeline.NORMALIZE_STAGE, ...core.ladder(input, ctx).map((s) => s.name), "checkpoint"],
      ...(covered.length > 0
        ? {
            cutPoint: {
              firstKeptEntryId: conversation[cut.firstKeptIndex]?.entryId ?? null,
              coveredFromEntryId: covered[0]?.entryId ?? null,
              coveredToEntryId: lastRealEntryId(input.entries, covered),
              splitTurn: cut.splitTurn
            }
          }
        : {})
    }
  }

  const editEntries = core.editEntries

  const compact = (
    input: ContextEngine.EngineInput,
    plan?: ContextEngine.CompactionPlan
  ): Effect.Effect<ContextEngine.CompactionResult, ContextEngine.CompactionError> =>
    Effect.gen(function* () {
      const ctx = context(input)
      yield* Budget.checkFixedOverhead(ctx.budget, ctx.overhead)
      const { measurer, budget, measurement: before, checkpointView } = ctx
      const policy = input.policy
      // A caller's plan may lower the target (overflow recovery) and add reasons; the cut point is
      // recomputed after the cheap stages, on the view they produced.
      // Hysteresis: an automatic (threshold) compaction aims at the low-water mark, not just under the threshold.
      // A caller's plan target, a manual compaction and overflow recovery keep their own targets.
      const { targetTokens, lowWaterTokens, force } = core.targets(input, ctx, plan)
      const timestamp = core.timestamp(input)
      const cheap = core.run(input, ctx, core.ladder(input, ctx), lowWaterTokens)
      const stages: Array<ContextEngine.StageReport> = [...cheap.stages]
      const failures: Array<Errors.SummarizerFailed | Errors.ValidationFailed | PluginGuard.PluginFailed> = []
      const checkpointStage = (status: ContextEngine.StageReport["status"], note: string, after = cheap.after) => ({
        stage: "checkpoint",
        tokensBefore: cheap.after.inputTokens,
        tokensAfter: after.inputTokens,
        edits: status === "applied" ? 1 : 0,
        durationMs: 0,
        status,
        note
      })

      const reduce = (note: string) =>
        Effect.gen(function* () {
          const reduced = Pipeline.run({
            view: cheap.view,
            strategies: reductionStrategies(policy, budget),
            targetTokens,
            budget,
            measurer,
            policy,
            measurement: cheap.after
          })
          const edits = [...cheap.edits, ...reduced.edits.filter((edit) => edit.strategy !== Pipeline.NORMALIZE_STAGE)]
          const allStages = [
            ...stages,
            checkpointStage("skipped", note),
            ...reduced.stages
              .filter((stage) => stage.status === "applied" && stage.stage !== Pipeline.NORMALIZE_STAGE)
              .map((stage) => ({ ...stage, stage: `reduce:${stage.stage}` }))
          ]
          // A budget problem is reported as one, with the numbers (never as a failed summary check).
          if (!reduced.fits)
            return yield* Effect.fail(
              new Errors.BudgetExceeded({
                requestTokens: reduced.after.inputTokens,
                budgetTokens: targetTokens,
                reason: `${note}; after every deterministic stage and the sliding window, the system prompt, tool schemas${checkpointView.checkpoint ? ", the previous checkpoint" : ""} and the turn in progress (kept verbatim) still need ${reduced.after.inputTokens} tokens`
              })
            )
          core.compacted()
          return {
            view: reduced.view,
            edits,
            entriesToAppend: editEntries(input, edits, timestamp),
            stages: allStages,
            before,
            after: reduced.after,
            fits: true,
            ...(failures.length > 0 ? { failures } : {})
          } satisfies ContextEngine.CompactionResult
        })

      // The cheap stages alone only when they reach the low-water mark: short of it a checkpoint is needed
      // anyway, and a cache rewrite that frees a few hundred tokens would buy a single step.
      if (cheap.after.inputTokens <= lowWaterTokens && !force) {
        core.compacted()
        stages.push(
          checkpointStage(
            "not-needed",
            lowWaterTokens < targetTokens
              ? `the deterministic stages reach the low-water mark (${lowWaterTokens} tokens)`
              : "fits after the deterministic stages"
          )
        )
        return {
          view: cheap.view,
          edits: cheap.edits,
          entriesToAppend: editEntries(input, cheap.edits, timestamp),
          stages,
          before,
          after: cheap.after,
          fits: true
        }
      }

      // Cut point on the view after the cheap stages. Aiming at the low-water mark, the kept tail leaves room
      // for the summary below it.
      const summaryCapTokens = Math.max(
        64,
        Math.min(
          Math.floor(policy.reserveTokens * SUMMARY_SHARE_OF_RESERVE),
          Math.floor(budget.availableTokens * MAX_SHARE_OF_AVAILABLE.summary),
          options.maxCheckpointTokens ?? ExtractiveSummarizer.DEFAULT_CHECKPOINT_TOKENS
        )
      )
      const conversation = conversationOf(cheap.view, ctx)
      // The low-water mark is on the measurement's scale (anchored on the provider's usage after a reply); the cut
      // walks per-message estimates, so the room for the tail is converted to their scale (one scale, C13).
      const estimateShare = Math.min(1, measurer.measure(cheap.view, { budget }).inputTokens / cheap.after.inputTokens)
      const { cut, tokens } = cutFor(
        conversation,
        ctx,
        policy,
        lowWaterTokens < targetTokens
          ? Math.max(1, Math.floor((lowWaterTokens - budget.fixedOverheadTokens - summaryCapTokens) * estimateShare))
          : undefined
      )
      if (cut.firstKeptIndex === 0) return yield* reduce("nothing older than the kept recent window to summarize")
      const historyEnd = cut.splitTurn ? cut.turnStartIndex : cut.firstKeptIndex
      const originals = ActiveView.originalMessages(checkpointView.branch)
      const original = (item: ContextView.ViewItem): CoveredItem => ({
        entryId: item.entryId,
        message: originals.get(item.entryId) ?? item.message
      })
      const covered = conversation.slice(0, historyEnd).map(original)
      const turnPrefix = cut.splitTurn ? conversation.slice(cut.turnStartIndex, cut.firstKeptIndex).map(original) : []
      const coveredItems = conversation.slice(0, cut.firstKeptIndex)
      // The covered range ends on a transcript entry, never on a synthesized "interrupted" result.
      const lastCoveredEntryId = lastRealEntryId(input.entries, coveredItems)
      const previousEntry = checkpointView.checkpoint
      const previous = previousEntry?.checkpoint
      const previousItem = cheap.view.items.find((item) => item.source === "checkpoint")
      const replacedTokens =
        sum(tokens.slice(0, cut.firstKeptIndex)) -
        (cut.pinnedUserIndex >= 0 ? (tokens[cut.pinnedUserIndex] ?? 0) : 0) +
        (previousItem ? measurer.messageTokens(previousItem.message, "checkpoint") : 0)
      const hookPlan = plan ?? planOf(input, ctx)

      if (input.deterministicOnly === true) return yield* reduce("deterministic tiers only (advisory mode)")
      // beforeCompact hooks (chained).
      let hookSummary: Checkpoint.CheckpointContent | undefined
      for (const [index, hook] of (options.hooks?.beforeCompact ?? []).entries()) {
        const guarded = yield* Effect.result(
          PluginGuard.guardPromise({
            plugin: `beforeCompact[${index}]`,
            kind: "hook",
            timeoutMs: options.pluginTimeoutMs,
            signal: input.signal,
            validate: malformedBeforeCompactResult,
            run: () =>
              hook({
                input,
                plan: hookPlan,
                previous,
                coveredEntryIds: coveredItems.map((item) => item.entryId),
                summary: hookSummary
              })
          })
        )
        if (guarded._tag === "Failure") {
          failures.push(guarded.failure)
          return yield* reduce(`${guarded.failure.message}; kept the previous checkpoint`)
        }
        const outcome = guarded.success
        if (outcome && "cancel" in outcome)
          return yield* reduce(`cancelled by a beforeCompact hook${outcome.reason ? `: ${outcome.reason}` : ""}`)
        if (outcome && "summary" in outcome) hookSummary = outcome.summary
      }

      const generation = (previous?.generation ?? 0) + 1
      // The memory flush of this cycle runs before the checkpoint is built, on the covered originals; its
      // records join the prefix the summary is sized against, and are committed with the checkpoint or not at all.
      const flush = extractor
        ? yield* MemoryFlush.run({
            entries: input.entries,
            cycle: generation,
            covered: [...covered, ...turnPrefix],
            extractor,
            timestamp,
            parentId: input.entries.at(-1)?.id ?? null,
            signal: input.signal,
            timeoutMs: options.pluginTimeoutMs
          })
        : ({ entries: [] } satisfies MemoryFlush.FlushResult)
      const prefix =
        flush.entries.length > 0 ? viewOf([...input.entries, ...flush.entries], input).prefix : checkpointView.prefix
      const firstKept = conversation[cut.firstKeptIndex]
      const pinned = cut.pinnedUserIndex >= 0 ? conversation[cut.pinnedUserIndex] : undefined
      const tail = conversation.slice(cut.firstKeptIndex)
      // The summary cap, lowered to the room the request has left (so a summary that can shrink does not
      // fail `next-request-fits`); the checkpoint's header and framing are counted apart from its content.
      const withoutCheckpoint = measurer.measure(
        { items: [...prefix, ...(pinned ? [pinned] : []), ...tail], tools: cheap.view.tools },
        { budget }
      ).inputTokens
      const framingTokens = measurer.messageTokens(
        CheckpointRenderer.toMessage({
          id: `checkpoint:${generation}:${lastCoveredEntryId}`,
          generation,
          coveredRange: { fromEntryId: coveredItems[0]?.entryId ?? null, toEntryId: coveredItems[0]!.entryId },
          firstKeptEntryId: firstKept?.entryId ?? null,
          tokensBefore: 0,
          tokensAfter: 0,
          summarizer: { kind: "extractive", promptVersion: "" },
          text: "",
          createdAt: timestamp
        }),
        "checkpoint"
      )
      const maxTokens = Math.max(64, Math.min(summaryCapTokens, targetTokens - withoutCheckpoint - framingTokens))
      const coveredMessages = [...covered, ...turnPrefix].map((item) => item.message)

      const build = (
        result: SummarizeResult
      ): SummaryLadder.Built<{ view: ContextView.ContextView; after: Measurement.Measurement }> => {
        const checkpoint: Checkpoint.Checkpoint = {
          id: `checkpoint:${generation}:${lastCoveredEntryId}`,
          generation,
          coveredRange: {
            fromEntryId: previous ? (coveredItems[0]?.entryId ?? null) : null,
            toEntryId: lastCoveredEntryId
          },
          firstKeptEntryId: firstKept?.entryId ?? null,
          tokensBefore: before.inputTokens,
          tokensAfter: 0,
          summarizer: result.summarizer,
          content: result.content,
          ...(result.usage ? { usage: result.usage } : {}),
          createdAt: timestamp
        }
        const item = ActiveView.checkpointItem(checkpoint.id, checkpoint)
        const view: ContextView.ContextView = {
          items: [...prefix, item, ...(pinned ? [pinned] : []), ...tail],
          tools: cheap.view.tools
        }
        const after = measurer.measure(view, { budget })
        const report = CheckpointValidation.validate({
          checkpoint,
          covered: coveredMessages,
          previous,
          checkpointTokens: measurer.messageTokens(item.message, "checkpoint"),
          replacedTokens,
          requestTokens: after.inputTokens,
          budgetTokens: targetTokens,
          minIdentifierRetention: options.minIdentifierRetention
        })
        return {
          checkpoint: { ...checkpoint, tokensAfter: after.inputTokens, validation: report },
          report,
          extra: { view, after }
        }
      }

      const ladder = yield* SummaryLadder.run({
        summarizer,
        fallback,
        hookSummary,
        request: {
          previous,
          covered,
          turnPrefix,
          maxTokens,
          countTokens: measurer.tokenizer.count,
          instructions: input.compactInstructions,
          signal: input.signal
        },
        build,
        timeoutMs: options.pluginTimeoutMs
      })
      failures.push(...ladder.failures)
      if (ladder._tag === "Failed") return yield* reduce(ladder.reason)
      const built = ladder.built
      core.compacted()
      stages.push(
        checkpointStage(
          "applied",
          `${ladder.tried.join(" → ")}; covered ${coveredItems.length} messages${cut.splitTurn ? " (split turn)" : ""}; identifier retention ${(built.report.identifierRetention * 100).toFixed(1)}%${memoryNote(flush)}`,
          built.extra.after
        )
      )
      // Overlays on entries the new checkpoint covers would never show again:
      // keep only those on the tail, so the transcript records what matters.
      const hidden = new Set([...covered, ...turnPrefix].map((item) => item.entryId))
      const tailEdits = cheap.edits.filter(
        (edit) => !hidden.has(edit.op === "insert" ? edit.afterEntryId : edit.entryId)
      )
      const edits = editEntries(input, tailEdits, timestamp, flush.entries)
      const checkpointEntry: Entry.CheckpointEntry = {
        id: built.checkpoint.id,
        parentId: [...flush.entries, ...edits].at(-1)?.id ?? input.entries[input.entries.length - 1]?.id ?? null,
        timestamp,
        schemaVersion: 1,
        kind: "checkpoint",
        checkpoint: built.checkpoint
      }
      const result: ContextEngine.CompactionResult = {
        view: built.extra.view,
        edits: tailEdits,
        checkpoint: built.checkpoint,
        entriesToAppend: [...flush.entries, ...edits, checkpointEntry],
        stages,
        before,
        after: built.extra.after,
        fits: built.extra.after.inputTokens <= targetTokens,
        ...(failures.length > 0 ? { failures } : {})
      }
      // afterCompact observers cannot undo an atomic commit: their failures are ignored.
      for (const [index, hook] of (options.hooks?.afterCompact ?? []).entries())
        yield* Effect.ignore(
          PluginGuard.guardPromise({
            plugin: `afterCompact[${index}]`,
            kind: "hook",
            timeoutMs: options.pluginTimeoutMs,
            signal: input.signal,
            run: () => hook({ input, result })
          })
        )
      return result
    })

  const validate = (input: ContextEngine.EngineInput, result: ContextEngine.CompactionResult) =>
    Effect.sync((): Checkpoint.ValidationReport => {
      const fitsCheck = {
        name: "next-request-fits",
        ok: result.fits,
        detail: `next request ${result.after.inputTokens} of ${result.after.budgetTokens} tokens`
      }
      const checkpoint = result.checkpoint
      if (!checkpoint) return { ok: result.fits, checks: [fitsCheck], identifierRetention: 1, missing: [] }
      const ids = input.entries.map((entry) => entry.id)
      const from = checkpoint.coveredRange.fromEntryId === null ? 0 : ids.indexOf(checkpoint.coveredRange.fromEntryId)
      const to = ids.indexOf(checkpoint.coveredRange.toEntryId)
      const covered = input.entries
        .slice(Math.max(0, from), to + 1)
        .flatMap((entry) => (entry.kind === "message" && entry.message.role !== "system" ? [entry.message] : []))
      const measurer = measurerFor(input.policy)
      const item = ActiveView.checkpointItem(checkpoint.id, checkpoint)
      return CheckpointValidation.validate({
        checkpoint,
        covered,
        checkpointTokens: measurer.messageTokens(item.message, "checkpoint"),
        replacedTokens:
          result.before.inputTokens - result.after.inputTokens + measurer.messageTokens(item.message, "checkpoint"),
        requestTokens: result.after.inputTokens,
        budgetTokens: result.after.budgetTokens,
        minIdentifierRetention: options.minIdentifierRetention
      })
    })

  return Engine.make(core, {
    name: NAME,
    plan: (input) => Effect.sync(() => planOf(input, context(input))),
    compact,
    validate
  })
}

/**
 * The engine's Promise face (`ContextEngine.toAsync`): same methods, plain
 * async; failures reject with the typed error.
 *
 * @category constructors
 */
export const makeAsync = (options: Options = {}): ContextEngine.AsyncContextEngine =>
  ContextEngine.toAsync(make(options))
