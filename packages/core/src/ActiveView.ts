/**
 * The active view: the one context view every part of the system builds
 * from a session's entries (DESIGN.md "Context view") — the store's resume
 * path (`TranscriptStore.activeView`), every engine and the middleware
 * session.
 *
 * 1. The branch: walked back from the leaf (default: the newest entry) by
 *    `parentId`, so entries an application abandoned by rewriting its
 *    history are not in the view ({@link branch}).
 * 2. The checkpoint: the latest valid one on the branch, rollbacks honoured
 *    ({@link selectCheckpoint}).
 * 3. The view, in request order: the system messages, then the durable
 *    memory records in force that fit the memory budget ({@link Memory.select})
 *    — the stable prefix — the checkpoint rendered by the one
 *    renderer (`CheckpointRenderer.toMessage`, framed as reference only),
 *    the latest user message when the checkpoint covered it (DESIGN.md
 *    invariant: it survives verbatim), then the message entries from the
 *    checkpoint's `firstKeptEntryId` on, with the branch's edit entries
 *    applied as overlays ({@link ContextView.applyEdits}). Messages appended
 *    after the checkpoint (a process that died before compacting again) are
 *    part of that tail, so nothing acknowledged is lost on restart.
 *
 * A checkpoint is valid when its `coveredRange.toEntryId` and
 * `firstKeptEntryId` name entries written before it and it was not revoked by
 * a rollback event ({@link ROLLBACK_EVENT}). An invalid or revoked checkpoint
 * is treated as absent and the previous valid one is used. An imported
 * checkpoint (e.g. a Pi compaction) is a checkpoint like ours.
 *
 * @since 0.1.0
 */

import * as BranchRoot from "./BranchRoot.ts"
import type { Checkpoint } from "./Checkpoint.ts"
import * as CheckpointRenderer from "./CheckpointRenderer.ts"
import * as ContextView from "./ContextView.ts"
import type { CheckpointEntry, Entry, EventEntry, MemoryEntry, MessageEntry } from "./Entry.ts"
import * as Memory from "./Memory.ts"
import type { Message } from "./Message.ts"
import * as Turns from "./Turns.ts"
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
  readonly renderMemory?: MemoryRenderer
  /** Memory selection: the records in force that fit this budget (`Memory.select`). */
  readonly memory?: Memory.SelectOptions
  /**
   * Navigation: reconstruct the view as it was just before this checkpoint
   * entry was written (its branch up to, not including, that entry).
   */
  readonly beforeCheckpointId?: string
  /** The branch's leaf entry id. Default: the newest entry. */
  readonly leafId?: string
}

/**
 * A reconstructed view.
 *
 * @category models
 */
