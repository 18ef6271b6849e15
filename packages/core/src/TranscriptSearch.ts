/**
 * Full-text search over a session's originals (DESIGN.md "Memory, offload
 * and context tools"): every entry the transcript keeps — offloaded,
 * trimmed, covered by a checkpoint, on another branch — is searchable,
 * because the transcript never loses one.
 *
 * Search is an optional store capability ({@link Searchable}): a store that
 * keeps a real index implements it (the SQLite store with FTS5,
 * `SqliteSearchIndex`); for the others the context tools build an index with
 * a search library over the session's entries. {@link entryText} is the one
 * definition of what an entry's searchable (and restorable) text is.
 *
 * @since 0.1.0
 */

import type { Entry } from "./Entry.ts"
import * as MessageParts from "./MessageParts.ts"

/**
 * One hit. `offset` is the character position of the first match in
 * {@link entryText} of the entry (0 when unknown), for a ready restore call.
 *
 * @category models
 */
export interface SearchHit {
  readonly entryId: string
  /** A short excerpt around the match. */
  readonly snippet: string
  /** Relevance, higher is better (comparable within one result list only). */
  readonly score: number
  readonly offset: number
}

/**
 * Options of a search.
 *
 * @category models
 */
export interface SearchOptions {
  /** Most hits returned (default {@link DEFAULT_LIMIT}). */
  readonly limit?: number
}

/**
 * The search capability a store may offer.
 *
 * @category models
 */
export interface Searchable {
  /** Hits for `text` among the session's entries, best first. */
  readonly search: (sessionId: string, text: string, options?: SearchOptions) => Promise<ReadonlyArray<SearchHit>>
}

/**
 * Default number of hits (own choice: a handful of hits, each with a ready
 * restore call, keeps a search result small in the context).
 *
 * @category constants
 */
export const DEFAULT_LIMIT = 5

/**
 * Characters of a snippet around the match.
 *
 * @category constants
 */
export const SNIPPET_CHARS = 240

/**
 * Whether a store offers search.
 *
 * @category guards
 */
export const isSearchable = (store: unknown): store is Searchable =>
  typeof store === "object" && store !== null && typeof (store as { search?: unknown }).search === "function"

/**
 * The searchable text of an entry: a message's text
 * (`MessageParts.plainText`: text parts, tool-call names and
 * arguments, tool-result outputs), a checkpoint's text or goal, a memory
 * record's text; empty for edits and events. For a tool message with one
 * text result this is exactly the result's original text, so offsets into
 * it are offsets into the original bytes.
 *
 * @category getters
 */
export const entryText = (entry: Entry): string => {
  switch (entry.kind) {
    case "message":
      return MessageParts.plainText(entry.message)
    case "checkpoint":
      return entry.checkpoint.text ?? entry.checkpoint.content?.goal ?? ""
    case "memory":
      return entry.memory.text
    default:
      return ""
  }
}

/**
 * Lower-cased word terms of a query (letters, digits and `_ . / : -` inside
 * words), as both indexes tokenize.
 *
 * @category getters
 */
export const queryTerms = (text: string): ReadonlyArray<string> =>
  text
    .toLowerCase()
    .split(/[^\p{L}\p{N}_]+/u)
    .filter((term) => term.length > 0)

/**
 * A snippet of `text` around the first occurrence of any of `terms`
 * (case-insensitive), with its offset.
 *
 * @category getters
 */
export const snippetOf = (
  text: string,
  terms: ReadonlyArray<string>
): { readonly snippet: string; readonly offset: number } => {
  const lower = text.toLowerCase()
  let offset = -1
  for (const term of terms) {
    const at = lower.indexOf(term)
    if (at !== -1 && (offset === -1 || at < offset)) offset = at
  }
  if (offset === -1) offset = 0
  const start = Math.max(0, offset - SNIPPET_CHARS / 3)
  const end = Math.min(text.length, start + SNIPPET_CHARS)
  const snippet = `${start > 0 ? "…" : ""}${text.slice(start, end).replace(/\s+/g, " ")}${end < text.length ? "…" : ""}`
  return { snippet, offset }
}
