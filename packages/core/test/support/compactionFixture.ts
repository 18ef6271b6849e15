/**
 * A small session and the compaction that follows it (an edit, a memory
 * entry and a checkpoint), for the atomic compaction commit tests and their
 * crash child.
 */
import type { CheckpointEntry, EditEntry, Entry, MemoryEntry, MessageEntry } from "../../src/Entry.ts"

const timestamp = "2026-01-01T00:00:00.000Z"

/** `count` alternating user/assistant messages `m1…m<count>`, each a child of the previous. */
export const conversation = (count: number, prefix = "m"): Array<MessageEntry> =>
  Array.from({ length: count }, (_, index) => ({
    id: `${prefix}${index + 1}`,
    parentId: index === 0 ? null : `${prefix}${index}`,
    timestamp,
    schemaVersion: 1,
    kind: "message",
    message: {
      role: index % 2 === 0 ? "user" : "assistant",
      content: `${prefix}${index + 1}: ${"detail ".repeat(20 + index)}`
    }
  }))

/**
 * The entries one compaction of `messages` commits: an edit shortening the
 * second message, a memory record and a checkpoint of `generation` covering
 * all but the last two messages. `padding` characters make each entry large
 * (so a write can be cut inside it).
 */
export const compaction = (
  messages: ReadonlyArray<MessageEntry>,
  generation: number,
  tag = "c",
  padding = 0
): Array<Entry> => {
  const last = messages.at(-1)!.id
  const covered = messages.at(-3)!.id
  const kept = messages.at(-2)!.id
  const edit: EditEntry = {
    id: `${tag}-edit-${generation}`,
    parentId: last,
    timestamp,
    schemaVersion: 1,
    kind: "edit",
    edit: {
      op: "replace",
      entryId: kept,
      message: { role: "assistant", content: `shortened ${"e".repeat(padding)}` },
      strategy: "toolTrim",
      reason: "test"
    }
  }
  const memory: MemoryEntry = {
    id: `${tag}-memory-${generation}`,
    parentId: edit.id,
    timestamp,
    schemaVersion: 1,
    kind: "memory",
    memory: { text: `remember generation ${generation} ${"r".repeat(padding)}`, sourceEntryIds: [covered] }
  }
  const checkpoint: CheckpointEntry = {
    id: `${tag}-checkpoint-${generation}`,
    parentId: memory.id,
    timestamp,
    schemaVersion: 1,
    kind: "checkpoint",
    checkpoint: {
      id: `${tag}-k-${generation}`,
      generation,
      coveredRange: { fromEntryId: null, toEntryId: covered },
      firstKeptEntryId: kept,
      tokensBefore: 1000,
      tokensAfter: 100,
      summarizer: { kind: "extractive", promptVersion: "test" },
      text: `summary through ${covered} ${"s".repeat(padding)}`,
      createdAt: timestamp
    }
  }
  return [edit, memory, checkpoint]
}
