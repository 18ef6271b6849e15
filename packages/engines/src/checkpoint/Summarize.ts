/**
 * Phase 2 of the checkpoint tier, "summarize" (published as the
 * `SummaryLadder` namespace): the beforeCompact hooks ({@link beforeCompact};
 * chained, each sees the summary the previous one supplied; one may cancel),
 * then the summary ladder ({@link run}, via {@link summarize}) — the attempts
 * a compaction makes before it gives up on a new checkpoint (DESIGN.md
 * "Summarize, validate, commit"), each built and validated by `Build.build`:
 *
 * 1. the summarizer (or the summary a `beforeCompact` hook supplied — then
 *    it is the only attempt);
 * 2. if that summary fails validation: one repair retry of the same
 *    summarizer, told the failed checks and exactly what is missing;
 * 3. if that fails too: the fallback summarizer, when there is one.
 *
 * Every summary, whoever wrote it (model, hook), carries the cumulative
 * artifact ledger: the engine re-attaches the previous checkpoint's ledger
 * and the covered range's (`Ledger.carried`) — computed data, not the
 * model's words. The offline summarizer builds the same ledger itself.
 *
 * A summarizer that *fails* (throws, times out, aborts) ends the ladder at
 * once: the caller keeps the previous checkpoint and reduces
 * deterministically (shared case C05 — nothing is committed, and the next
 * compaction retries). Every failure is returned, typed.
 *
 * Its only effects are the plug-in calls, each behind `PluginGuard`
 * (deadline, abort signal, malformed results).
 *
 * @since 0.1.0
 */
import { type Checkpoint, CheckpointValidation, type ContextEngine, Errors, PluginGuard } from "@context-engine/core"
import { Effect, Result } from "effect"
import { type Hooks, malformedBeforeCompactResult } from "../CompactionHooks.ts"
import type { SummarizeRequest, SummarizeResult, Summarizer } from "../Summarizer.ts"
import type { Outcome as BuildOutcome, Built as BuiltCheckpoint } from "./Build.ts"
import * as Ledger from "./Ledger.ts"
import { previousContent } from "./Markdown.ts"
import type { Preparation } from "./Prepare.ts"

/**
 * A checkpoint built from one summary and its validation report. `A` is
 * whatever else the caller builds with it (the view, its measurement).
 *
 * @category models
 */
export interface Built<A> {
  readonly checkpoint: Checkpoint.Checkpoint
  readonly report: Checkpoint.ValidationReport
  readonly extra: A
}

/**
 * How the ladder ended.
 *
 * @category models
 */
export type Outcome<A> =
  | {
      readonly _tag: "Valid"
      readonly built: Built<A>
      /** Labels of the attempts made, in order (e.g. `["claude", "claude (repair)"]`). */
      readonly tried: ReadonlyArray<string>
      readonly failures: ReadonlyArray<Errors.ValidationFailed>
    }
  | {
      readonly _tag: "Failed"
      /** Why no checkpoint, in words for a stage report. */
      readonly reason: string
      readonly failures: ReadonlyArray<Errors.SummarizerFailed | Errors.ValidationFailed>
    }

/**
 * What the ladder needs. `build` turns a summary into a validated checkpoint
 * (pure; the caller measures and validates there).
 *
 * @category models
 */
export interface Input<A> {
  readonly summarizer: Summarizer
  readonly fallback: Summarizer | null
  /** A summary supplied by a `beforeCompact` hook: the only attempt when present. */
  readonly hookSummary?: Checkpoint.CheckpointContent | undefined
  readonly request: SummarizeRequest
  readonly build: (result: SummarizeResult) => Built<A>
  /** Deadline of one summarizer call in ms (default `PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`). */
  readonly timeoutMs?: number | undefined
}

const isStringArray = (value: unknown): boolean =>
  Array.isArray(value) && value.every((item) => typeof item === "string")

/**
 * Why a summarizer's result is not a usable summary (undefined when it is):
 * the shape the checkpoint builder reads without checking.
 */
