/**
 * Head + tail truncation of text with a marker that says what was cut: the
 * shared primitive of `clamp` and `toolTrim`'s soft trim.
 *
 * Keeping both ends (rather than only the head) follows Codex's
 * `truncate_middle` for tool output and OpenClaw's context-pruning soft trim
 * (`headChars` + `tailChars`): the head says what a log or file is, the tail
 * holds the error or the final state.
 *
 * @since 0.1.0
 */

/**
 * How much was cut, for the marker text.
 *
 * @category models
 */
export interface Cut {
  /** Characters removed from the middle. */
  readonly cutChars: number
  /** Estimated tokens removed (proportional to characters). */
  readonly cutTokens: number
  /** Characters of the original text. */
  readonly totalChars: number
}

/**
 * Builds the marker put between head and tail.
 *
 * @category models
 */
export type Marker = (cut: Cut) => string

/**
 * The default marker: `[… 12345 characters (~3086 tokens) cut …]` plus the
 * entry it came from, so a reader (or the model) knows the text is partial
 * and where the full version lives.
 *
 * @category constructors
 */
export const marker =
  (label: string, entryId: string): Marker =>
  (cut) =>
    `\n[… ${label}: ${cut.cutChars} of ${cut.totalChars} characters (~${cut.cutTokens} tokens) cut from the middle; full text in transcript entry ${entryId} …]\n`

/**
 * Keeps `keepChars` characters of `text` (`headShare` of them from the start,
 * the rest from the end) around the marker. Returns the text unchanged when
 * it is not longer than `keepChars`. Never splits a UTF-16 surrogate pair.
 *
 * @param keepChars characters kept in total (head + tail), ≥ 0
 * @param headShare share of `keepChars` taken from the head, 0..1
 * @param totalTokens the text's token count, used to estimate the tokens cut
 * @category combinators
 */
export const truncate = (
  text: string,
  keepChars: number,
  headShare: number,
  totalTokens: number,
  makeMarker: Marker
): string => {
  if (text.length <= keepChars) return text
  const keep = Math.max(0, Math.floor(keepChars))
  let headEnd = Math.floor(keep * Math.min(1, Math.max(0, headShare)))
  let tailStart = text.length - (keep - headEnd)
  if (headEnd > 0 && isHighSurrogate(text.charCodeAt(headEnd - 1))) headEnd--
  if (tailStart < text.length && isLowSurrogate(text.charCodeAt(tailStart))) tailStart++
  const cutChars = tailStart - headEnd
  const cutTokens = text.length === 0 ? 0 : Math.round((totalTokens * cutChars) / text.length)
  return `${text.slice(0, headEnd)}${makeMarker({ cutChars, cutTokens, totalChars: text.length })}${text.slice(tailStart)}`
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff

/**
 * Truncates `text` so that its token count is at most `maxTokens`
 * (including the marker), using `count` to check. The first guess keeps
 * characters in proportion to tokens; up to three corrections shrink it when
 * the text is denser at the ends. Returns `undefined` when the text already
 * fits.
 *
 * @param maxTokens the largest token count of the result
 * @category combinators
 */
export const truncateToTokens = (
  text: string,
  maxTokens: number,
  headShare: number,
  count: (text: string) => number,
  makeMarker: Marker,
  knownTokens?: number
): { readonly text: string; readonly tokens: number; readonly originalTokens: number } | undefined => {
  const originalTokens = knownTokens ?? count(text)
  if (originalTokens <= maxTokens) return undefined
  const markerTokens = count(makeMarker({ cutChars: text.length, cutTokens: originalTokens, totalChars: text.length }))
  let budget = Math.max(0, maxTokens - markerTokens)
  let keepChars = Math.floor((text.length * budget) / originalTokens)
  let result = truncate(text, keepChars, headShare, originalTokens, makeMarker)
  let tokens = count(result)
  for (let attempt = 0; attempt < 3 && tokens > maxTokens && keepChars > 0; attempt++) {
    budget = Math.max(0, budget - (tokens - maxTokens))
    keepChars = Math.floor(keepChars * Math.max(0, Math.min(0.95, budget / Math.max(1, tokens - markerTokens))))
    result = truncate(text, keepChars, headShare, originalTokens, makeMarker)
    tokens = count(result)
  }
  if (tokens > maxTokens) {
    result = truncate(text, 0, headShare, originalTokens, makeMarker)
    tokens = count(result)
  }
  return { text: result, tokens, originalTokens }
}
