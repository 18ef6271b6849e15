/**
 * The other way out of the checkpoint tier, "reduce": when no checkpoint can
 * be written (nothing to summarize, advisory mode, a hook cancelled or
 * failed, the summarizer threw, every attempt failed validation), keep the
 * previous checkpoint and reduce deterministically (DESIGN.md "Summarize,
 * validate, commit"). Pure: a result, or `BudgetExceeded` with the numbers
 * when even the whole deterministic ladder cannot fit.
 *
 * @since 0.2.0
 */
import {
  type Budget,
  type ContextEngine,
  type ContextView,
  Errors,
  Measurement,
  type Measurer,
  type Message,
  type ModelPolicy,
  type Strategy,
  Turns,
  UserSpeech
} from "@context-engine/core"
import { Clamp, Pipeline, SlidingWindow, Tiers } from "@context-engine/strategies"
import { checkpointStage, type EditEntries } from "./Commit.ts"

/**
 * The reduction used when no checkpoint can be written: the whole
 * deterministic ladder, `Tiers.withWindow` — the lossless stages with the
 * prompt-cache guard off and only the last tool result and assistant message
 * protected, then the sliding window, which drops the oldest whole turns
 * after the previous checkpoint (never a system message or the turn in
 * progress; the transcript keeps everything it drops), the oldest steps of
 * the turn in progress when it alone is over (`SlidingWindow.turnSteps`: its
 * ask and latest step stay), and last `Clamp.fit`:
 * the editable messages, largest first (often the newest tool output,
 * protected until then), clamped to head + tail by what is still over —
 * below the per-part floor when nothing else is left.
 *
 * The stages before `Clamp.fit` aim at the run's target — in {@link reduce}
 * the low-water mark, where a checkpoint lands, so the next compaction is as
 * far off (with a failing summarizer, reduction is every compaction: aimed at
 * the budget, each step would compact and rewrite the prompt cache);
 * `Clamp.fit` only at `fitTokens` (the request's own target, e.g. the input
 * budget), so the newest output the agent acts on is cut only as far as the
 * request needs.
 *
 * @category constructors
 */
export const reductionStrategies = (
  policy: ModelPolicy.ModelPolicy,
  budget: Budget.Budget,
  fitTokens?: number,
  keepEntryIds: ReadonlyArray<string> = []
): ReadonlyArray<Strategy.Strategy> =>
  [
    ...Tiers.withWindow(policy, budget, {
      toolTrim: Tiers.lastResortToolTrim,
      slidingWindow: { minReclaimTokens: 0, keepEntryIds }
    }),
    fitTokens === undefined
      ? SlidingWindow.turnSteps({ keepEntryIds })
      : Tiers.whenOver(SlidingWindow.turnSteps({ keepEntryIds }), fitTokens),
    fitTokens === undefined ? Clamp.fit() : Tiers.aimingAt(Clamp.fit(), fitTokens)
  ].map(keepingCheckpoint)

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

/** Inputs of {@link reduce}. Token counts in input tokens of the policy's tokenizer. @category models */
export interface ReduceInput {
  /** Why no checkpoint is written (the checkpoint stage's note). */
  readonly note: string
  /** The result of the deterministic stages. */
  readonly cheap: Pipeline.Result
  readonly policy: ModelPolicy.ModelPolicy
  readonly budget: Budget.Budget
  readonly measurer: Measurer.Measurer
  /** The request must fit this (the input budget, or a caller's / overflow's lower target). */
  readonly targetTokens: number
  /**
   * Where the reduction aims (`Kernel.Targets.lowWaterTokens`, `Engine.DEFAULT_LOW_WATER_SHARE`): where a
   * checkpoint compaction lands, so the next compaction is as far off as after a checkpoint. Equal to
   * `targetTokens` for a manual or overflow compaction.
   */
  readonly lowWaterTokens: number
  readonly before: ContextEngine.CompactionResult["before"]
  /** The view has a previous checkpoint (named in the error). */
  readonly hasCheckpoint: boolean
  readonly failures: ReadonlyArray<NonNullable<ContextEngine.CompactionResult["failures"]>[number]>
  readonly editEntries: EditEntries
}

