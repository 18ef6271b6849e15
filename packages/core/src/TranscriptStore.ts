/**
 * The `TranscriptStore` service: the append-only, crash-safe store of session
 * transcripts, the source of truth from which every view is derived
 * (DESIGN.md "Transcript").
 *
 * Guarantees every implementation keeps:
 * - **Acknowledged means durable.** `append` / `installCheckpoint` succeed
 *   only after the write is on stable storage (fsync / SQLite commit with
 *   `synchronous=FULL`). An append is all-or-nothing per entry; a torn final
 *   line left by a crash is ignored with a warning and removed by the next
 *   writer.
 * - **Idempotent retries.** Appending an entry whose id is already stored
 *   with identical content is a no-op (a retry after a crash that happened
 *   between write and acknowledgement never duplicates an entry); the same id
 *   with different content fails with `InvalidInput`.
 * - **Atomic compaction commit.** `commitCompaction` installs a compaction's
 *   entries and checkpoint as one unit (old view or new view, never a mixture).
 * - **Failures never acknowledge.** A write that fails is not remembered as
 *   stored; a retry writes.
 * - **Atomic checkpoint install with compare-and-set.** A checkpoint is
 *   installed by one record; its `generation` must be the highest installed
 *   generation + 1, checked inside the store's exclusive write section (lock
 *   file / SQLite `BEGIN IMMEDIATE`), so two racing compactions — in two
 *   processes — install exactly one checkpoint per generation; the loser gets
 *   `CheckpointConflict` and nothing of its work is written.
 * - **Lenient reads report, strict reads fail.** Every bad record is reported
 *   with its line and reason ({@link TranscriptLog.TranscriptIssue}) and
 *   logged as a warning; `strict: true` fails with `TranscriptCorrupt` on the
 *   first one (except a torn final line, which was never acknowledged).
 *
 * Binary message content (`Uint8Array`, `ArrayBuffer`, `URL`) is persisted in
 * JSON-safe forms (base64 string, URL string); see {@link TranscriptLog}.
 *
 * Implementations: `InMemoryTranscriptStore` (tests), `JsonlTranscriptStore`
 * (embedded default, one file per session), `SqliteTranscriptStore` (many
 * sessions in one WAL database).
 *
 * @since 0.1.0
 */
import { Context, Effect, Stream } from "effect"
import type { ActiveView, ViewOptions } from "./ActiveView.ts"
import type { CheckpointEntry, Entry } from "./Entry.ts"
import { type CheckpointConflict, InvalidInput, type TranscriptCorrupt, type TranscriptStoreFailed } from "./Errors.ts"
import type { TranscriptIssue } from "./TranscriptLog.ts"

/**
 * Read options. `strict: true` fails on the first bad record instead of
 * skipping it.
 *
 * @category models
 */
export interface ReadOptions {
  readonly strict?: boolean
}

/**
 * A session's entries as read, with the problems found.
 *
 * @category models
 */
export interface LoadedTranscript {
  readonly sessionId: string
  readonly entries: ReadonlyArray<Entry>
  readonly issues: ReadonlyArray<TranscriptIssue>
}

/**
 * What an append did: `appended` entries were written, `skipped` were
 * already stored with identical content (retries).
 *
 * @category models
 */
export interface AppendResult {
  readonly appended: number
  readonly skipped: number
}

/**
 * A stored session.
 *
 * @category models
 */
export interface SessionInfo {
  readonly sessionId: string
  /** ISO 8601 time of the last write, when the store knows it. */
  readonly updatedAt: string | undefined
}

/**
 * The longest session id, in UTF-16 code units.
 *
 * @category constants
 */
export const MAX_SESSION_ID_LENGTH = 1024

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/

