/**
 * The summary ladder (DESIGN.md "Summarize, validate, commit"): the
 * attempts a compaction makes before it gives up on a new checkpoint.
 *
 * 1. the summarizer (or the summary a `beforeCompact` hook supplied — then
 *    it is the only attempt);
 * 2. if that summary fails validation: one repair retry of the same
 *    summarizer, told the failed checks and exactly what is missing;
 * 3. if that fails too: the fallback summarizer, when there is one.
 *
 * A summarizer that *fails* (throws, times out, aborts) ends the ladder at
 * once: the caller keeps the previous checkpoint and reduces
 * deterministically (shared case C05 — nothing is committed, and the next
 * compaction retries). Every failure is returned, typed.
 *
 * @since 0.1.0
 */
import { type Checkpoint, CheckpointValidation, Errors } from "@context-engine/core"
import { Effect, Result } from "effect"
import type { SummarizeRequest, SummarizeResult, Summarizer } from "./Summarizer.ts"

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
}

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
    const attempts: Array<Attempt<A>> =
      input.hookSummary !== undefined
        ? [
            {
              label: "hook",
              run: () =>
                Effect.succeed({
                  content: input.hookSummary!,
                  summarizer: { kind: "hook", promptVersion: "hook" }
                } satisfies SummarizeResult)
            }
          ]
        : [
            { label: summarizer.name, run: () => summarizer.summarize(request) },
            {
              label: `${summarizer.name} (repair)`,
              run: (previous) =>
                summarizer.summarize({
                  ...request,
                  repair: {
                    attempt: previous!.checkpoint.content!,
                    failedChecks: CheckpointValidation.failedChecks(previous!.report),
                    missing: previous!.report.missing
                  }
                })
            },
            ...(fallback ? [{ label: `${fallback.name} (fallback)`, run: () => fallback.summarize(request) }] : [])
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
          reason: `${attempt.label} failed: ${outcome.failure.reason}; kept the previous checkpoint`,
          failures
        } as const
      }
      const built = input.build(outcome.success)
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
      failures.push(
        new Errors.ValidationFailed({
          failedChecks: CheckpointValidation.failedChecks(built.report),
          missing: built.report.missing
        })
      )
      last = built
    }
    return {
      _tag: "Failed",
      reason: `every summary failed validation (${tried.join(", ")}); kept the previous checkpoint`,
      failures
    } as const
  })
