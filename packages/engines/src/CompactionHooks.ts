/**
 * Compaction hooks, typed as event / result pairs (Pi's extension hooks
 * `session_before_compact` / `session_compact`).
 *
 * - `beforeCompact` handlers **chain**, in registration order. Each sees the
 *   summary the previous handler supplied (if any) in `event.summary`. A
 *   handler returns nothing (no opinion), `{ summary }` to supply or replace
 *   the summary (the last supplied one wins; the summarizer is then not
 *   called and the checkpoint records `summarizer.kind: "hook"`), or
 *   `{ cancel: true, reason }` to cancel summarizing (later handlers do not
 *   run; the engine keeps the previous checkpoint and reports the stage as
 *   skipped). A supplied summary goes through the same validation as any.
 * - `afterCompact` handlers all run, in order, after a checkpoint is built
 *   and validated; they observe and cannot change the result. A failing
 *   `afterCompact` handler is ignored (it cannot undo an atomic commit).
 *
 * @since 0.1.0
 */
import type { Checkpoint as CheckpointModule, ContextEngine } from "@context-engine/core"

type Checkpoint = CheckpointModule.Checkpoint
type EngineInput = ContextEngine.EngineInput
type CompactionPlan = ContextEngine.CompactionPlan
type CompactionResult = ContextEngine.CompactionResult

/**
 * What a `beforeCompact` handler sees.
 *
 * @category models
 */
export interface BeforeCompactEvent {
  readonly input: EngineInput
  readonly plan: CompactionPlan
  /** The checkpoint being replaced, if any. */
  readonly previous: Checkpoint | undefined
  /** Entry ids about to be covered (including a split turn's prefix). */
  readonly coveredEntryIds: ReadonlyArray<string>
  /** The summary a previous handler supplied. */
  readonly summary: Checkpoint["content"] | undefined
}

/**
 * What a `beforeCompact` handler returns.
 *
 * @category models
 */
export type BeforeCompactResult =
  | undefined
  | { readonly cancel: true; readonly reason?: string }
  | { readonly summary: NonNullable<Checkpoint["content"]> }

/**
 * What an `afterCompact` handler sees.
 *
 * @category models
 */
export interface AfterCompactEvent {
  readonly input: EngineInput
  readonly result: CompactionResult
}

/**
 * The hooks of an engine.
 *
 * @category models
 */
export interface Hooks {
  readonly beforeCompact?: ReadonlyArray<
    (event: BeforeCompactEvent) => BeforeCompactResult | Promise<BeforeCompactResult>
  >
  readonly afterCompact?: ReadonlyArray<(event: AfterCompactEvent) => void | Promise<void>>
}

/**
 * Why a `beforeCompact` handler's return value is not a
 * {@link BeforeCompactResult} (undefined when it is). A supplied summary's
 * shape is checked by the summary ladder like any summarizer's.
 *
 * @category guards
 */
export const malformedBeforeCompactResult = (value: unknown): string | undefined => {
  if (value === undefined || value === null) return undefined
  if (typeof value !== "object") return `expected undefined, { cancel: true } or { summary }, got ${typeof value}`
  if ("cancel" in value) return (value as { cancel: unknown }).cancel === true ? undefined : "cancel must be true"
  if ("summary" in value) {
    const summary = (value as { summary: unknown }).summary
    return typeof summary === "object" && summary !== null ? undefined : "summary must be an object"
  }
  return `expected undefined, { cancel: true } or { summary }, got keys ${Object.keys(value).slice(0, 5).join(", ")}`
}
