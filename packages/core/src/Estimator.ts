/**
 * A calibrated token estimator for model families without a public
 * tokenizer (Anthropic Claude 3+, Gemini, most open-weight models served
 * behind APIs).
 *
 * How it works: text is split with the `o200k_base` pre-tokenizer pattern
 * (the regex of OpenAI's tiktoken, `tiktoken/core/src/openai_public.py`,
 * re-stated below) into pieces — words with their leading space or
 * punctuation, runs of up to three digits, punctuation runs, whitespace.
 * A BPE tokenizer never merges across pieces, so the count is a sum over
 * pieces, and the cost of a piece depends mostly on its class and length.
 * Runs that look like hashes or encoded data (hex, base64, signatures) are
 * costed separately by length because BPE vocabularies hold almost none of
 * their fragments, and CJK ideographs / kana / hangul per character.
 *
 * Calibration: the per-class, per-length costs in {@link calibration} are the
 * mean exact `o200k_base` token counts of pieces of that class and length in
 * the real transcripts of `/work/shared/transcripts` (pi, Claude Code,
 * SWE-agent), measured with `gpt-tokenizer` — see `bench/measure.bench.ts`,
 * which prints the resulting error per transcript next to `chars / 4`.
 * A family factor then scales o200k-equivalent counts to the family
 * (see {@link familyFactors}).
 *
 * @since 0.1.0
 */
import type { Tokenizer } from "./Tokenizer.ts"

/**
 * Families the estimator is tuned for.
 *
 * @category models
 */
export type Family = "anthropic" | "gemini" | "generic"

/**
 * Calibration constants. Arrays are indexed by piece length in UTF-16 code
 * units (index 0 unused); lengths beyond the table continue linearly with
 * the `...PerExtraChar` slope.
 *
 * @category constants
 */
export const calibration = {
  /** Mean o200k tokens of a letter piece (a word, optionally with one leading space/punctuation) by length. */
  letterPieceTokens: [0, 1, 1, 1, 1, 1, 1.05, 1.1, 1.2, 1.35, 1.5, 1.7, 1.9, 2.1, 2.3, 2.5, 2.7],
  letterPieceTokensPerExtraChar: 0.22,
  /** Mean o200k tokens of a punctuation run (` ?[^\s\p{L}\p{N}]+[\r\n/]*`) by length. */
  punctuationPieceTokens: [0, 1, 1, 1.3, 1.6, 1.9, 2.2, 2.5, 2.8],
  punctuationPieceTokensPerExtraChar: 0.3,
  /** Mean o200k tokens of a whitespace piece by length (indentation runs merge). */
  whitespacePieceTokens: [0, 1, 1, 1, 1, 1, 1, 1, 1, 1.1, 1.2, 1.3, 1.4, 1.5, 1.6, 1.7, 1.8],
  whitespacePieceTokensPerExtraChar: 0.06,
  /** Tokens per CJK ideograph / kana / hangul syllable. */
  cjkTokensPerChar: 1,
  /** Tokens per character of a hexadecimal run of ≥ 16 characters (git hashes, digests). */
  hexTokensPerChar: 0.55,
  /** Tokens per character of a base64-like run of ≥ 24 characters (signatures, encoded data, ids). */
  base64TokensPerChar: 0.45
} as const

/**
 * Multipliers from o200k-equivalent counts to a family's tokenizer.
 *
 * - `anthropic`: Claude's tokenizer is not public; the factor comes from the
 *   provider-reported `usage` of the claude-opus-4-5 turns of the pi
 *   transcript (difference in reported input tokens between consecutive
 *   requests vs the o200k count of what was appended between them).
 * - `gemini`, `generic`: 1 (no reported usage to calibrate against);
 *   anchoring on reported usage corrects the drift at run time.
 *
 * @category constants
 */
export const familyFactors: Record<Family, number> = {
  anthropic: 1,
  gemini: 1,
  generic: 1
}

