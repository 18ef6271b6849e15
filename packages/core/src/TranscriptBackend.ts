/**
 * The storage half of a transcript store: a {@link Backend} only stores and
 * returns records (JSONL lines, SQLite rows, an array) and provides an
 * exclusive write section per session (lock file, `BEGIN IMMEDIATE`, nothing
 * for memory). Everything else — validation, idempotent appends, the
 * checkpoint compare-and-set, lenient/strict reads, view reconstruction — is
 * written once in `BackendTranscriptStore`.
 *
 * @since 0.1.0
 */
import type { TranscriptIssue } from "./TranscriptLog.ts"
import type { SessionInfo } from "./TranscriptStore.ts"

/**
 * One stored record: its 1-based line (or row sequence) and text. `torn`
 * marks a final line without a newline.
 *
 * @category models
 */
export interface RawRecord {
  readonly line: number
  readonly text: string
  readonly torn: boolean
}

/**
 * Where a reader stopped: backend-specific `offset` (bytes, row id, index)
 * and the last line number seen.
 *
 * @category models
 */
export interface Cursor {
  readonly offset: number
  readonly line: number
}

/**
 * The exclusive write section of one session.
 *
 * @category models
 */
export interface Transaction {
  /**
   * Records committed after `cursor`, complete ones only. `reset` is true
   * when storage shrank below the cursor (edited by hand): re-read from the start.
   */
  readonly readSince: (cursor: Cursor) => Promise<{
    readonly records: ReadonlyArray<RawRecord>
    readonly cursor: Cursor
    readonly reset: boolean
    readonly repaired?: TranscriptIssue
  }>
  /**
   * Writes records durably after `cursor` (which is the current end) and
   * returns the new end. On failure nothing of the write may count as
   * stored: the backend rolls back (SQL) or cuts the partial write off (file),
   * best effort, and the store forgets what it believed stored.
   */
  readonly write: (cursor: Cursor, texts: ReadonlyArray<string>) => Promise<Cursor>
}

/**
 * A storage backend.
 *
 * @category models
 */
export interface Backend {
  readonly kind: string
  /**
   * True when one `Transaction.write` of several records commits all of
   * them or none (a SQL transaction, an array push). False for the JSONL
   * file, where the store frames an atomic write as one batch record
   * (`TranscriptLog.encodeBatch`). Absent means false: correct for any
   * backend that stores one record whole, so existing backends keep working.
   */
  readonly atomicWrites?: boolean
  /** The name used in issues and errors for a session (file path, `sqlite:…#id`). */
  readonly describe: (sessionId: string) => string
  /** Every record of a session in order (a consistent snapshot), streamed. */
  readonly records: (sessionId: string) => AsyncIterable<RawRecord>
  /** Runs `body` in the session's exclusive write section. */
  readonly exclusive: <A>(sessionId: string, body: (transaction: Transaction) => Promise<A>) => Promise<A>
  readonly listSessions: () => Promise<ReadonlyArray<SessionInfo>>
  readonly close: () => Promise<void>
}

/**
 * A promise-chain mutex: runs `body` after every earlier call has settled.
 *
 * @category constructors
 */
export const makeMutex = () => {
  let tail: Promise<unknown> = Promise.resolve()
  return <A>(body: () => Promise<A>): Promise<A> => {
    const run = tail.then(body, body)
    tail = run.then(
      () => undefined,
      () => undefined
    )
    return run
  }
}
