/**
 * Pass 1 of a rolling compaction (`RollingCompact.ts`): streams the file once
 * (`Import.streamFile`) and keeps only what is small — per entry its id,
 * parent, kind and a few flags (`Stub`), checkpoints whole — and from those:
 * the active branch (`ActiveView.branch`, the same walk the engines do), the
 * active checkpoint (`ActiveView.selectCheckpoint`), which messages the
 * transcript's view holds (as `ActiveView.reconstruct` picks them), the
 * recorded model (`PolicyOptions.recordedModel`) and the import's facts.
 *
 * The line-format importers write message, checkpoint and event entries
 * only (no edit or memory entries), so the view of a file is its system
 * messages, the active checkpoint, the pinned user messages and the tail.
 *
 * @since 0.6.0
 */
import { ActiveView, type Entry, Turns } from "@context-engine/core"
import { Import } from "@context-engine/transcripts"
import * as CompactReports from "./CompactReport.ts"
import * as PolicyOptions from "./PolicyOptions.ts"

/** A message entry as pass 1 keeps it. @category models */
export interface MessageStub extends ActiveView.Linked {
  readonly kind: "message"
  readonly role: "system" | "user" | "assistant" | "tool"
  /** Empty or reasoning-only: normalization drops it unless it is the latest user message. */
  readonly unsendable: boolean
  /** A user message with the user's words (`Turns.isUserWordsItem`). */
  readonly words: boolean
}

/** An entry as pass 1 keeps it: checkpoints whole, events by name (a rollback's data kept). @category models */
export type Stub =
  | MessageStub
  | Extract<ActiveView.Skeleton, { readonly kind: "checkpoint" }>
  | Extract<ActiveView.Skeleton, { readonly kind: "event" }>
  | (ActiveView.Linked & { readonly kind: "edit" | "memory" })

/**
 * Which entries the transcript's view holds: `onBranch` (undefined: every
 * entry), the active checkpoint's id, the branch position from which every
 * message is in the tail, the pinned user messages, and the view's last user
 * message normalization keeps (where the current tool loop starts).
 *
 * @category models
 */
export interface Scan {
  readonly imported: Import.StreamResult
  readonly stubs: ReadonlyArray<Stub>
  readonly onBranch: ReadonlySet<string> | undefined
  readonly checkpointId: string | undefined
  readonly tailFrom: number
  readonly pinned: ReadonlySet<string>
  readonly lastUserId: string | undefined
  readonly recordedModel: string | undefined
}

const stubOf = (entry: Entry.Entry): Stub => {
  const linked = { id: entry.id, parentId: entry.parentId }
  if (entry.kind === "message") {
    const { message } = entry
    const facts = CompactReports.factsOf(entry)
    return {
      ...linked,
      kind: "message",
      role: message.role,
      unsendable: facts.unsendable,
      words: message.role === "user" && Turns.isUserWordsItem({ message })
    }
  }
  if (entry.kind === "checkpoint") return { ...linked, kind: "checkpoint", checkpoint: entry.checkpoint }
  if (entry.kind === "event")
    return {
      ...linked,
      kind: "event",
      event: entry.event.name === ActiveView.ROLLBACK_EVENT ? entry.event : { name: entry.event.name }
    }
  return { ...linked, kind: entry.kind }
}

/**
 * The report's facts of an entry (`CompactReport.factsOf`) from its stub.
 *
 * @category getters
 */
export const factsOfStub = (stub: Stub): CompactReports.EntryFacts => ({
  id: stub.id,
  kind: stub.kind,
  system: stub.kind === "message" && stub.role === "system",
  unsendable: stub.kind === "message" && stub.unsendable,
  ...(stub.kind === "checkpoint" ? { checkpoint: stub.checkpoint } : {})
})

/**
 * The latest user message as `Turns.latestUserIndex` finds it (the user's
 * words, else the latest user message), over message stubs.
 */
const latestUserOf = (messages: ReadonlyArray<MessageStub>): MessageStub | undefined => {
  let fallback: MessageStub | undefined
  for (let index = messages.length - 1; index >= 0; index--) {
    const stub = messages[index]!
    if (stub.role !== "user") continue
    if (stub.words) return stub
    fallback ??= stub
  }
  return fallback
}

/** Which messages of `branch` the view holds, as `ActiveView.reconstruct` picks them. */
const viewOf = (branch: ReadonlyArray<Stub>) => {
  const { checkpoint } = ActiveView.selectCheckpoint(branch)
  const messages = branch.filter((stub): stub is MessageStub => stub.kind === "message" && stub.role !== "system")
  const latestUser = latestUserOf(messages)
  const position = new Map(branch.map((stub, index) => [stub.id, index] as const))
  const firstKept = checkpoint?.entry.checkpoint.firstKeptEntryId ?? null
  const keptAt = firstKept === null ? undefined : position.get(firstKept)
  // ActiveView's tailStart: the first message at or after the first kept entry (after the checkpoint without one)
  const tailFrom = checkpoint === undefined ? 0 : (keptAt ?? checkpoint.index + 1)
  const pinned = new Set<string>()
  if (checkpoint !== undefined) {
    const keptIds = new Set(checkpoint.entry.checkpoint.keptUserEntryIds ?? [])
    for (const stub of messages)
      if (position.get(stub.id)! < tailFrom && (keptIds.has(stub.id) || stub === latestUser)) pinned.add(stub.id)
  }
  const inView = (stub: MessageStub) => position.get(stub.id)! >= tailFrom || pinned.has(stub.id)
  // the current tool loop starts at the view's last user message that normalization keeps
  const lastUser = messages.findLast(
    (stub) => stub.role === "user" && inView(stub) && (!stub.unsendable || stub === latestUser)
  )
  return { checkpointId: checkpoint?.entry.id, tailFrom, pinned, lastUserId: lastUser?.id }
}

/**
 * Runs pass 1 over `file`.
 *
 * @category constructors
 */
export const scan = async (
  file: string,
  options: Import.FileOptions,
  onProgress: (done: number, total: number) => void
): Promise<Scan> => {
  const stubs: Array<Stub> = []
  let recordedModel: string | undefined
  const imported = await Import.streamFile(file, { ...options, onProgress }, (entry) => {
    stubs.push(stubOf(entry))
    recordedModel = PolicyOptions.recordedModel([entry]) ?? recordedModel
  })
  const branch = ActiveView.branch(stubs)
  const onBranch = branch === stubs ? undefined : new Set(branch.map((stub) => stub.id))
  return {
    imported,
    stubs,
    onBranch,
    ...viewOf(branch),
    recordedModel
  }
}