export const malformedResult = (result: SummarizeResult): string | undefined => {
  if (typeof result !== "object" || result === null) return `expected an object, got ${String(result)}`
  const content = result.content as unknown as Record<string, unknown> | null | undefined
  if (typeof content !== "object" || content === null) return "content is missing"
  if (typeof content.goal !== "string") return "content.goal is not a string"
  const progress = content.progress as Record<string, unknown> | undefined
  if (typeof progress !== "object" || progress === null) return "content.progress is missing"
  for (const key of ["done", "inProgress", "blocked"])
    if (!isStringArray(progress[key])) return `content.progress.${key} is not a list of strings`
  for (const key of ["constraints", "nextSteps", "criticalContext", "pendingUserAsks", "filesRead", "filesModified"])
    if (!isStringArray(content[key])) return `content.${key} is not a list of strings`
  if (!Array.isArray(content.decisions)) return "content.decisions is not a list"
  if (typeof content.identifiers !== "object" || content.identifiers === null) return "content.identifiers is missing"
  if (typeof result.summarizer !== "object" || result.summarizer === null) return "summarizer info is missing"
  return undefined
}

/**
 * A summarizer call under `PluginGuard`: a defect (raw throw), a hang past the
 * deadline, the caller's abort or a malformed result become
 * `SummarizerFailed`, like the summarizer's own typed failures.
 */
const guarded = (
  summarizer: Summarizer,
  request: SummarizeRequest,
  timeoutMs: number | undefined
): Effect.Effect<SummarizeResult, Errors.SummarizerFailed> =>
  Effect.mapError(
    PluginGuard.guardEffect(
      Effect.suspend(() => summarizer.summarize(request)),
      {
        plugin: summarizer.name,
        kind: "summarizer",
        timeoutMs,
        signal: request.signal,
        validate: malformedResult
      }
    ),
    (error) =>
      error._tag === "PluginFailed"
        ? new Errors.SummarizerFailed({ summarizer: summarizer.name, reason: error.message })
        : error
  )

/**
 * A summary with the cumulative ledger re-attached (the extractive
 * summarizer's content already carries it, built from the same inputs).
 */
const withLedger = (result: SummarizeResult, request: SummarizeRequest): SummarizeResult =>
  result.summarizer.kind === "extractive"
    ? result
    : {
        ...result,
        content: {
          ...result.content,
          artifacts: Ledger.carried(result.content, previousContent(request.previous), [
            ...request.covered,
            ...(request.turnPrefix ?? [])
          ])
        }
      }

/** What a compaction without a new checkpoint keeps: the previous one, or none when there is none yet. */
const keptNote = (previous: Checkpoint.Checkpoint | undefined): string =>
  previous === undefined ? "no checkpoint written (none before it)" : "kept the previous checkpoint"

interface Attempt<A> {
  readonly label: string
  readonly run: (previous: Built<A> | undefined) => Effect.Effect<SummarizeResult, Errors.SummarizerFailed>
}

/**
 * Runs the ladder. Never fails: a summarizer failure is an `Outcome` of tag
 * `Failed` carrying the typed error.
 *
 * @category constructors
 */
