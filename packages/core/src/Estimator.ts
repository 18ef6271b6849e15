/**
 * A calibrated token estimator for model families without a public
 * tokenizer (Anthropic Claude 3+, Gemini, most open-weight models served
 * behind APIs).
 *
 * How it works: text is split with the `o200k_base` pre-tokenizer pattern
 * (the regex of OpenAI's tiktoken, `tiktoken/core/src/openai_public.py`;
 * `O200kPieces.ts` re-states it and scans ASCII text by char codes into the
 * same pieces) into pieces — words with their leading space or
 * punctuation, runs of up to three digits, punctuation runs, whitespace.
 * A BPE tokenizer never merges across pieces, so the count is a sum over
 * pieces, and the cost of a piece depends mostly on its class and length.
 * Runs that look like hashes or encoded data (hex, base64, signatures;
 * `EncodedRuns.ts`) are costed separately by length because BPE
 * vocabularies hold almost none of their fragments, and CJK ideographs /
 * kana / hangul per character.
 *
 * Calibration: the per-class, per-length costs in {@link calibration} are the
 * mean exact `o200k_base` token counts of pieces of that class and length in
 * every text the measurer tokenizes in `/work/shared/transcripts/pi/
 * before-compaction.jsonl` (469K tokens: prose, TypeScript, shell output,
 * JSON arguments, tool ids, thinking signatures), smoothed to be
 * non-decreasing in length; hex and base64 rates come from 16,000
 * deterministic pseudo-random strings of digest/signature lengths plus the
 * real signatures; CJK and Cyrillic rates from the translated Biome READMEs
 * (`@biomejs/biome` README.zh-CN/zh-TW/ja/ru.md). `node
 * bench/calibrate-estimator.ts` recomputes them and prints the error on the
 * held-out transcripts (pi large-session, Claude Code, SWE-agent);
 * `node bench/run.ts measure` prints aggregate and p90 per-message error next
 * to `chars / 4`. A family factor then scales o200k-equivalent counts to the
 * family (see {@link familyFactors}).
 *
 * @since 0.1.0
 */
import * as EncodedRuns from "./EncodedRuns.ts"
import * as O200kPieces from "./O200kPieces.ts"
import * as TextChunks from "./TextChunks.ts"
import type { Tokenizer } from "./Tokenizer.ts"

/**
 * Families the estimator is tuned for.
 *
 * @category models
 */
export type Family = "anthropic" | "gemini" | "generic"

/**
 * Calibration constants (o200k tokens). `tables[kind].byLength[n]` is the
 * mean cost of a piece of `n` UTF-16 code units (index 0 unused); longer
 * pieces cost `max(last entry, n × tailPerChar)`. `perChar` kinds cost
 * `max(1, n × rate)`. Source: see the module comment (`node
 * bench/calibrate-estimator.ts` prints these numbers).
 *
 * @category constants
 */
export const calibration: {
  readonly tables: Partial<
    Record<SegmentKind, { readonly byLength: ReadonlyArray<number>; readonly tailPerChar: number }>
  >
  readonly perChar: Record<"cjk" | "otherScript" | "hex" | "base64", number>
} = {
  tables: {
    digits: { byLength: [0, 1, 1, 1], tailPerChar: 0.34 },
    whitespace: { byLength: [0, 1, 1, 1, 1, 1, 1, 1.02, 1.02, 1.02, 1.02, 1.02], tailPerChar: 0.058 },
    newline: { byLength: [0, 1, 1, 1, 1.02, 1.2, 1.2], tailPerChar: 0.062 },
    lower: { byLength: [0, 1, 1, 1.1, 1.13, 1.14, 1.29, 1.31, 1.31, 1.72, 1.72, 1.86, 2.6, 2.6], tailPerChar: 0.189 },
    lowerSpaced: {
      byLength: [0, 1, 1, 1, 1.02, 1.02, 1.02, 1.02, 1.02, 1.03, 1.07, 1.2, 1.2, 1.2, 1.2, 1.25],
      tailPerChar: 0.074
    },
    capitalized: {
      byLength: [0, 1, 1.03, 1.03, 1.03, 1.03, 1.03, 1.03, 1.03, 1.07, 1.36, 1.36, 1.36],
      tailPerChar: 0.074
    },
    capitalizedSpaced: {
      byLength: [0, 1, 1, 1, 1.01, 1.01, 1.01, 1.02, 1.02, 1.09, 1.18, 1.49, 1.49, 1.49],
      tailPerChar: 0.104
    },
    upper: { byLength: [0, 1, 1, 1.06, 1.16, 1.16, 1.17, 1.44, 2], tailPerChar: 0.297 },
    punctuation: { byLength: [0, 1, 1, 1.12, 1.47, 1.62, 1.98, 2.58, 2.58, 2.58], tailPerChar: 0.062 }
  },
  perChar: { cjk: 0.711, otherScript: 0.229, hex: 0.576, base64: 0.681 }
}

/**
 * Multipliers from o200k-equivalent counts to a family's tokenizer.
 *
 * - `anthropic`: 1.08. Claude's tokenizer is not public; the factor comes
 *   from the provider-reported `usage` of the pi transcripts
 *   (claude-opus-4-5 / claude-sonnet-4-5): consecutive requests of a session
 *   differ by what was appended between them, and Σ Δ(reported input) /
 *   Σ o200k(appended messages) is 1.060 on `pi/before-compaction.jsonl`
 *   (467 request pairs) and 1.148 on `pi/large-session.jsonl` (435 pairs),
 *   1.083 pooled. Reproduce with `node bench/calibrate-estimator.ts`.
 * - `gemini`, `generic`: 1 (no reported usage to calibrate against);
 *   anchoring on reported usage corrects the drift at run time.
 *
 * @category constants
 */