/**
 * The session id rule every store applies: a session id is a non-empty,
 * well-formed UTF-16 string (no lone surrogate, which UTF-8 storage cannot
 * hold), without U+0000, of at most {@link MAX_SESSION_ID_LENGTH} code units.
 * Every such id is stored and listed exactly as given; any other fails with
 * `InvalidInput` before anything is written. A store may narrow the length
 * (the JSONL store: its file name must fit in 255 bytes).
 *
 * @returns the error, or undefined when the id is valid.
 * @category validation
 */
export const checkSessionId = (sessionId: string): InvalidInput | undefined => {
  const problem =
    typeof sessionId !== "string" || sessionId.length === 0
      ? "must be a non-empty string"
      : LONE_SURROGATE.test(sessionId)
        ? "contains a lone surrogate (not well-formed UTF-16)"
        : sessionId.includes("\u0000")
          ? "contains U+0000"
          : sessionId.length > MAX_SESSION_ID_LENGTH
            ? `is ${sessionId.length} UTF-16 code units long; at most ${MAX_SESSION_ID_LENGTH}`
            : undefined
  return problem === undefined ? undefined : new InvalidInput({ what: "session id", path: "", detail: problem })
}

/**
 * The store's operations. Session ids follow {@link checkSessionId}.
 *
 * @category models
 */
export interface Service {
  /** `jsonl`, `sqlite` or `memory`. */
  readonly kind: string
  /**
   * Appends entries durably, in order. Fails with `InvalidInput` when an
   * entry does not match the schema, reuses a stored id with different
   * content, names a parent that is not stored, or is a checkpoint (use
   * {@link Service.installCheckpoint}).
   */
  readonly append: (
    sessionId: string,
    entries: ReadonlyArray<Entry>
  ) => Effect.Effect<AppendResult, InvalidInput | TranscriptStoreFailed>
  /** Streams a session's entries in transcript order (empty for an unknown session). */
  readonly read: (
    sessionId: string,
    options?: ReadOptions
  ) => Stream.Stream<Entry, TranscriptCorrupt | TranscriptStoreFailed>
  /** Reads a whole session with the issues found. */
  readonly load: (
    sessionId: string,
    options?: ReadOptions
  ) => Effect.Effect<LoadedTranscript, TranscriptCorrupt | TranscriptStoreFailed>
  /** The checkpoint the active view is built on (latest valid, not rolled back). */
  readonly latestCheckpoint: (sessionId: string) => Effect.Effect<CheckpointEntry | undefined, TranscriptStoreFailed>
  /**
   * Installs a checkpoint atomically with compare-and-set on its generation
   * (must equal the highest installed generation + 1). Re-installing the very
   * same entry is a no-op. Fails with `CheckpointConflict` when another
   * install won, `InvalidInput` when the entry is invalid or its
   * `coveredRange.toEntryId` / `firstKeptEntryId` / `parentId` are not stored.
   */
  readonly installCheckpoint: (
    sessionId: string,
    entry: CheckpointEntry
  ) => Effect.Effect<void, CheckpointConflict | InvalidInput | TranscriptStoreFailed>
  /**
   * Commits a compaction as one unit: its edits, memory entries, events and
   * at most one checkpoint are stored together or not at all (one SQL
   * transaction; one checksummed batch record in a JSONL file), with the
   * checkpoint's generation compared-and-set as in
   * {@link Service.installCheckpoint}. A reader sees the view before the
   * commit or after it, never a mixture. Entries already stored with identical
   * content are skipped (a retry after an unacknowledged commit). Fails with
   * `CheckpointConflict` when another commit installed that generation first
   * (nothing of this one is written), `InvalidInput` when an entry is
   * invalid, reuses an id with different content, references an entry that
   * is neither stored nor earlier in `entries`, or when there are several
   * checkpoints.
   */
  readonly commitCompaction: (
    sessionId: string,
    entries: ReadonlyArray<Entry>
  ) => Effect.Effect<AppendResult, CheckpointConflict | InvalidInput | TranscriptStoreFailed>
  /**
   * Reconstructs the active view (lenient read: bad records and invalid
   * checkpoints are skipped with warnings). With `beforeCheckpointId`, the
   * view as it was before that checkpoint (navigation, audit).
   */
  readonly activeView: (
    sessionId: string,
    options?: ViewOptions
  ) => Effect.Effect<ActiveView & { readonly issues: ReadonlyArray<TranscriptIssue> }, TranscriptStoreFailed>
  /**
   * Rolls the active view back to the view before `checkpointEntryId` by
   * appending a rollback event (the transcript keeps every checkpoint).
   * Fails with `InvalidInput` when no such checkpoint is stored.
   */
  readonly rollback: (
    sessionId: string,
    checkpointEntryId: string
  ) => Effect.Effect<void, InvalidInput | TranscriptStoreFailed>
  /** Every stored session. */
  readonly listSessions: () => Effect.Effect<ReadonlyArray<SessionInfo>, TranscriptStoreFailed>
}