/**
 * Entry id of the latest user message that sets a task (`UserSpeech.isTaskSetting` on the user's words), when it
 * is not the latest user message (which the window keeps anyway).
 */
const latestTaskAsk = (items: ReadonlyArray<ContextView.ViewItem>): string | undefined => {
  const latest = Turns.latestUserIndex(items)
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!
    if (item.message.role !== "user" || item.source === "checkpoint") continue
    if (UserSpeech.isTaskSetting(UserSpeech.spokenText(item.message)))
      return index === latest ? undefined : item.entryId
  }
  return undefined
}

/**
 * The "reduce" phase. Its stage reports follow the skipped checkpoint stage,
 * named `reduce:<stage>`, applied ones only.
 *
 * @category constructors
 */
export const reduce = (input: ReduceInput): ContextEngine.CompactionResult | Errors.BudgetExceeded => {
  const { cheap } = input
  // Aimed at the low-water mark, as a checkpoint is: cut to just under the budget, the request is over it again
  // after the next turn, so every step would compact and rewrite the provider's prompt cache (peers compact well
  // below the threshold: pi keeps keepRecentTokens, Codex its summary plus recent user messages). Only the
  // budget must be met (`fits`).
  const run = (keepEntryIds: ReadonlyArray<string>) =>
    Pipeline.run({
      view: cheap.view,
      strategies: reductionStrategies(input.policy, input.budget, input.targetTokens, keepEntryIds),
      targetTokens: Math.min(input.lowWaterTokens, input.targetTokens),
      budget: input.budget,
      measurer: input.measurer,
      policy: input.policy,
      measurement: cheap.after
    })
  // The user's latest task-setting ask stays when the request fits with it: no summary stands in for what the
  // window drops, and a long pasted task behind a short "go on" was dropped to reach the low-water mark while
  // the request already fit its budget. Else the window may drop it (only the budget must be met).
  const ask = latestTaskAsk(cheap.view.items)
  const keeping = ask === undefined ? undefined : run([ask])
  const reduced = keeping !== undefined && keeping.after.inputTokens <= input.targetTokens ? keeping : run([])
  const edits = [...cheap.edits, ...reduced.edits.filter((edit) => edit.strategy !== Pipeline.NORMALIZE_STAGE)]
  const fits = reduced.after.inputTokens <= input.targetTokens
  const result: ContextEngine.CompactionResult = {
    view: reduced.view,
    edits,
    entriesToAppend: input.editEntries(edits),
    stages: [
      ...cheap.stages,
      checkpointStage(cheap, "skipped", input.note),
      ...reduced.stages
        .filter((stage) => stage.status === "applied" && stage.stage !== Pipeline.NORMALIZE_STAGE)
        .map((stage) => ({ ...stage, stage: `reduce:${stage.stage}` }))
    ],
    before: input.before,
    after: reduced.after,
    fits,
    ...(input.failures.length > 0 ? { failures: [...input.failures] } : {})
  }
  if (fits) return result
  // A budget problem is reported as one, with the numbers (never as a failed summary check), and with the
  // reduction when it made the request smaller: the request path sends it rather than the unreduced request.
  return new Errors.BudgetExceeded({
    requestTokens: reduced.after.inputTokens,
    budgetTokens: input.targetTokens,
    reason: `${input.note}; after every deterministic stage and the sliding window, the system prompt, tool schemas${input.hasCheckpoint ? ", the previous checkpoint" : ""} and the turn in progress (kept verbatim) still need ${reduced.after.inputTokens} tokens (${Measurement.breakdown(reduced.after)})`,
    ...(reduced.after.inputTokens < input.before.inputTokens ? { bestEffort: result } : {})
  })
}
