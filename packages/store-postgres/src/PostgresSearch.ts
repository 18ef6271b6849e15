/**
 * Full-text search over every entry a PostgreSQL transcript store keeps
 * (offloaded, trimmed, covered by a checkpoint, on another branch), for the
 * context tools: each row carries its searchable text, indexed with a GIN
 * index on `to_tsvector('simple', …)` (no stemming, so identifiers, paths
 * and error codes match exactly as written). A query matches entries holding
 * any of its word terms, ranked by `ts_rank`, newest first among equals.
 *
 * @since 0.1.0
 */
import { CheckpointValidation, type Entry } from "@context-engine/core"
import type { Pool } from "pg"

/**
 * One hit. `offset` is the character position of the first matching term in
 * the entry's searchable text.
 *
 * @category models
 */
export interface SearchHit {
  readonly entryId: string
  /** A short excerpt around the first match. */
  readonly snippet: string
  /** `ts_rank` relevance, higher is better (comparable within one result list). */
  readonly score: number
  readonly offset: number
}

/**
 * The search capability.
 *
 * @category models
 */
export interface Searchable {
  /** Hits for `text` among the session's entries, best first; `limit` defaults to 5. */
  readonly search: (
    sessionId: string,
    text: string,
    options?: { readonly limit?: number }
  ) => Promise<ReadonlyArray<SearchHit>>
}

/** Characters of a snippet. @category constants */
export const SNIPPET_CHARS = 240

/**
 * The searchable text of an entry: a message's text
 * (`CheckpointValidation.messageText`), a checkpoint's text or goal, a
 * memory record's text; empty for edits and events.
 *
 * @category getters
 */
export const searchableText = (entry: Entry.Entry): string => {
  switch (entry.kind) {
    case "message":
      return CheckpointValidation.messageText(entry.message)
    case "checkpoint":
      return entry.checkpoint.text ?? entry.checkpoint.content?.goal ?? ""
    case "memory":
      return entry.memory.text
    default:
      return ""
  }
}

const termsOf = (text: string): ReadonlyArray<string> =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((term) => term.length > 0)

const snippet = (text: string, terms: ReadonlyArray<string>) => {
  const lower = text.toLowerCase()
  const found = terms.map((term) => lower.indexOf(term)).filter((at) => at !== -1)
  const offset = found.reduce((first, at) => Math.min(first, at), found[0] ?? 0)
  const start = Math.max(0, offset - SNIPPET_CHARS / 3)
  const end = Math.min(text.length, start + SNIPPET_CHARS)
  return {
    offset,
    snippet: `${start > 0 ? "…" : ""}${text.slice(start, end).replace(/\s+/g, " ")}${end < text.length ? "…" : ""}`
  }
}

/**
 * The search function over a migrated schema (the pool's `search_path`).
 *
 * @category constructors
 */
export const make =
  (pool: Pool): Searchable["search"] =>
  async (sessionId, text, options) => {
    const terms = termsOf(text)
    if (terms.length === 0) return []
    // Terms hold letters, digits and `_` only, so the tsquery needs no further quoting.
    const query = terms.join(" | ")
    const { rows } = await pool.query<{ entry_id: string; search: string; score: number }>(
      `SELECT entry_id, search, ts_rank(search_vector, to_tsquery('simple', $2)) AS score
       FROM transcript_entries
       WHERE session_id = $1 AND search_vector @@ to_tsquery('simple', $2)
       ORDER BY score DESC, seq DESC
       LIMIT $3`,
      [sessionId, query, options?.limit ?? 5]
    )
    return rows.map((row) => ({ entryId: row.entry_id, score: Number(row.score), ...snippet(row.search, terms) }))
  }
