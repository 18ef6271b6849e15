/**
 * The view a checkpointing engine works on, built from transcript entries:
 * system messages (the stable prefix), durable memory, the latest checkpoint
 * rendered as a reference message, the latest user message when the
 * checkpoint covered it (DESIGN.md invariant: it survives verbatim), then the
 * verbatim tail from the checkpoint's `firstKeptEntryId`, with the
 * transcript's edit entries applied as overlays.
 *
 * An existing latest checkpoint — ours or imported (a Pi `compaction`
 * entry, `summarizer.kind: "imported"`) — is the previous checkpoint: the
 * next compaction covers from its `firstKeptEntryId` onward, so messages it
 * kept verbatim are either still kept or covered by the new checkpoint.
 *
 * @since 0.1.0
 */
import {
  ActiveView,
  type Checkpoint,
  ContextView,
  type Entry,
  Memory,
  type Message,
  type ViewEdit
} from "@context-engine/core"
import * as CheckpointRenderer from "./CheckpointRenderer.ts"

/**
 * A view split into its parts.
 *
 * @category models
 */
export interface CheckpointView {
  /** System messages and memory records: never compacted. */
  readonly prefix: ReadonlyArray<ContextView.ViewItem>
  /** The previous checkpoint's entry, if any. */
  readonly checkpointEntry: Entry.CheckpointEntry | undefined
  /** The conversation after the checkpoint: the pinned latest user message (if covered) and the tail, edits applied. */
  readonly conversation: ReadonlyArray<ContextView.ViewItem>
  /** Original (unedited) message of every message entry, by entry id. */
  readonly originals: ReadonlyMap<string, Message.Message>
  /** The whole view, in request order. */
  readonly view: ContextView.ContextView
}

/**
 * The checkpoint as a view item (`source: "checkpoint"`, its entry id).
 *
 * @category constructors
 */
export const checkpointItem = (entryId: string, checkpoint: Checkpoint.Checkpoint): ContextView.ViewItem => ({
  entryId,
  message: CheckpointRenderer.toMessage(checkpoint),
  source: "checkpoint",
  editedBy: []
})

/**
 * Builds the view from entries, on the checkpoint core's
 * `ActiveView.selectCheckpoint` picks (the same one the transcript store
 * uses): the latest one not rolled back whose `coveredRange.toEntryId` and
 * `firstKeptEntryId` name earlier entries. Memory records are the ones in
 * force that fit the memory budget (`Memory.select` with `memory`).
 *
 * @category constructors
 */
export const fromEntries = (
  entries: ReadonlyArray<Entry.Entry>,
  tools: ReadonlyArray<ContextView.ToolDefinition> = [],
  memory: Memory.SelectOptions = {}
): CheckpointView => {
  const checkpointEntry = ActiveView.selectCheckpoint(entries).checkpoint?.entry
  const prefix: Array<ContextView.ViewItem> = []
  const originals = new Map<string, Message.Message>()
  const edits: Array<ViewEdit.ViewEdit> = []
  for (const entry of entries) {
    if (entry.kind === "message") {
      originals.set(entry.id, entry.message)
      if (entry.message.role === "system")
        prefix.push({ entryId: entry.id, message: entry.message, source: "transcript", editedBy: [] })
    } else if (entry.kind === "edit") edits.push(entry.edit)
  }
  for (const entry of Memory.select(entries, memory))
    prefix.push({ entryId: entry.id, message: ActiveView.renderMemory(entry.memory), source: "memory", editedBy: [] })
  const messages = entries.filter(
    (entry): entry is Entry.MessageEntry => entry.kind === "message" && entry.message.role !== "system"
  )
  let start = 0
  if (checkpointEntry) {
    const firstKept = checkpointEntry.checkpoint.firstKeptEntryId
    const keptAt = firstKept === null ? -1 : messages.findIndex((entry) => entry.id === firstKept)
    if (keptAt >= 0) start = keptAt
    else {
      const checkpointAt = entries.indexOf(checkpointEntry)
      start = messages.findIndex((entry) => entries.indexOf(entry) > checkpointAt)
      if (start === -1) start = messages.length
    }
  }
  let latestUser = -1
  for (let index = messages.length - 1; index >= 0; index--)
    if (messages[index]!.message.role === "user") {
      latestUser = index
      break
    }
  const chosen = [...(latestUser >= 0 && latestUser < start ? [messages[latestUser]!] : []), ...messages.slice(start)]
  const conversation = ContextView.applyEdits(ContextView.fromEntries(chosen), edits).items
  const items = [
    ...prefix,
    ...(checkpointEntry ? [checkpointItem(checkpointEntry.id, checkpointEntry.checkpoint)] : []),
    ...conversation
  ]
  return { prefix, checkpointEntry, conversation, originals, view: { items, tools } }
}
