/**
 * Active view reconstruction: the context view a session resumes with,
 * derived from its transcript entries alone (DESIGN.md "Context view").
 *
 * The view is, in order: every system message (the stable prefix), the
 * durable memory records in force that fit the memory budget
 * ({@link Memory.select}), the latest valid checkpoint rendered as a user-role
 * message (`source: "checkpoint"`), then the message entries from the
 * checkpoint's `firstKeptEntryId` onward, with the transcript's edit entries
 * applied as overlays ({@link ContextView.applyEdits}). Messages appended
 * after the checkpoint (a process that died before compacting again) are part
 * of that tail, so nothing acknowledged is lost on restart.
 *
 * A checkpoint is valid when its `coveredRange.toEntryId` and
 * `firstKeptEntryId` name entries written before it and it was not revoked by
 * a rollback event ({@link ROLLBACK_EVENT}). An invalid or revoked checkpoint
 * is treated as absent and the previous valid one is used.
 *
 * @since 0.1.0
 */
import type { CheckpointContent } from "./Checkpoint.ts"
import * as ContextView from "./ContextView.ts"
import type { CheckpointEntry, Entry, MemoryEntry } from "./Entry.ts"
import * as Memory from "./Memory.ts"
import type { Message } from "./Message.ts"
import type { ViewEdit } from "./ViewEdit.ts"

/**
 * Name of the event entry written by a rollback. `data.checkpointEntryId`
 * names the checkpoint to roll back: it and every checkpoint of the same or a
 * higher generation written before the event stop being active. Generations
 * are never reused: the next install uses `max generation + 1`.
 *
 * @category constants
 */
export const ROLLBACK_EVENT = "context-engine.checkpoint-rollback"

/**
 * The `skippedCheckpoints` reason of a checkpoint revoked by a rollback (expected, not a warning).
 *
 * @category constants
 */
export const ROLLED_BACK = "rolled back"

/**
 * Renders a checkpoint as the text of the user-role message that stands in
 * for its covered range. Replaceable (the tiered-summary engine supplies a
 * Markdown renderer).
 *
 * @category models
 */
export type CheckpointRenderer = (checkpoint: CheckpointEntry["checkpoint"]) => string

/**
 * Renders a durable memory record as a view message.
 *
 * @category models
 */
export type MemoryRenderer = (memory: MemoryEntry["memory"]) => Message

/**
 * Options for {@link reconstruct}.
 *
 * @category models
 */
export interface ViewOptions {
  readonly tools?: ReadonlyArray<ContextView.ToolDefinition>
  readonly renderCheckpoint?: CheckpointRenderer
  readonly renderMemory?: MemoryRenderer
  /** Memory selection: the records in force that fit this budget (`Memory.select`). */
  readonly memory?: Memory.SelectOptions
  /**
   * Navigation: reconstruct the view as it was just before this checkpoint
   * entry was written (the transcript up to, not including, that entry).
   */
  readonly beforeCheckpointId?: string
}

/**
 * A reconstructed view.
 *
 * @category models
 */
export interface ActiveView {
  readonly view: ContextView.ContextView
  /** The checkpoint the view is built on; undefined when there is none. */
  readonly checkpoint: CheckpointEntry | undefined
  /** The generation the next installed checkpoint must carry (max installed + 1). */
  readonly nextGeneration: number
  /** Checkpoints skipped as invalid, with the reason (reported as warnings). */
  readonly skippedCheckpoints: ReadonlyArray<{ readonly entryId: string; readonly reason: string }>
}

const list = (title: string, items: ReadonlyArray<string>): string =>
  items.length === 0 ? "" : `\n## ${title}\n${items.map((item) => `- ${item}`).join("\n")}\n`

const renderContent = (content: CheckpointContent): string =>
  [
    `## Goal\n${content.goal}\n`,
    list("Constraints", content.constraints),
    list("Done", content.progress.done),
    list("In progress", content.progress.inProgress),
    list("Blocked", content.progress.blocked),
    list(
      "Decisions",
      content.decisions.map((decision) => `${decision.decision} — ${decision.rationale}`)
    ),
    list("Next steps", content.nextSteps),
    list("Critical context", content.criticalContext),
    list("Pending user asks", content.pendingUserAsks),
    list("Files read", content.filesRead),
    list("Files modified", content.filesModified)
  ].join("")

/**
 * The default checkpoint renderer: `checkpoint.text` when present, otherwise
 * a minimal Markdown section list of `checkpoint.content`.
 *
 * @category renderers
 */
export const renderCheckpoint: CheckpointRenderer = (checkpoint) => {
  const body = checkpoint.text ?? (checkpoint.content ? renderContent(checkpoint.content) : "(empty checkpoint)")
  return `# Checkpoint (generation ${checkpoint.generation})\n\n${body.trim()}`
}

/**
 * The default memory renderer: a system message `Memory: <text>`.
 *
 * @category renderers
 */
export const renderMemory: MemoryRenderer = (memory) => ({
  role: "system",
  content: `Memory${memory.scope ? ` (${memory.scope})` : ""}: ${memory.text}`
})

/**
 * The highest checkpoint generation among `entries` (0 when none).
 *
 * @category getters
 */
export const maxGeneration = (entries: ReadonlyArray<Entry>): number =>
  entries.reduce((max, entry) => (entry.kind === "checkpoint" ? Math.max(max, entry.checkpoint.generation) : max), 0)

