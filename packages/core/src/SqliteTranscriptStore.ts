/**
 * The SQLite transcript store: many sessions in one database file, in WAL
 * mode with `synchronous=FULL` (a commit is on stable storage before the
 * append is acknowledged).
 *
 * Driver: Node's built-in `node:sqlite` (`DatabaseSync`, unflagged since
 * Node 22.13), so core gains no native dependency. It is marked experimental
 * and prints an `ExperimentalWarning` once when loaded; this module loads it
 * with exactly that warning (type `ExperimentalWarning`, message naming
 * SQLite) filtered out, and passes every other warning through.
 *
 * Writes run in `BEGIN IMMEDIATE` transactions (one writer at a time across
 * processes, waiting up to `busyTimeoutMs`); inside, the store catches up on
 * rows other processes committed and checks ids and the checkpoint
 * generation (compare-and-set), so a racing install either commits whole or
 * not at all. Reads use a second connection and see committed rows only.
 *
 * Issues found in rows report the row's sequence number (`seq`) as the line.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import { dirname } from "node:path"
import type * as NodeSqlite from "node:sqlite"
import { Effect, Layer } from "effect"
import * as BackendTranscriptStore from "./BackendTranscriptStore.ts"
import * as PrivateFiles from "./PrivateFiles.ts"
import * as SqliteSearchIndex from "./SqliteSearchIndex.ts"
import type { Backend, RawRecord } from "./TranscriptBackend.ts"
import { makeMutex } from "./TranscriptBackend.ts"
import type * as TranscriptSearch from "./TranscriptSearch.ts"
import { type AsyncTranscriptStore, type Service, TranscriptStore, toAsync } from "./TranscriptStore.ts"

/**
 * Options of the SQLite store.
 *
 * @category models
 */
export interface Options {
  /** The database file; created (with its directory) when missing. */
  readonly filename: string
  /** How long a writer waits for another process's write transaction, in milliseconds (default 10 000). */
  readonly busyTimeoutMs?: number
  /** Permission bits of a created database file (default `0o600`; SQLite gives its `-wal`/`-shm` files the same). */
  readonly fileMode?: number
  /** Permission bits of a created directory (default `0o700`). */
  readonly directoryMode?: number
}

let driver: typeof NodeSqlite | undefined

const loadDriver = (): typeof NodeSqlite => {
  if (driver !== undefined) return driver
  const emitWarning = process.emitWarning
  process.emitWarning = ((warning: string | Error, ...rest: Array<unknown>) => {
    const type = typeof rest[0] === "string" ? rest[0] : (rest[0] as { type?: string } | undefined)?.type
    const name = warning instanceof Error ? warning.name : type
    const text = warning instanceof Error ? warning.message : warning
    if (name === "ExperimentalWarning" && /SQLite/i.test(text)) return
    return (emitWarning as (...args: Array<unknown>) => void).call(process, warning, ...rest)
  }) as typeof process.emitWarning
  try {
    driver = createRequire(import.meta.url)("node:sqlite") as typeof NodeSqlite
  } finally {
    process.emitWarning = emitWarning
  }
  return driver
}

const SCHEMA = `
CREATE TABLE IF NOT EXISTS transcript_entries (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  session_id TEXT NOT NULL,
  json TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS transcript_entries_by_session ON transcript_entries (session_id, seq);
CREATE TABLE IF NOT EXISTS transcript_sessions (
  session_id TEXT PRIMARY KEY,
  updated_at TEXT NOT NULL
);`

const PAGE_ROWS = 1000

const connect = (options: Options): NodeSqlite.DatabaseSync => {
  const { DatabaseSync } = loadDriver()
  const database = new DatabaseSync(options.filename, { timeout: options.busyTimeoutMs ?? 10_000 })
  database.exec("PRAGMA journal_mode = WAL; PRAGMA synchronous = FULL;")
  return database
}

/**
 * Creates the SQLite backend (for {@link make} and tests).
 *
 * @category constructors
 */
