/**
 * Search over a session's originals for the context tools: the store's own
 * index when it offers one (`TranscriptSearch.Searchable`, e.g. the SQLite
 * store's FTS5), otherwise an in-process MiniSearch index (BM25+ ranking,
 * prefix and small-typo matching) over every entry the session holds —
 * every branch, offloaded, trimmed or covered by a checkpoint. The index
 * grows incrementally: the transcript is append-only, so each search adds
 * only the entries appended since the last one.
 *
 * @since 0.1.0
 */
import { type Entry, TranscriptSearch } from "@context-engine/core"
import MiniSearch from "minisearch"

/**
 * A search over one session.
 *
 * @category models
 */
export interface ContextSearch {
  readonly search: (text: string, limit?: number) => Promise<ReadonlyArray<TranscriptSearch.SearchHit>>
}

/**
 * Fuzziness of the in-process index: a term matches with edits up to this
 * share of its length (MiniSearch's `fuzzy`; 0.2 is its documented example).
 *
 * @category constants
 */
export const FUZZY = 0.2

/**
 * An in-process index over `entries()` (called on each search; must be
 * append-only).
 *
 * @category constructors
 */
export const inMemory = (entries: () => ReadonlyArray<Entry.Entry>): ContextSearch => {
  const index = new MiniSearch<{ id: string; text: string }>({
    fields: ["text"],
    tokenize: (text) => [...TranscriptSearch.queryTerms(text)]
  })
  const texts = new Map<string, string>()
  let indexed = 0
  const catchUp = (): void => {
    const all = entries()
    for (; indexed < all.length; indexed++) {
      const entry = all[indexed]!
      const text = TranscriptSearch.entryText(entry)
      if (text.length === 0 || texts.has(entry.id)) continue
      texts.set(entry.id, text)
      index.add({ id: entry.id, text })
    }
  }
  return {
    search: async (text, limit = TranscriptSearch.DEFAULT_LIMIT) => {
      catchUp()
      const terms = TranscriptSearch.queryTerms(text)
      if (terms.length === 0) return []
      return index
        .search(terms.join(" "), { prefix: true, fuzzy: FUZZY, combineWith: "OR" })
        .slice(0, limit)
        .map((result) => {
          const id = String(result.id)
          return { entryId: id, score: result.score, ...TranscriptSearch.snippetOf(texts.get(id) ?? "", terms) }
        })
    }
  }
}

/**
 * The store's index for one session.
 *
 * @category constructors
 */
export const fromStore = (store: TranscriptSearch.Searchable, sessionId: string): ContextSearch => ({
  search: (text, limit) => store.search(sessionId, text, limit === undefined ? {} : { limit })
})