const rollbackTarget = (entry: Entry): string | undefined => {
  if (entry.kind !== "event" || entry.event.name !== ROLLBACK_EVENT) return undefined
  const data = entry.event.data
  if (data === null || typeof data !== "object" || Array.isArray(data)) return undefined
  const target = (data as { readonly checkpointEntryId?: unknown }).checkpointEntryId
  return typeof target === "string" ? target : undefined
}

/**
 * The checkpoint a view is built on: the latest checkpoint entry that is not
 * rolled back and whose `coveredRange.toEntryId` and `firstKeptEntryId` name
 * earlier entries. Shared by the store's {@link reconstruct} and the
 * engines' views, so a rollback appended through the store is honoured
 * everywhere.
 *
 * Returns the entry with its index, each entry id's first position, and the
 * checkpoints skipped with the reason.
 *
 * @category getters
 */
export const selectCheckpoint = (
  entries: ReadonlyArray<Entry>
): {
  readonly checkpoint: { readonly entry: CheckpointEntry; readonly index: number } | undefined
  readonly position: ReadonlyMap<string, number>
  readonly skippedCheckpoints: ReadonlyArray<{ readonly entryId: string; readonly reason: string }>
} => {
  const position = new Map<string, number>()
  entries.forEach((entry, index) => {
    if (!position.has(entry.id)) position.set(entry.id, index)
  })

  // Rollbacks revoke the named checkpoint and every same-or-higher generation written before the event.
  const revoked = new Set<string>()
  entries.forEach((entry, index) => {
    const target = rollbackTarget(entry)
    if (target === undefined) return
    const named = entries.find((candidate) => candidate.kind === "checkpoint" && candidate.id === target)
    if (named?.kind !== "checkpoint") return
    for (const candidate of entries.slice(0, index)) {
      if (candidate.kind === "checkpoint" && candidate.checkpoint.generation >= named.checkpoint.generation) {
        revoked.add(candidate.id)
      }
    }
  })

  const skippedCheckpoints: Array<{ entryId: string; reason: string }> = []
  let active: { entry: CheckpointEntry; index: number } | undefined
  entries.forEach((entry, index) => {
    if (entry.kind !== "checkpoint") return
    const { coveredRange, firstKeptEntryId } = entry.checkpoint
    const before = (id: string) => (position.get(id) ?? Number.POSITIVE_INFINITY) < index
    let reason: string | undefined
    if (revoked.has(entry.id)) reason = ROLLED_BACK
    else if (!before(coveredRange.toEntryId))
      reason = `coveredRange.toEntryId ${coveredRange.toEntryId} is not an earlier entry`
    else if (firstKeptEntryId !== null && !before(firstKeptEntryId))
      reason = `firstKeptEntryId ${firstKeptEntryId} is not an earlier entry`
    if (reason === undefined) active = { entry, index }
    else skippedCheckpoints.push({ entryId: entry.id, reason })
  })

  return { checkpoint: active, position, skippedCheckpoints }
}

/**
 * Reconstructs the active view from a session's entries (in transcript
 * order). Pure; never throws on inconsistent input: invalid checkpoints are
 * skipped and listed in `skippedCheckpoints`.
 *
 * @category constructors
 */
export const reconstruct = (allEntries: ReadonlyArray<Entry>, options: ViewOptions = {}): ActiveView => {
  const nextGeneration = maxGeneration(allEntries) + 1
  let entries = allEntries
  if (options.beforeCheckpointId !== undefined) {
    const cut = allEntries.findIndex((entry) => entry.kind === "checkpoint" && entry.id === options.beforeCheckpointId)
    if (cut !== -1) entries = allEntries.slice(0, cut)
  }
  const { checkpoint: active, position, skippedCheckpoints } = selectCheckpoint(entries)

  const render = options.renderCheckpoint ?? renderCheckpoint
  const memory = options.renderMemory ?? renderMemory
  const prefix: Array<ContextView.ViewItem> = []
  for (const entry of entries) {
    if (entry.kind === "message" && entry.message.role === "system") {
      prefix.push({ entryId: entry.id, message: entry.message, source: "transcript", editedBy: [] })
    }
  }
  for (const entry of Memory.select(entries, options.memory)) {
    prefix.push({ entryId: entry.id, message: memory(entry.memory), source: "memory", editedBy: [] })
  }
  let tailStart = 0
  if (active !== undefined) {
    const { entry, index } = active
    prefix.push({
      entryId: entry.id,
      message: { role: "user", content: render(entry.checkpoint) },
      source: "checkpoint",
      editedBy: []
    })
    const kept = entry.checkpoint.firstKeptEntryId
    tailStart = kept === null ? index + 1 : (position.get(kept) ?? index + 1)
  }
  const tailEntries = entries
    .slice(tailStart)
    .filter((entry) => !(entry.kind === "message" && entry.message.role === "system"))
  const edits: Array<ViewEdit> = entries.flatMap((entry) => (entry.kind === "edit" ? [entry.edit] : []))
  const tail = ContextView.applyEdits(ContextView.fromEntries(tailEntries), edits)
  return {
    view: { items: [...prefix, ...tail.items], tools: options.tools ?? [] },
    checkpoint: active?.entry,
    nextGeneration,
    skippedCheckpoints
  }
}
