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

/**
 * The event an importer writes where a harness session starts inside a
 * transcript (aider's `# aider chat started at …`, pi's session header); the
 * messages after it, up to the next one, are that session's.
 *
 * @category constants
 */
export const SESSION_START_EVENT = "session.start"

const header = {
  id: Schema.String,
  parentId: Schema.NullOr(Schema.String),
  /** ISO 8601. */
  timestamp: Schema.String,
  schemaVersion: Schema.Literal(CURRENT_SCHEMA_VERSION),
  /** Importer or application metadata (source record type, model, usage …; `branchRoot`: `BranchRoot`). */
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

/**
 * What every entry carries besides its kind and the schema version: `id`,
 * `parentId` (the entry it follows, null for the first), `timestamp` (ISO
 * 8601) and optional `meta`.
 *
 * @category models
 */
export interface Header {
  readonly id: string
  readonly parentId: string | null
  readonly timestamp: string
  readonly meta?: JsonObject | undefined
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never

/**
 * An entry's kind and payload: `{ kind: "edit", edit }`, `{ kind: "event",
 * event }`, ….
 *
 * @category models
 */
export type Body = DistributiveOmit<Entry, "id" | "parentId" | "timestamp" | "schemaVersion" | "meta">

/** The entry type of a kind, e.g. `OfKind<"edit">` is {@link EditEntry}. @category models */
export type OfKind<K extends Entry["kind"]> = Extract<Entry, { readonly kind: K }>

/**
 * Builds an entry: the one place that writes `schemaVersion`
 * ({@link CURRENT_SCHEMA_VERSION}). Keys come in the order the transcript
 * files show them: id, parentId, timestamp, schemaVersion, meta (only when
 * given and not empty), then the body.
 *
 * @example
 * ```ts
 * import { Entry } from "@context-engine/core"
 * const entry = Entry.make(
 *   { id: "m1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z" },
 *   { kind: "message", message: { role: "user", content: "hi" } }
 * )
 * entry.schemaVersion // 1
 * ```
 *
 * @category constructors
 */
export const make = <B extends Body>(header: Header, body: B): OfKind<B["kind"]> =>
  ({
    id: header.id,
    parentId: header.parentId,
    timestamp: header.timestamp,
    schemaVersion: CURRENT_SCHEMA_VERSION,
    ...(header.meta !== undefined && Object.keys(header.meta).length > 0 ? { meta: header.meta } : {}),
    ...body
  }) as unknown as OfKind<B["kind"]>

/**
 * Re-links an entry: a copy of `entry` that follows `parentId`, with its id,
 * timestamp, schema version, meta and body unchanged (the entry given is not
 * modified; the same entry is returned when it already follows `parentId`).
 * Used when an entry built ahead of time is appended after entries that did
 * not exist when it was built (a shadow checkpoint after the committed
 * reduction, a batch appended after the session's current leaf).
 *
 * @example
 * ```ts
 * import { Entry } from "@context-engine/core"
 * const entry = Entry.make(
 *   { id: "m2", parentId: null, timestamp: "2026-01-01T00:00:00.000Z" },
 *   { kind: "message", message: { role: "user", content: "hi" } }
 * )
 * Entry.withParent(entry, "m1").parentId // "m1"
 * ```
 *
 * @category constructors
 */
export const withParent = <E extends Entry>(entry: E, parentId: string | null): E =>
  entry.parentId === parentId ? entry : { ...entry, parentId }

/**
 * Builds entries that follow each other: the first after `parentId`, each
 * next one after the previous; all with `timestamp`.
 *
 * @example
 * ```ts
 * import { Entry } from "@context-engine/core"
 * const [a, b] = Entry.chain("m1", "2026-01-01T00:00:00.000Z", [
 *   { id: "e1", body: { kind: "event", event: { name: "x" } } },
 *   { id: "e2", body: { kind: "event", event: { name: "y" } } }
 * ])
 * b!.parentId // "e1"
 * ```
 *
 * @category constructors
 */
export const chain = <B extends Body>(
  parentId: string | null,
  timestamp: string,
  items: ReadonlyArray<{ readonly id: string; readonly body: B }>
): Array<OfKind<B["kind"]>> => {
  let parent = parentId
  return items.map(({ id, body }) => {
    const entry = make({ id, parentId: parent, timestamp }, body)
    parent = id
    return entry
  })
}

// Ids per entries array: one compaction derives several ids from the same input.
const idSets = new WeakMap<ReadonlyArray<{ readonly id: string }>, ReadonlySet<string>>()

/**
 * An id for an entry an engine derives from its input (a checkpoint
 * `checkpoint:<generation>:<last covered id>`, memory records, edits): `base`
 * when no entry of `entries` has it, else the first free of `base~2`,
 * `base~3`, …. Derived ids stay deterministic (replays and branches agree),
 * yet an input can already hold one — an agent's session file that kept a
 * compaction's appended entries as unknown events re-imports them — and a
 * duplicate id makes every later input `InvalidInput` ("Duplicate entry id").
 *
 * @example
 * ```ts
 * import { Entry } from "@context-engine/core"
 * const taken = Entry.make(
 *   { id: "memory:1:m9:0", parentId: null, timestamp: "2026-01-01T00:00:00.000Z" },
 *   { kind: "event", event: { name: "imported" } }
 * )
 * Entry.freshId("memory:1:m9:0", [taken]) // "memory:1:m9:0~2"
 * Entry.freshId("memory:1:m9:1", [taken]) // "memory:1:m9:1"
 * ```
 *
 * @category constructors
 */
export const freshId = (base: string, entries: ReadonlyArray<{ readonly id: string }>): string => {
  let ids = idSets.get(entries)
  if (ids === undefined) {
    ids = new Set(entries.map((entry) => entry.id))
    idSets.set(entries, ids)
  }
  if (!ids.has(base)) return base
  let suffix = 2
  while (ids.has(`${base}~${suffix}`)) suffix++
  return `${base}~${suffix}`
}
