/**
 * Transcript entries: the append-only log that is the source of truth
 * (DESIGN.md "Transcript"). Every entry has an id, a parent id (the entry it
 * follows, null for the first), an ISO 8601 timestamp, a kind and the
 * `schemaVersion` it was written with.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"
import { Checkpoint } from "./Checkpoint.ts"
import { JsonObject, JsonValue, Message } from "./Message.ts"
import { ViewEdit } from "./ViewEdit.ts"

/**
 * The entry schema version this build writes.
 *
 * @category constants
 */
export const CURRENT_SCHEMA_VERSION = 1 as const

const header = {
  id: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  /** ISO 8601. */
  timestamp: Schema.String,
  schemaVersion: Schema.Literal(CURRENT_SCHEMA_VERSION),
  /** Importer or application metadata (source record type, model, usage …). */
  meta: Schema.optionalKey(JsonObject)
}

/** @category schemas */
export const MessageEntry = Schema.Struct({ ...header, kind: Schema.Literal("message"), message: Message })
/** @category models */
export type MessageEntry = typeof MessageEntry.Type

/** @category schemas */
export const CheckpointEntry = Schema.Struct({
  ...header,
  kind: Schema.Literal("checkpoint"),
  checkpoint: Checkpoint
})
/** @category models */
export type CheckpointEntry = typeof CheckpointEntry.Type

/**
 * A durable memory record: a fact that outlives one task, with provenance.
 *
 * @category schemas
 */
export const MemoryEntry = Schema.Struct({
  ...header,
  kind: Schema.Literal("memory"),
  memory: Schema.Struct({
    text: Schema.String,
    /** What kind of fact: `preference`, `convention`, `decision`, `environment` (free text). */
    scope: Schema.optionalKey(Schema.String),
    /** Provenance: the transcript entries the fact was read from. */
    sourceEntryIds: Schema.Array(Schema.String),
    /**
     * A stable topic key (e.g. `preference:indentation`): a newer record with
     * the same key supersedes the older one.
     */
    key: Schema.optionalKey(Schema.String),
    /** Ids of memory entries this one replaces (they leave the view, never the transcript). */
    supersedes: Schema.optionalKey(Schema.Array(Schema.String)),
    /** The compaction cycle (checkpoint generation) whose flush wrote it. */
    cycle: Schema.optionalKey(Schema.Number)
  })
})
/** @category models */
export type MemoryEntry = typeof MemoryEntry.Type

/** @category schemas */
export const EditEntry = Schema.Struct({ ...header, kind: Schema.Literal("edit"), edit: ViewEdit })
/** @category models */
export type EditEntry = typeof EditEntry.Type

/**
 * Anything else worth keeping in order: model changes, settings, usage
 * reports, provider-native compaction items.
 *
 * @category schemas
 */
export const EventEntry = Schema.Struct({
  ...header,
  kind: Schema.Literal("event"),
  event: Schema.Struct({ name: Schema.String, data: Schema.optionalKey(JsonValue) })
})
/** @category models */
export type EventEntry = typeof EventEntry.Type

/** @category schemas */
export const Entry = Schema.Union([MessageEntry, CheckpointEntry, MemoryEntry, EditEntry, EventEntry])
/** @category models */
export type Entry = typeof Entry.Type

/**
 * A session's transcript.
 *
 * @category schemas
 */
export const Transcript = Schema.Struct({
  sessionId: Schema.String,
  entries: Schema.Array(Entry)
})
/** @category models */
export type Transcript = typeof Transcript.Type

/** @category guards */
export const isMessageEntry = (entry: Entry): entry is MessageEntry => entry.kind === "message"
/** @category guards */
export const isCheckpointEntry = (entry: Entry): entry is CheckpointEntry => entry.kind === "checkpoint"
