/**
 * Full-text search for the SQLite transcript store, with SQLite's FTS5
 * (`unicode61` tokenizer, `bm25` ranking, `snippet`): the store's optional
 * {@link TranscriptSearch.Searchable} capability.
 *
 * The index lives in the same database file, in its own tables
 * (`transcript_search` and the cursor `transcript_search_cursor`), and
 * follows `transcript_entries` by `seq`: each search first indexes the rows
 * committed since the last one (append-only rows, so a cursor suffices).
 * It never writes `transcript_entries`, so the store's own guarantees are
 * untouched. Node-only (`node:sqlite`), like the store.
 *
 * @since 0.1.0
 */
import { createRequire } from "node:module"
import type * as NodeSqlite from "node:sqlite"
import type { Entry } from "./Entry.ts"
import * as TranscriptSearch from "./TranscriptSearch.ts"

const SCHEMA = `
CREATE VIRTUAL TABLE IF NOT EXISTS transcript_search USING fts5(
  body, session_id UNINDEXED, entry_id UNINDEXED, tokenize = 'unicode61'
);
CREATE TABLE IF NOT EXISTS transcript_search_cursor (id INTEGER PRIMARY KEY CHECK (id = 1), seq INTEGER NOT NULL);`

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  /** The store's database file. */
  readonly filename: string
  /** How long to wait for a writer, in milliseconds (default 10 000, as the store). */
  readonly busyTimeoutMs?: number
}

/**
 * The index: search plus `close`.
 *
 * @category models
 */
export interface SqliteSearchIndex extends TranscriptSearch.Searchable {
  /** Indexes the rows committed since the last call; returns how many entries were added. */
  readonly catchUp: () => number
  readonly close: () => void
}

/** An FTS5 query matching every term (each quoted, so `.`/`:`/`-` are literal). */
const ftsQuery = (text: string): string | undefined => {
  const terms = TranscriptSearch.queryTerms(text)
  return terms.length === 0 ? undefined : terms.map((term) => `"${term.replaceAll('"', '""')}"`).join(" OR ")
}

/**
 * Opens the index on the store's database (creates its tables when missing).
 * The `node:sqlite` driver is loaded by the store module first, which
 * filters its experimental warning.
 *
 * @category constructors
 */
export const open = (options: Options): SqliteSearchIndex => {
  const { DatabaseSync } = createRequire(import.meta.url)("node:sqlite") as typeof NodeSqlite
  const database = new DatabaseSync(options.filename, { timeout: options.busyTimeoutMs ?? 10_000 })
  database.exec(SCHEMA)
  const cursor = database.prepare("SELECT seq FROM transcript_search_cursor WHERE id = 1")
  const rows = database.prepare("SELECT seq, session_id, json FROM transcript_entries WHERE seq > ? ORDER BY seq")
  const insert = database.prepare("INSERT INTO transcript_search (body, session_id, entry_id) VALUES (?, ?, ?)")
  const move = database.prepare(
    "INSERT INTO transcript_search_cursor (id, seq) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET seq = excluded.seq"
  )
  const query = database.prepare(
    `SELECT entry_id, snippet(transcript_search, 0, '', '', '…', 24) AS snippet, bm25(transcript_search) AS rank, body
     FROM transcript_search WHERE transcript_search MATCH ? AND session_id = ? ORDER BY rank LIMIT ?`
  )

  const catchUp = (): number => {
    const hasEntries = database.prepare("SELECT 1 FROM sqlite_master WHERE name = 'transcript_entries'").get()
    if (hasEntries === undefined) return 0
    database.exec("BEGIN IMMEDIATE")
    try {
      let added = 0
      let last = Number(cursor.get()?.seq ?? 0)
      for (const row of rows.all(last)) {
        last = Number(row.seq)
        let entry: Entry
        try {
          entry = JSON.parse(String(row.json)) as Entry
        } catch {
          continue // a bad row is reported by the store's reads; the index skips it
        }
        const body = TranscriptSearch.entryText(entry)
        if (body.length === 0 || typeof entry.id !== "string") continue
        insert.run(body, String(row.session_id), entry.id)
        added++
      }
      move.run(last)
      database.exec("COMMIT")
      return added
    } catch (error) {
      if (database.isTransaction) database.exec("ROLLBACK")
      throw error
    }
  }

  return {
    catchUp,
    search: async (sessionId, text, searchOptions) => {
      const match = ftsQuery(text)
      if (match === undefined) return []
      catchUp()
      const limit = searchOptions?.limit ?? TranscriptSearch.DEFAULT_LIMIT
      const terms = TranscriptSearch.queryTerms(text)
      return query.all(match, sessionId, limit).map((row) => ({
        entryId: String(row.entry_id),
        snippet: String(row.snippet),
        // bm25 is lower-is-better; negate so higher is better, as the capability says.
        score: -Number(row.rank),
        offset: TranscriptSearch.snippetOf(String(row.body), terms).offset
      }))
    },
    close: () => database.close()
  }
}