export const makeBackend = (options: Options): Backend => {
  PrivateFiles.ensureDirectory(dirname(options.filename), options.directoryMode ?? PrivateFiles.DIRECTORY_MODE)
  // Created owner-only before SQLite opens it (it would use 0644 & ~umask); a planted symlink is refused.
  PrivateFiles.ensureFile(options.filename, options.fileMode ?? PrivateFiles.FILE_MODE)
  const writer = connect(options)
  const existing = writer
    .prepare("SELECT count(*) AS n FROM sqlite_master WHERE name IN ('transcript_entries', 'transcript_sessions')")
    .get()
  if (Number(existing?.n) < 2) {
    // Only a new database takes the write lock at open.
    writer.exec("BEGIN IMMEDIATE")
    try {
      writer.exec(SCHEMA)
      writer.exec("COMMIT")
    } catch (error) {
      writer.exec("ROLLBACK")
      throw error
    }
  }
  const reader = connect(options)
  const page = reader.prepare(
    "SELECT seq, json FROM transcript_entries WHERE session_id = ? AND seq > ? ORDER BY seq LIMIT ?"
  )
  const since = writer.prepare("SELECT seq, json FROM transcript_entries WHERE session_id = ? AND seq > ? ORDER BY seq")
  const insert = writer.prepare("INSERT INTO transcript_entries (session_id, json) VALUES (?, ?)")
  const touch = writer.prepare(
    "INSERT INTO transcript_sessions (session_id, updated_at) VALUES (?, ?) ON CONFLICT (session_id) DO UPDATE SET updated_at = excluded.updated_at"
  )
  const sessions = reader.prepare("SELECT session_id, updated_at FROM transcript_sessions ORDER BY session_id")
  const serialize = makeMutex()
  const rows = (statement: NodeSqlite.StatementSync, ...parameters: Array<string | number>) =>
    statement
      .all(...parameters)
      .map((row): RawRecord => ({ line: Number(row.seq), text: String(row.json), torn: false }))

  return {
    kind: "sqlite",
    atomicWrites: true,
    describe: (sessionId) => `sqlite:${options.filename}#${sessionId}`,
    records: async function* (sessionId) {
      // Rows are append-only and seq grows in commit order, so paging by seq reads a consistent prefix.
      let after = 0
      for (;;) {
        const batch = rows(page, sessionId, after, PAGE_ROWS)
        yield* batch
        if (batch.length < PAGE_ROWS) return
        after = batch[batch.length - 1]!.line
      }
    },
    exclusive: (sessionId, body) =>
      serialize(async () => {
        writer.exec("BEGIN IMMEDIATE")
        try {
          const result = await body({
            readSince: async (cursor) => {
              const records = rows(since, sessionId, cursor.offset)
              const last = records[records.length - 1]
              return {
                records,
                cursor: last === undefined ? cursor : { offset: last.line, line: last.line },
                reset: false
              }
            },
            write: async (cursor, texts) => {
              let seq = cursor.offset
              for (const text of texts) seq = Number(insert.run(sessionId, text).lastInsertRowid)
              touch.run(sessionId, new Date().toISOString())
              return { offset: seq, line: seq }
            }
          })
          writer.exec("COMMIT")
          return result
        } catch (error) {
          if (writer.isTransaction) writer.exec("ROLLBACK")
          throw error
        }
      }),
    listSessions: async () =>
      sessions.all().map((row) => ({ sessionId: String(row.session_id), updatedAt: String(row.updated_at) })),
    close: async () => {
      await serialize(async () => {
        reader.close()
        writer.close()
      })
    }
  }
}

/**
 * Creates a SQLite transcript store and its `close` function.
 *
 * @category constructors
 */
export const make = (options: Options): { readonly store: Service; readonly close: () => Promise<void> } => {
  const backend = makeBackend(options)
  return { store: BackendTranscriptStore.make(backend), close: backend.close }
}

/**
 * A layer providing {@link TranscriptStore} backed by one SQLite database;
 * the connections close when the layer's scope closes.
 *
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<TranscriptStore> =>
  Layer.effect(
    TranscriptStore,
    Effect.map(
      Effect.acquireRelease(
        Effect.sync(() => make(options)),
        (made) => Effect.promise(made.close)
      ),
      (made) => made.store
    )
  )

/**
 * The Promise face of a SQLite store; call `close()` when done. It offers
 * full-text search over every stored entry (`TranscriptSearch.Searchable`,
 * SQLite FTS5 through {@link SqliteSearchIndex}, opened on first use).
 *
 * @category constructors
 */
export const open = (options: Options): AsyncTranscriptStore & TranscriptSearch.Searchable => {
  const made = make(options)
  let index: SqliteSearchIndex.SqliteSearchIndex | undefined
  return {
    ...toAsync(made.store, async () => {
      index?.close()
      await made.close()
    }),
    search: (sessionId, text, searchOptions) => {
      index ??= SqliteSearchIndex.open(options)
      return index.search(sessionId, text, searchOptions)
    }
  }
}
