/**
 * Phase 3 of the checkpoint tier, "build + validate": a summary becomes a
 * checkpoint, the view it leaves (prefix → checkpoint → pinned ask → tail)
 * and that view's measurement, checked by `CheckpointValidation`. Pure: the
 * summary ladder ({@link SummaryLadder.run}) calls it once per attempt. The
 * summary's room in that view is {@link summaryMaxTokens}.
 *
 * @since 0.2.0
 */
import {
  ActiveView,
  type Budget,
  type Checkpoint,
  CheckpointRenderer,
  CheckpointValidation,
  type ContextEngine,
  type ContextView,
  type Entry,
  type Measurement,
  type Measurer,
  SubAgentWork
} from "@context-engine/core"
import type { SummarizeResult } from "../Summarizer.ts"
import { MIN_SUMMARY_TOKENS, type Preparation } from "./Prepare.ts"
import type * as SummaryLadder from "./Summarize.ts"

/** Inputs of {@link build}, fixed for every attempt of one compaction: those of {@link summaryMaxTokens} and more. @category models */
export interface BuildInput extends RoomInput {
  /** The request's input tokens before the compaction (`tokensBefore`). */
  readonly tokensBefore: number
  readonly minIdentifierRetention?: number | undefined
}

/** The view a checkpoint leaves and its measurement. @category models */
export interface Outcome {
  readonly view: ContextView.ContextView
  readonly after: Measurement.Measurement
}

/** A built checkpoint with its validation report and the view it leaves. @category models */
export type Built = SummaryLadder.Built<Outcome>

/**
 * Builds and validates the checkpoint of one summary. The covered range
 * starts at the first covered entry after the previous checkpoint's range
 * when it continues one (`KeptUsers.continuation`), at the transcript's start
 * (`null`) otherwise.
 *
 * @category constructors
 */
export const build = (input: BuildInput, result: SummarizeResult): Built => {
  const { preparation, measurer } = input
  const checkpoint: Checkpoint.Checkpoint = {
    id: preparation.checkpointId,
    generation: preparation.generation,
    coveredRange: {
      fromEntryId: preparation.coveredFromEntryId,
      toEntryId: preparation.lastCoveredEntryId
    },
    firstKeptEntryId: preparation.firstKept?.entryId ?? null,
    ...(preparation.keptUserEntryIds.length > 0 ? { keptUserEntryIds: preparation.keptUserEntryIds } : {}),
    tokensBefore: input.tokensBefore,
    tokensAfter: 0,
    summarizer: result.summarizer,
    content: result.content,
    ...(result.usage ? { usage: result.usage } : {}),
    createdAt: input.timestamp
  }
  const item = ActiveView.checkpointItem(checkpoint.id, checkpoint)
  const view: ContextView.ContextView = {
    items: [...input.prefix, item, ...preparation.keptUsers, ...preparation.tail],
    tools: input.tools
  }
  const after = measurer.measure(view, { budget: input.budget })
  const coveredItems = [...preparation.covered, ...preparation.turnPrefix]
  const report = CheckpointValidation.validate({
    checkpoint,
    covered: coveredItems.map((covered) => covered.message),
    subAgentMessages: coveredItems.flatMap((covered) => covered.subAgentMessages ?? []),
    previous: preparation.previous,
    kept: [...preparation.keptUsers, ...preparation.tail].map((kept) => kept.message),
    checkpointTokens: measurer.messageTokens(item.message, "checkpoint"),
    replacedTokens: preparation.replacedTokens,
    requestTokens: after.inputTokens,
    budgetTokens: input.targetTokens,
    minIdentifierRetention: input.minIdentifierRetention
  })
  return {
    checkpoint: { ...checkpoint, tokensAfter: after.inputTokens, validation: report },
    report,
    extra: { view, after }
  }
}

/**
 * Validates a compaction result against its input again (the engine's
 * `validate`): `next-request-fits` alone without a checkpoint; with one, the
 * checkpoint's checks over the non-system messages of its covered range
 * (with the calls of the sub-agents they started: `SubAgentWork`).
 *
 * @category constructors
 */
export const revalidate = (
  input: ContextEngine.EngineInput,
  result: ContextEngine.CompactionResult,
  measurer: Measurer.Measurer,
  minIdentifierRetention?: number
): Checkpoint.ValidationReport => {
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
  const coveredEntries = input.entries
    .slice(Math.max(0, from), to + 1)
    .filter((entry): entry is Entry.MessageEntry => entry.kind === "message" && entry.message.role !== "system")
  const covered = coveredEntries.map((entry) => entry.message)
  const subAgents = SubAgentWork.byMessage(input.entries)
  const item = ActiveView.checkpointItem(checkpoint.id, checkpoint)
  const checkpointTokens = measurer.messageTokens(item.message, "checkpoint")
  const at = result.view.items.findIndex((viewItem) => viewItem.source === "checkpoint")
  return CheckpointValidation.validate({
    checkpoint,
    covered,
    subAgentMessages: coveredEntries.flatMap((entry) => subAgents.get(entry.id) ?? []),
    kept: at < 0 ? [] : result.view.items.slice(at + 1).map((viewItem) => viewItem.message),
    checkpointTokens,
    replacedTokens: result.before.inputTokens - result.after.inputTokens + checkpointTokens,
    requestTokens: result.after.inputTokens,
    budgetTokens: result.after.budgetTokens,
    minIdentifierRetention
  })
}

/** Inputs of {@link summaryMaxTokens}. @category models */
export interface RoomInput {
  readonly preparation: Preparation
  /** The stable prefix the checkpoint follows (system, memory — with this cycle's flushed records). */
  readonly prefix: ReadonlyArray<ContextView.ViewItem>
  readonly tools: ContextView.ContextView["tools"]
  readonly measurer: Measurer.Measurer
  readonly budget: Budget.Budget
  /** The request must fit this many input tokens (`next-request-fits`). */
  readonly targetTokens: number
  readonly timestamp: string
}

/**
 * The summary's `maxTokens`: the cap, lowered to the room the request has
 * left beside the prefix, the pinned ask, the tail and the checkpoint's
 * framing (so a summary that can shrink does not fail `next-request-fits`),
 * at least 64.
 *
 * @category constructors
 */
export const summaryMaxTokens = (input: RoomInput): number => {
  const { preparation, measurer } = input
  const withoutCheckpoint = measurer.measure(
    {
      items: [...input.prefix, ...preparation.keptUsers, ...preparation.tail],
      tools: input.tools
    },
    { budget: input.budget }
  ).inputTokens
  const framingTokens = measurer.messageTokens(
    CheckpointRenderer.toMessage({
      id: preparation.checkpointId,
      generation: preparation.generation,
      coveredRange: {
        fromEntryId: preparation.coveredEntryIds[0] ?? null,
        toEntryId: preparation.coveredEntryIds[0]!
      },
      firstKeptEntryId: preparation.firstKept?.entryId ?? null,
      tokensBefore: 0,
      tokensAfter: 0,
      summarizer: { kind: "extractive", promptVersion: "" },
      text: "",
      createdAt: input.timestamp
    }),
    "checkpoint"
  )
  return Math.max(
    MIN_SUMMARY_TOKENS,
    Math.min(preparation.summaryCapTokens, input.targetTokens - withoutCheckpoint - framingTokens)
  )
}