export const run = <A>(input: Input<A>): Effect.Effect<Outcome<A>> =>
  Effect.gen(function* () {
    const { summarizer, fallback, request } = input
    const outcomeNote = keptNote(request.previous)
    const attempts: Array<Attempt<A>> =
      input.hookSummary !== undefined
        ? [
            {
              label: "hook",
              run: () => {
                const result = {
                  content: input.hookSummary!,
                  summarizer: { kind: "hook", promptVersion: "hook" }
                } satisfies SummarizeResult
                const problem = malformedResult(result)
                return problem === undefined
                  ? Effect.succeed(result)
                  : Effect.fail(new Errors.SummarizerFailed({ summarizer: "beforeCompact hook", reason: problem }))
              }
            }
          ]
        : [
            { label: summarizer.name, run: () => guarded(summarizer, request, input.timeoutMs) },
            {
              label: `${summarizer.name} (repair)`,
              run: (previous) =>
                guarded(
                  summarizer,
                  {
                    ...request,
                    repair: {
                      attempt: previous!.checkpoint.content!,
                      failedChecks: CheckpointValidation.failedChecks(previous!.report),
                      missing: previous!.report.missing,
                      details: previous!.report.checks
                        .filter((check) => !check.ok)
                        .map((check) => ({ name: check.name, detail: check.detail }))
                    }
                  },
                  input.timeoutMs
                )
            },
            ...(fallback
              ? [{ label: `${fallback.name} (fallback)`, run: () => guarded(fallback, request, input.timeoutMs) }]
              : [])
          ]
    const failures: Array<Errors.SummarizerFailed | Errors.ValidationFailed> = []
    const tried: Array<string> = []
    let last: Built<A> | undefined
    for (const attempt of attempts) {
      const outcome = yield* Effect.result(attempt.run(last))
      if (Result.isFailure(outcome)) {
        failures.push(outcome.failure)
        return {
          _tag: "Failed",
          reason: `${attempt.label} failed: ${outcome.failure.reason}; ${outcomeNote}`,
          failures
        } as const
      }
      const built = input.build(withLedger(outcome.success, request))
      tried.push(attempt.label)
      if (built.report.ok)
        return {
          _tag: "Valid",
          built,
          tried,
          failures: failures.filter(
            (failure): failure is Errors.ValidationFailed => failure._tag === "ValidationFailed"
          )
        } as const
      const failedChecks = CheckpointValidation.failedChecks(built.report)
      failures.push(new Errors.ValidationFailed({ failedChecks, missing: built.report.missing }))
      // A summary that does not shrink what it replaces is not a compaction (shared case C12): the range is not
      // summarized again in this pass; the caller reduces deterministically instead.
      if (failedChecks.includes("smaller-than-replaced"))
        return {
          _tag: "Failed",
          reason: `${attempt.label}: the summary does not shrink what it replaces (${built.report.checks.find((check) => check.name === "smaller-than-replaced")?.detail}); rejected, not summarized again in this pass; ${outcomeNote}`,
          failures
        } as const
      last = built
    }
    // The last attempt's failed checks with their numbers: why the caller reduces without a new checkpoint.
    const failed = last?.report.checks.filter((check) => !check.ok).map((check) => `${check.name}: ${check.detail}`)
    return {
      _tag: "Failed",
      reason: `every summary failed validation (${tried.join(", ")})${failed?.length ? `, the last on ${failed.join("; ")}` : ""}; ${outcomeNote}`,
      failures
    } as const
  })

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
          note: `${guarded.failure.message}; ${keptNote(input.preparation.previous)}`,
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
  /** The summary's cap in tokens (`Build.summaryMaxTokens`). */
  readonly maxTokens: number
  readonly countTokens: (text: string) => number
  /** The caller's instructions for the summary (`/compact <instructions>`). */
  readonly instructions?: string | undefined
  readonly signal?: AbortSignal | undefined
  readonly timeoutMs?: number | undefined
  /** Builds and validates one attempt ({@link Build.build} with the compaction's fixed inputs). */
  readonly build: (result: SummarizeResult) => BuiltCheckpoint
}

/**
 * Runs the summary ladder on the prepared range: a valid checkpoint, or the
 * reason none was and the failures on the way.
 *
 * @category constructors
 */
export const summarize = (input: SummarizeInput): Effect.Effect<Outcome<BuildOutcome>> =>
  run({
    summarizer: input.summarizer,
    fallback: input.fallback,
    hookSummary: input.hookSummary,
    request: {
      previous: input.preparation.previous,
      covered: input.preparation.covered,
      turnPrefix: input.preparation.turnPrefix,
      kept: [...input.preparation.keptUsers, ...input.preparation.tail].map((item) => ({
        entryId: item.entryId,
        message: item.message
      })),
      maxTokens: input.maxTokens,
      countTokens: input.countTokens,
      instructions: input.instructions,
      signal: input.signal
    },
    build: input.build,
    timeoutMs: input.timeoutMs
  })
