/**
 * Phase 4 of the checkpoint tier, "commit": the compaction result of a
 * validated checkpoint — the checkpoint entry after this cycle's memory
 * records and the edit entries still visible — or of the deterministic
 * stages alone when they reach the low-water mark. Pure: the result is for
 * the caller to append (atomically: a validated checkpoint and all its edits,
 * or none of them); then the afterCompact observers ({@link afterCompact}).
 *
 * @since 0.2.0
 */
import { type ContextEngine, Entry as Entries, type Entry, PluginGuard, type ViewEdit } from "@context-engine/core"
import type { Pipeline } from "@context-engine/strategies"
import { Effect } from "effect"
import type { AfterCompactEvent, Hooks } from "../CompactionHooks.ts"
import type { Built } from "./Build.ts"
import type { Preparation } from "./Prepare.ts"

/** The "checkpoint" stage report of a compaction, from the view the deterministic stages left. @category constructors */
export const checkpointStage = (
  cheap: Pipeline.Result,
  status: ContextEngine.StageReport["status"],
  note: string,
  after = cheap.after
): ContextEngine.StageReport => ({
  stage: "checkpoint",
  tokensBefore: cheap.after.inputTokens,
  tokensAfter: after.inputTokens,
  edits: status === "applied" ? 1 : 0,
  durationMs: 0,
  status,
  note
})

/** Writes edit entries (the engine kernel's `editEntries`: one id scheme, one clock). @category models */
export type EditEntries = (
  edits: ReadonlyArray<ViewEdit.ViewEdit>,
  after?: ReadonlyArray<Entry.Entry>
) => Array<Entry.EditEntry>

/** Inputs of {@link notNeeded}. @category models */
export interface NotNeededInput {
  readonly cheap: Pipeline.Result
  readonly before: ContextEngine.CompactionResult["before"]
  readonly targetTokens: number
  readonly lowWaterTokens: number
  readonly editEntries: EditEntries
}

/**
 * The result when the deterministic stages reach the low-water mark: their
 * edits, no checkpoint.
 *
 * @category constructors
 */
export const notNeeded = (input: NotNeededInput): ContextEngine.CompactionResult => ({
  view: input.cheap.view,
  edits: input.cheap.edits,
  entriesToAppend: input.editEntries(input.cheap.edits),
  stages: [
    ...input.cheap.stages,
    checkpointStage(
      input.cheap,
      "not-needed",
      input.lowWaterTokens < input.targetTokens
        ? `the deterministic stages reach the low-water mark (${input.lowWaterTokens} tokens)`
        : "fits after the deterministic stages"
    )
  ],
  before: input.before,
  after: input.cheap.after,
  fits: true,
  ...(input.cheap.failures ? { failures: input.cheap.failures } : {})
})

/** Inputs of {@link commit}. @category models */
export interface CommitInput {
  readonly cheap: Pipeline.Result
  readonly preparation: Preparation
  readonly built: Built
  /** The summary ladder's attempts, in order (e.g. `["extractive"]`). */
  readonly tried: ReadonlyArray<string>
  /** This cycle's memory records (committed with the checkpoint or not at all). */
  readonly memoryEntries: ReadonlyArray<Entry.Entry>
  /** Appended to the stage note (the memory flush's outcome). */
  readonly memoryNote: string
  readonly before: ContextEngine.CompactionResult["before"]
  readonly targetTokens: number
  /** The last input entry's id: the parent of the first appended entry. */
  readonly lastEntryId: string | null
  readonly timestamp: string
  readonly failures: ReadonlyArray<NonNullable<ContextEngine.CompactionResult["failures"]>[number]>
  readonly editEntries: EditEntries
}

/**
 * The result of a validated checkpoint. Edits on entries the checkpoint
 * covers would never show again: only those on the tail are kept.
 *
 * @category constructors
 */
export const commit = (input: CommitInput): ContextEngine.CompactionResult => {
  const { preparation, built } = input
  const hidden = new Set([...preparation.covered, ...preparation.turnPrefix].map((item) => item.entryId))
  const tailEdits = input.cheap.edits.filter(
    (edit) => !hidden.has(edit.op === "insert" ? edit.afterEntryId : edit.entryId)
  )
  const edits = input.editEntries(tailEdits, input.memoryEntries)
  const checkpointEntry = Entries.make(
    {
      id: built.checkpoint.id,
      parentId: [...input.memoryEntries, ...edits].at(-1)?.id ?? input.lastEntryId,
      timestamp: input.timestamp
    },
    { kind: "checkpoint", checkpoint: built.checkpoint }
  )
  const note = `${input.tried.join(" → ")}; covered ${preparation.coveredEntryIds.length} messages${preparation.cut.splitTurn ? " (split turn)" : ""}; identifier retention ${(built.report.identifierRetention * 100).toFixed(1)}%${input.memoryNote}`
  return {
    view: built.extra.view,
    edits: tailEdits,
    checkpoint: built.checkpoint,
    entriesToAppend: [...input.memoryEntries, ...edits, checkpointEntry],
    stages: [...input.cheap.stages, checkpointStage(input.cheap, "applied", note, built.extra.after)],
    before: input.before,
    after: built.extra.after,
    fits: built.extra.after.inputTokens <= input.targetTokens,
    ...(input.failures.length > 0 ? { failures: [...input.failures] } : {})
  }
}

/**
 * After the commit: runs the afterCompact observers in order, each behind `PluginGuard`
 * (deadline `timeoutMs`, the input's abort signal). They cannot undo an
 * atomic commit: their failures are ignored.
 *
 * @category constructors
 */
export const afterCompact = (
  hooks: NonNullable<Hooks["afterCompact"]>,
  event: AfterCompactEvent,
  timeoutMs: number | undefined
): Effect.Effect<void> =>
  Effect.forEach(
    hooks.entries(),
    ([index, hook]) =>
      Effect.ignore(
        PluginGuard.guardPromise({
          plugin: `afterCompact[${index}]`,
          kind: "hook",
          timeoutMs,
          signal: event.input.signal,
          run: () => hook(event)
        })
      ),
    { discard: true }
  )
