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
import { TranscriptSearch } from "@context-engine/core"
import type { Pool } from "pg"

/**
 * One hit (core's `TranscriptSearch.SearchHit`: the one definition every store's search returns).
 *
 * @category models
 */
export type SearchHit = TranscriptSearch.SearchHit

/**
 * The search capability (core's `TranscriptSearch.Searchable`, which `contextTools` detects on a store).
 *
 * @category models
 */
export type Searchable = TranscriptSearch.Searchable

/** Characters of a snippet. @category constants */
export const SNIPPET_CHARS = TranscriptSearch.SNIPPET_CHARS

/**
 * The searchable text of an entry: core's `TranscriptSearch.entryText` (one
 * definition for every index, and the text `context_restore` offsets into).
 *
 * @category getters
 */
export const searchableText = TranscriptSearch.entryText

const termsOf = TranscriptSearch.queryTerms
const snippet = TranscriptSearch.snippetOf

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