export interface ActiveView {
  readonly view: ContextView.ContextView
  /** System messages and memory records: the stable prefix, never compacted. */
  readonly prefix: ReadonlyArray<ContextView.ViewItem>
  /** The checkpoint the view is built on; undefined when there is none. */
  readonly checkpoint: CheckpointEntry | undefined
  /** After the checkpoint: the pinned latest user message (when covered) and the tail, edits applied. */
  readonly conversation: ReadonlyArray<ContextView.ViewItem>
  /** The entries of the branch, root first. */
  readonly branch: ReadonlyArray<Entry>
  /** The generation the next installed checkpoint must carry (max installed + 1, every branch). */
  readonly nextGeneration: number
  /** Checkpoints skipped as invalid, with the reason (reported as warnings). */
  readonly skippedCheckpoints: ReadonlyArray<{ readonly entryId: string; readonly reason: string }>
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

/**
 * What {@link branch} reads of an entry.
 *
 * @category models
 */
export interface Linked extends BranchRoot.Marked {
  readonly id: string
  readonly parentId: string | null
}

/**
 * What {@link selectCheckpoint} reads of an entry: its id and kind, a
 * checkpoint's content and an event's name and data. Every `Entry` is one; a
 * caller that streams a transcript keeps these instead of whole messages.
 *
 * @category models
 */
export type Skeleton =
  | (Linked & { readonly kind: "checkpoint"; readonly checkpoint: Checkpoint })
  | (Linked & { readonly kind: "event"; readonly event: EventEntry["event"] })
  | (Linked & { readonly kind: Exclude<Entry["kind"], "checkpoint" | "event"> })

const rollbackTarget = (entry: Skeleton): string | undefined => {
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
export const selectCheckpoint = <E extends Skeleton>(
  entries: ReadonlyArray<E>
): {
  readonly checkpoint: { readonly entry: E & { readonly kind: "checkpoint" }; readonly index: number } | undefined
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
  let active: { entry: E & { readonly kind: "checkpoint" }; index: number } | undefined
  entries.forEach((candidate, index) => {
    if (candidate.kind !== "checkpoint") return
    const entry = candidate as E & { readonly kind: "checkpoint"; readonly checkpoint: Checkpoint }
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
 * The entries of one branch, root first: walked back from `leafId` (default:
 * the newest entry) by `parentId`. An entry whose `parentId` is `null` or
 * names no earlier entry continues the entry before it in transcript order
 * (imported multi-session files, hand-built logs), so a linear log is one
 * branch whatever its parent ids say; a branch forks only at an explicit
 * parent, and starts over at an entry marked as a root
 * (`BranchRoot.isRoot`: the walk stops there). Returns `entries` itself when
 * every entry is on the branch. Reads only `id`, `parentId` and `meta`'s
 * root mark, so a caller that streams a transcript can find the branch from
 * those alone.
 *
 * @category getters
 */
export const branch = <E extends Linked>(entries: ReadonlyArray<E>, leafId?: string): ReadonlyArray<E> => {
  const position = new Map<string, number>()
  entries.forEach((entry, index) => {
    if (!position.has(entry.id)) position.set(entry.id, index)
  })
  const onBranch: Array<number> = []
  let index = leafId === undefined ? entries.length - 1 : (position.get(leafId) ?? entries.length - 1)
  while (index >= 0) {
    onBranch.push(index)
    if (BranchRoot.isRoot(entries[index]!)) break
    const parentId = entries[index]!.parentId
    const parent = parentId === null ? undefined : position.get(parentId)
    index = parent !== undefined && parent < index ? parent : index - 1
  }
  if (onBranch.length === entries.length) return entries
  return onBranch.reverse().map((at) => entries[at]!)
}

/**
 * A checkpoint as the view item that stands in for its covered range
 * (`source: "checkpoint"`, rendered by `CheckpointRenderer.toMessage`).
 *
 * @category constructors
 */
export const checkpointItem = (entryId: string, checkpoint: Checkpoint): ContextView.ViewItem => ({
  entryId,
  message: CheckpointRenderer.toMessage(checkpoint),
  source: "checkpoint",
  editedBy: []
})

/**
 * The original (unedited) message of every message entry, by entry id.
 *
 * @category getters
 */
export const originalMessages = (entries: ReadonlyArray<Entry>): ReadonlyMap<string, Message> => {
  const originals = new Map<string, Message>()
  for (const entry of entries) if (entry.kind === "message") originals.set(entry.id, entry.message)
  return originals
}

const navigate = (allEntries: ReadonlyArray<Entry>, options: ViewOptions): ReadonlyArray<Entry> => {
  if (options.beforeCheckpointId === undefined) return branch(allEntries, options.leafId)
  const cut = allEntries.findIndex((entry) => entry.kind === "checkpoint" && entry.id === options.beforeCheckpointId)
  if (cut === -1) return branch(allEntries, options.leafId)
  const before = allEntries.slice(0, cut)
  return branch(before, allEntries[cut]!.parentId ?? undefined)
}

/**
 * Index in `messages` where the tail after the checkpoint starts: the first
 * message at or after `firstKeptEntryId`, or after the checkpoint entry when
 * that id is not on the branch.
 */
const tailStart = (
  entries: ReadonlyArray<Entry>,
  messages: ReadonlyArray<MessageEntry>,
  checkpoint: { readonly entry: CheckpointEntry; readonly index: number } | undefined
): number => {
  if (checkpoint === undefined) return 0
  const firstKept = checkpoint.entry.checkpoint.firstKeptEntryId
  const keptAt = firstKept === null ? -1 : entries.findIndex((entry) => entry.id === firstKept)
  const from = keptAt >= 0 ? keptAt : checkpoint.index + 1
  const position = new Map(entries.map((entry, index) => [entry, index] as const))
  const start = messages.findIndex((entry) => position.get(entry)! >= from)
  return start === -1 ? messages.length : start
}

const EDITED: ReadonlyArray<string> = ["edit"]

/**
 * Index in `messages` of the latest user message as the engines' views find
 * it (`Turns.latestUserIndex` over the edited items): a message an edit
 * replaces or drops is not the user's words (`Turns.isUserWordsItem`).
 */
const latestUserOf = (messages: ReadonlyArray<MessageEntry>, edits: ReadonlyArray<ViewEdit>): number => {
  const edited = new Set<string>()
  for (const edit of edits) if (edit.op !== "insert") edited.add(edit.entryId)
  if (edited.size === 0) return Turns.latestUserIndex(messages)
  return Turns.latestUserIndex(
    messages.map((entry) => (edited.has(entry.id) ? { message: entry.message, editedBy: EDITED } : entry))
  )
}

/**
 * Whether the view of `branch` (one branch, as {@link branch} returns it)
 * pins the latest user message ahead of the checkpoint's kept tail: the
 * checkpoint covered it, and {@link reconstruct} keeps it verbatim before the
 * tail. A newer user message would unpin it (the view changes before the
 * tail), so an incremental view cannot simply append one.
 *
 * @category getters
 */
export const pinsLatestUser = (branch: ReadonlyArray<Entry>): boolean => {
  const { checkpoint } = selectCheckpoint(branch)
  if (checkpoint === undefined) return false
  const messages = branch.filter(
    (entry): entry is MessageEntry => entry.kind === "message" && entry.message.role !== "system"
  )
  const edits = branch.flatMap((entry) => (entry.kind === "edit" ? [entry.edit] : []))
  const latestUser = latestUserOf(messages, edits)
  return latestUser >= 0 && latestUser < tailStart(branch, messages, checkpoint)
}

/**
 * Reconstructs the active view from a session's entries (in transcript
 * order, every branch). Pure; never throws on inconsistent input: invalid
 * checkpoints are skipped and listed in `skippedCheckpoints`.
 *
 * @category constructors
 */
export const reconstruct = (allEntries: ReadonlyArray<Entry>, options: ViewOptions = {}): ActiveView => {
  const nextGeneration = maxGeneration(allEntries) + 1
  const entries = navigate(allEntries, options)
  const { checkpoint, skippedCheckpoints } = selectCheckpoint(entries)
  const memory = options.renderMemory ?? renderMemory
  const prefix: Array<ContextView.ViewItem> = []
  const messages: Array<MessageEntry> = []
  const edits: Array<ViewEdit> = []
  for (const entry of entries) {
    if (entry.kind === "message") {
      if (entry.message.role === "system")
        prefix.push({ entryId: entry.id, message: entry.message, source: "transcript", editedBy: [] })
      else messages.push(entry)
    } else if (entry.kind === "edit") edits.push(entry.edit)
  }
  for (const entry of Memory.select(entries, options.memory))
    prefix.push({ entryId: entry.id, message: memory(entry.memory), source: "memory", editedBy: [] })
  const start = tailStart(entries, messages, checkpoint)
  // the user's latest words, as the cut point pins them (user-role data after them — a slash command, shell
  // output — is covered like tool output, shared case C21)
  const latestUser = latestUserOf(messages, edits)
  const keptIds = new Set(checkpoint?.entry.checkpoint.keptUserEntryIds ?? [])
  const kept = messages.filter((entry, index) => index < start && (keptIds.has(entry.id) || index === latestUser))
  const chosen = [...kept, ...messages.slice(start)]
  const conversation = ContextView.applyEdits(ContextView.fromEntries(chosen), edits).items
  const checkpointItems = checkpoint ? [checkpointItem(checkpoint.entry.id, checkpoint.entry.checkpoint)] : []
  // Without a prefix or checkpoint the view's items are the conversation: one array (IncrementalActiveView then
  // extends one array per step, not two).
  const items =
    prefix.length === 0 && checkpointItems.length === 0
      ? conversation
      : [...prefix, ...checkpointItems, ...conversation]
  return {
    view: { items, tools: options.tools ?? [] },
    prefix,
    checkpoint: checkpoint?.entry,
    conversation,
    branch: entries,
    nextGeneration,
    skippedCheckpoints
  }
}
