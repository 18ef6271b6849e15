/**
 * Phase 2 of the checkpoint tier, "summarize": the beforeCompact hooks
 * (chained: each sees the summary the previous one supplied; one may cancel)
 * and then the summary ladder ({@link SummaryLadder.run}: summarizer, one
 * repair retry, the fallback), each attempt built and validated by
 * {@link Build.build}. Its only effects are the plug-in calls, each behind
 * `PluginGuard` (deadline, abort signal, malformed results).
 *
 * @since 0.2.0
 */
import { type Checkpoint, type ContextEngine, PluginGuard } from "@context-engine/core"
import { Effect } from "effect"
import { type Hooks, malformedBeforeCompactResult } from "../CompactionHooks.ts"
import type { SummarizeResult, Summarizer } from "../Summarizer.ts"
import * as SummaryLadder from "../SummaryLadder.ts"
import type { Built, Outcome } from "./Build.ts"
import type { Preparation } from "./Prepare.ts"

/** Inputs of {@link beforeCompact}. @category models */
export interface HooksInput {
  readonly hooks: NonNullable<Hooks["beforeCompact"]>
  readonly input: ContextEngine.EngineInput
  readonly plan: ContextEngine.CompactionPlan
  readonly preparation: Preparation
  readonly timeoutMs?: number | undefined
}

/** What the hooks decided: go on (with the summary a hook supplied, if any), or stop and reduce. @category models */
export type HooksOutcome =
  | { readonly _tag: "Continue"; readonly summary: Checkpoint.CheckpointContent | undefined }
  | { readonly _tag: "Stop"; readonly note: string; readonly failure?: PluginGuard.PluginFailed }

/**
 * Runs the beforeCompact hooks in order. A hook that throws, times out or
 * returns a malformed result stops the chain (`failure` set); a cancel stops
 * it with the hook's reason.
 *
 * @category constructors
 */
export const beforeCompact = (input: HooksInput): Effect.Effect<HooksOutcome> =>
  Effect.gen(function* () {
    let summary: Checkpoint.CheckpointContent | undefined
    for (const [index, hook] of input.hooks.entries()) {
      const guarded = yield* Effect.result(
        PluginGuard.guardPromise({
          plugin: `beforeCompact[${index}]`,
          kind: "hook",
          timeoutMs: input.timeoutMs,
          signal: input.input.signal,
          validate: malformedBeforeCompactResult,
          run: () =>
            hook({
              input: input.input,
              plan: input.plan,
              previous: input.preparation.previous,
              coveredEntryIds: input.preparation.coveredEntryIds,
              summary
            })
        })
      )
      if (guarded._tag === "Failure")
        return {
          _tag: "Stop",
          note: `${guarded.failure.message}; kept the previous checkpoint`,
          failure: guarded.failure
        } as const
      const outcome = guarded.success
      if (outcome && "cancel" in outcome)
        return {
          _tag: "Stop",
          note: `cancelled by a beforeCompact hook${outcome.reason ? `: ${outcome.reason}` : ""}`
        } as const
      if (outcome && "summary" in outcome) summary = outcome.summary
    }
    return { _tag: "Continue", summary } as const
  })

/** Inputs of {@link summarize}. @category models */
export interface SummarizeInput {
  readonly summarizer: Summarizer
  readonly fallback: Summarizer | null
  /** A beforeCompact hook's summary: tried first, in place of the summarizer. */
  readonly hookSummary: Checkpoint.CheckpointContent | undefined
  readonly preparation: Preparation
  /** The summary's cap in tokens ({@link Prepare.summaryMaxTokens}). */
  readonly maxTokens: number
  readonly countTokens: (text: string) => number
  /** The caller's instructions for the summary (`/compact <instructions>`). */
  readonly instructions?: string | undefined
  readonly signal?: AbortSignal | undefined
  readonly timeoutMs?: number | undefined
  /** Builds and validates one attempt ({@link Build.build} with the compaction's fixed inputs). */
  readonly build: (result: SummarizeResult) => Built
}

/**
 * Runs the summary ladder on the prepared range: a valid checkpoint, or the
 * reason none was and the failures on the way.
 *
 * @category constructors
 */
export const summarize = (input: SummarizeInput): Effect.Effect<SummaryLadder.Outcome<Outcome>> =>
  SummaryLadder.run({
    summarizer: input.summarizer,
    fallback: input.fallback,
    hookSummary: input.hookSummary,
    request: {
      previous: input.preparation.previous,
      covered: input.preparation.covered,
      turnPrefix: input.preparation.turnPrefix,
      maxTokens: input.maxTokens,
      countTokens: input.countTokens,
      instructions: input.instructions,
      signal: input.signal
    },
    build: input.build,
    timeoutMs: input.timeoutMs
  })