export const familyFactors: Record<Family, number> = {
  anthropic: 1.08,
  gemini: 1,
  generic: 1
}

const fromTable = (table: ReadonlyArray<number>, tailPerChar: number, length: number): number =>
  length < table.length ? table[length]! : Math.max(table[table.length - 1]!, length * tailPerChar)

/**
 * Segment classes the estimator costs separately.
 *
 * @category models
 */
export type SegmentKind = O200kPieces.ScannedKind | "otherScript" | "cjk" | "hex" | "base64"

const isDigit = (code: number): boolean => code >= 48 && code <= 57
const isSpace = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13
const letter = /\p{L}|\p{M}/u
const latin = /^[^\p{L}\p{M}]?[A-Za-z]+(?:'[A-Za-z]{1,2})?$/u
// Applied to Latin pieces only: an optional leading non-letter, then letters.
const upperStart = /^[^A-Za-z]?[A-Z]/
const upperSecond = /^[^A-Za-z]?[A-Z][A-Z]/

/**
 * The class of one o200k pre-tokenizer piece.
 *
 * @category estimation
 */
export const classify = (piece: string): SegmentKind => {
  const first = piece.charCodeAt(0)
  const last = piece.charCodeAt(piece.length - 1)
  if (isDigit(first) && isDigit(last)) return "digits"
  if (isSpace(first) && isSpace(last)) return piece.includes("\n") || piece.includes("\r") ? "newline" : "whitespace"
  if (!letter.test(piece)) return "punctuation"
  if (O200kPieces.cjkScript.test(piece)) return "cjk"
  if (!latin.test(piece)) return "otherScript"
  const spaced = first === 32
  if (!upperStart.test(piece)) return spaced ? "lowerSpaced" : "lower"
  if (upperSecond.test(piece)) return "upper"
  return spaced ? "capitalizedSpaced" : "capitalized"
}

/** Receives a segment as its class and its span `text[start, end)`. */
type SpanVisit = (kind: SegmentKind, text: string, start: number, end: number) => void

/** {@link forEachSegment} by spans, so the estimate makes no substrings. */
const forEachSpan = (text: string, visit: SpanVisit): void => {
  // Pre-tokenizer pieces within bounded chunks: the pattern backtracks over
  // one piece, so an unbounded run would overflow the stack (TextChunks.ts).
  // ASCII stretches are scanned by char codes, the rest by the regex
  // (O200kPieces.ts: the same pieces, faster).
  const regexPieces = (stretch: string): void =>
    O200kPieces.forEachRegexPiece(stretch, (piece) => visit(classify(piece), piece, 0, piece.length))
  const pieces = (slice: string): void =>
    void TextChunks.forEachChunk(slice, (chunk) => O200kPieces.forEachPiece(chunk, visit, regexPieces))
  let cursor = 0
  EncodedRuns.forEachLongRun(text, (runStart, runEnd) => {
    const run = text.slice(runStart, runEnd)
    const kind = EncodedRuns.kindOf(run)
    if (kind === undefined) return
    if (runStart > cursor) pieces(text.slice(cursor, runStart))
    visit(kind, run, 0, run.length)
    cursor = runEnd
  })
  if (cursor < text.length) pieces(cursor === 0 ? text : text.slice(cursor))
}

/**
 * Calls `visit` for every segment of `text`: encoded runs (hex / base64)
 * whole, everything else as o200k pre-tokenizer pieces.
 *
 * @category estimation
 */
export const forEachSegment = (text: string, visit: (kind: SegmentKind, segment: string) => void): void =>
  forEachSpan(text, (kind, source, start, end) =>
    visit(kind, start === 0 && end === source.length ? source : source.slice(start, end))
  )

/** Estimated o200k tokens of a segment of `kind` and `length` UTF-16 code units. */
const tokensOfLength = (kind: SegmentKind, length: number): number => {
  const table = calibration.tables[kind]
  if (table === undefined) {
    const perChar = calibration.perChar[kind as keyof typeof calibration.perChar]
    return Math.max(1, length * perChar)
  }
  return fromTable(table.byLength, table.tailPerChar, length)
}

/**
 * Estimated o200k tokens of one segment.
 *
 * @category estimation
 */
export const segmentTokens = (kind: SegmentKind, segment: string): number => tokensOfLength(kind, segment.length)

/**
 * Estimated o200k-equivalent tokens of `text` (before the family factor).
 *
 * @category estimation
 */
export const estimateO200k = (text: string): number => {
  if (text.length === 0) return 0
  let tokens = 0
  forEachSpan(text, (kind, _text, start, end) => {
    tokens += tokensOfLength(kind, end - start)
  })
  return tokens
}

/**
 * Estimated tokens of `text` for a family, rounded to a whole token (at
 * least 1 for non-empty text; rounding to nearest keeps sums unbiased).
 *
 * @category estimation
 */
export const estimate = (text: string, family: Family = "generic"): number =>
  text.length === 0 ? 0 : Math.max(1, Math.round(estimateO200k(text) * familyFactors[family]))

/**
 * The `chars / 4` heuristic, for comparison in benchmarks and tests
 * (the rule of thumb in OpenAI's "What are tokens and how to count them").
 *
 * @category estimation
 */
export const charsPerFour = (text: string): number => Math.ceil(text.length / 4)

/**
 * A {@link Tokenizer} that estimates for a family (`estimate:<family>`).
 *
 * @category constructors
 */
export const make = (family: Family): Tokenizer => ({
  name: `estimate:${family}`,
  method: "estimate",
  count: (text) => estimate(text, family)
})