// The o200k_base pre-tokenizer pattern (tiktoken openai_public.py), with the
// case-insensitive contraction group spelled out (JS has no inline flags).
const contraction = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"
const piecePattern = new RegExp(
  [
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+${contraction}`,
    `[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*${contraction}`,
    "\\p{N}{1,3}",
    " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
    "\\s*[\\r\\n]+",
    "\\s+(?!\\S)",
    "\\s+"
  ].join("|"),
  "gu"
)

// Runs of encoded data: long tokens of the base64/hex alphabets.
const encodedRunPattern = /[A-Za-z0-9+/=_-]{16,}/g
const hexRun = /^[0-9a-fA-F]+$/
const cjkPattern = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu

const fromTable = (table: ReadonlyArray<number>, perExtraChar: number, length: number): number =>
  length < table.length ? table[length]! : table[table.length - 1]! + (length - table.length + 1) * perExtraChar

/**
 * Whether a run of the base64/hex alphabet looks like encoded data rather
 * than a word or identifier: hex of ≥ 16 chars with a digit, or ≥ 24 chars
 * mixing digits, upper and lower case.
 */
const encodedKind = (run: string): "hex" | "base64" | undefined => {
  if (hexRun.test(run)) return /[0-9]/.test(run) && /[a-fA-F]/.test(run) ? "hex" : undefined
  if (run.length < 24) return undefined
  return /[0-9]/.test(run) && /[A-Z]/.test(run) && /[a-z]/.test(run) ? "base64" : undefined
}

const countPieces = (text: string): number => {
  let tokens = 0
  piecePattern.lastIndex = 0
  for (let match = piecePattern.exec(text); match !== null; match = piecePattern.exec(text)) {
    const piece = match[0]
    const first = piece.charCodeAt(0)
    const last = piece.charCodeAt(piece.length - 1)
    if (isDigit(last) && (piece.length <= 3 || isDigit(first))) {
      tokens += 1
    } else if (isSpace(last) && isSpace(first)) {
      tokens += fromTable(
        calibration.whitespacePieceTokens,
        calibration.whitespacePieceTokensPerExtraChar,
        piece.length
      )
    } else if (isLetterPiece(piece)) {
      const cjk = piece.match(cjkPattern)?.length ?? 0
      tokens +=
        cjk > 0
          ? cjk * calibration.cjkTokensPerChar +
            (piece.length > cjk
              ? fromTable(
                  calibration.letterPieceTokens,
                  calibration.letterPieceTokensPerExtraChar,
                  piece.length - cjk
                ) - 1
              : 0)
          : fromTable(calibration.letterPieceTokens, calibration.letterPieceTokensPerExtraChar, piece.length)
    } else {
      tokens += fromTable(
        calibration.punctuationPieceTokens,
        calibration.punctuationPieceTokensPerExtraChar,
        piece.length
      )
    }
  }
  return tokens
}

const isDigit = (code: number): boolean => code >= 48 && code <= 57
const isSpace = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13
// Only letter pieces contain letters (the other alternatives exclude \p{L}).
const letter = /\p{L}|\p{M}/u
const isLetterPiece = (piece: string): boolean => letter.test(piece)

/**
 * Estimated o200k-equivalent tokens of `text` (before the family factor).
 *
 * @category estimation
 */
export const estimateO200k = (text: string): number => {
  if (text.length === 0) return 0
  let tokens = 0
  let cursor = 0
  encodedRunPattern.lastIndex = 0
  for (let match = encodedRunPattern.exec(text); match !== null; match = encodedRunPattern.exec(text)) {
    const kind = encodedKind(match[0])
    if (kind === undefined) continue
    if (match.index > cursor) tokens += countPieces(text.slice(cursor, match.index))
    tokens += match[0].length * (kind === "hex" ? calibration.hexTokensPerChar : calibration.base64TokensPerChar)
    cursor = match.index + match[0].length
  }
  if (cursor < text.length) tokens += countPieces(cursor === 0 ? text : text.slice(cursor))
  return tokens
}

/**
 * Estimated tokens of `text` for a family, rounded up to a whole token.
 *
 * @category estimation
 */
export const estimate = (text: string, family: Family = "generic"): number =>
  text.length === 0 ? 0 : Math.ceil(estimateO200k(text) * familyFactors[family])

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