/**
 * Service tag for the transcript store.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { TranscriptStore } from "@context-engine/core"
 * import { JsonlTranscriptStore } from "@context-engine/core/node"
 *
 * const program = Effect.gen(function* () {
 *   const store = yield* TranscriptStore.TranscriptStore
 *   return yield* store.activeView("session-1")
 * }).pipe(Effect.provide(JsonlTranscriptStore.layer({ directory: "./sessions" })))
 * ```
 *
 * @category services
 */
export class TranscriptStore extends Context.Service<TranscriptStore, Service>()(
  "@context-engine/core/TranscriptStore"
) {}

/**
 * The Promise face of a {@link Service}: failures reject with the typed
 * error; `read` is an async iterable.
 *
 * @category models
 */
export interface AsyncTranscriptStore {
  readonly store: Service
  readonly append: (sessionId: string, entries: ReadonlyArray<Entry>) => Promise<AppendResult>
  readonly read: (sessionId: string, options?: ReadOptions) => AsyncIterable<Entry>
  readonly load: (sessionId: string, options?: ReadOptions) => Promise<LoadedTranscript>
  readonly latestCheckpoint: (sessionId: string) => Promise<CheckpointEntry | undefined>
  readonly installCheckpoint: (sessionId: string, entry: CheckpointEntry) => Promise<void>
  readonly commitCompaction: (sessionId: string, entries: ReadonlyArray<Entry>) => Promise<AppendResult>
  readonly activeView: (
    sessionId: string,
    options?: ViewOptions
  ) => Promise<ActiveView & { readonly issues: ReadonlyArray<TranscriptIssue> }>
  readonly rollback: (sessionId: string, checkpointEntryId: string) => Promise<void>
  readonly listSessions: () => Promise<ReadonlyArray<SessionInfo>>
  /** Releases files and database handles (no-op for the in-memory store). */
  readonly close: () => Promise<void>
}

/**
 * Wraps a store in its Promise face. `close` is called by
 * {@link AsyncTranscriptStore.close}.
 *
 * @category constructors
 */
export const toAsync = (store: Service, close: () => Promise<void> = async () => {}): AsyncTranscriptStore => ({
  store,
  append: (sessionId, entries) => Effect.runPromise(store.append(sessionId, entries)),
  read: (sessionId, options) => Stream.toAsyncIterable(store.read(sessionId, options)),
  load: (sessionId, options) => Effect.runPromise(store.load(sessionId, options)),
  latestCheckpoint: (sessionId) => Effect.runPromise(store.latestCheckpoint(sessionId)),
  installCheckpoint: (sessionId, entry) => Effect.runPromise(store.installCheckpoint(sessionId, entry)),
  commitCompaction: (sessionId, entries) => Effect.runPromise(store.commitCompaction(sessionId, entries)),
  activeView: (sessionId, options) => Effect.runPromise(store.activeView(sessionId, options)),
  rollback: (sessionId, checkpointEntryId) => Effect.runPromise(store.rollback(sessionId, checkpointEntryId)),
  listSessions: () => Effect.runPromise(store.listSessions()),
  close
})
