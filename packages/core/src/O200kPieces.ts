/**
 * The `o200k_base` pre-tokenizer: text split into the pieces a BPE tokenizer
 * encodes separately (words with their leading space or punctuation, runs of
 * up to three digits, punctuation runs, whitespace), for the estimator.
 *
 * Source: the pattern of OpenAI's tiktoken (`tiktoken/core/src/
 * openai_public.py`, `o200k_base`), re-stated as {@link pattern}.
 *
 * Why a scanner beside the regex: the estimator runs on every new message of
 * every step, and the regex loop (`exec` per piece, then a few unicode-property
 * tests per piece to classify it) was most of its time (issue #13: a CPU
 * profile of the step bench, weighted by the steps that append large tool
 * outputs, put the estimator at about half of a 1K-message step).
 * {@link forEachPiece} emulates the pattern by char codes — on ASCII (the
 * bulk of agent transcripts: code, JSON, shell output, English) and on
 * non-ASCII whitespace, punctuation and symbols (box drawing, arrows, dashes,
 * quotes), which the pattern treats like ASCII ones — and classifies the
 * pieces as it goes; stretches holding letters, digits or marks of other
 * scripts, CJK-script symbols, or surrogates, go to the regex. It yields
 * exactly the regex's pieces and `Estimator.classify`'s classes
 * (property-tested against {@link forEachRegexPiece} in
 * `test/O200kPieces.test.ts`, and every BMP code unit in several contexts),
 * so estimates do not change.
 *
 * How the pattern reads on such text (alternatives in order, first match
 * wins): `P? [A-Z]* [a-z]* contraction?` with at least one letter, where `P`
 * is one character that is not a letter, digit, CR or LF (so a space, tab,
 * or punctuation prefixes a word); `[0-9]{1,3}`; `' '? punct+ [\r\n/]*`;
 * a whitespace run up to and including its last CR/LF; else a whitespace run
 * less its last character when a non-space follows (that character prefixes
 * the next piece), or the whole run at the end or when it is one character.
 *
 * @since 0.6.0
 */

/**
 * Classes of the pieces {@link forEachPiece} scans (the estimator's segment
 * kinds such text can produce; `Estimator.classify` gives the same class to
 * the same piece).
 *
 * @category models
 */
export type ScannedKind =
  | "digits"
  | "whitespace"
  | "newline"
  | "lower"
  | "lowerSpaced"
  | "capitalized"
  | "capitalizedSpaced"
  | "upper"
  | "punctuation"

// The o200k_base pattern with the case-insensitive contraction group spelled
// out (JS has no inline flags).
const contraction = "(?:'[sS]|'[tT]|'[rR][eE]|'[vV][eE]|'[mM]|'[lL][lL]|'[dD])?"

/**
 * The `o200k_base` pre-tokenizer pattern (tiktoken `openai_public.py`).
 *
 * @category constants
 */
export const pattern = new RegExp(
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

/**
 * Calls `visit` for every piece of `text` found by {@link pattern} — the
 * reference {@link forEachPiece} is held to. `text` should be a bounded chunk
 * (`TextChunks`): the pattern backtracks over one piece.
 *
 * @category pieces
 */
export const forEachRegexPiece = (text: string, visit: (piece: string) => void): void => {
  pattern.lastIndex = 0
  for (let match = pattern.exec(text); match !== null; match = pattern.exec(text)) visit(match[0])
}

// Character classes of UTF-16 code units. Non-ASCII units are learnt on
// first sight: whitespace, punctuation / symbols (which the pattern treats
// like ASCII ones), or COMPLEX — letters, digits and marks of other scripts,
// CJK-script symbols, and surrogates, whose stretches go to the regex.
const UNKNOWN = 0
const UPPER = 1
const LOWER = 2
const DIGIT = 3
const NEWLINE = 4 // \r \n
const BLANK = 5 // the other \s characters: \t \v \f, space, and non-ASCII ones (U+00A0, U+3000, …)
const OTHER = 6 // punctuation, symbols, control characters
const COMPLEX = 7

const classes = new Uint8Array(0x10000)
classes.fill(OTHER, 0, 128)
classes.fill(UPPER, 65, 91)
classes.fill(LOWER, 97, 123)
classes.fill(DIGIT, 48, 58)
classes[10] = NEWLINE
classes[13] = NEWLINE
for (const code of [9, 11, 12, 32]) classes[code] = BLANK

/**
 * Characters of the CJK scripts (Han, Hiragana, Katakana, Hangul): a piece
 * holding one is the estimator's `cjk` class (`Estimator.classify`), whether
 * the character is a letter or a symbol (CJK radicals, Kanbun marks).
 *
 * @category constants
 */
export const cjkScript = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u

const unicodeSpace = /\s/
// Units the scanner leaves to the regex: letters, digits and marks (the
// pattern's word and digit classes), and CJK-script symbols (a piece holding
// one is classed `cjk`, which the scanner does not produce).
const unicodeWordChar = /[\p{L}\p{N}\p{M}]/u

const learn = (code: number): number => {
  const character = String.fromCharCode(code)
  const kind =
    code >= 0xd800 && code <= 0xdfff
      ? COMPLEX
      : unicodeSpace.test(character)
        ? BLANK
        : unicodeWordChar.test(character) || cjkScript.test(character)
          ? COMPLEX
          : OTHER
  classes[code] = kind
  return kind
}

/** The class of a UTF-16 code unit. */
const classOf = (code: number): number => {
  const kind = classes[code]!
  return kind === UNKNOWN ? learn(code) : kind
}

const SPACE = 32
const APOSTROPHE = 39
const SLASH = 47

/** End of the contraction (`'s 't 're 've 'm 'll 'd`, any case) at `index`, or `index`. */
const contractionEnd = (text: string, index: number, end: number): number => {
  if (index + 1 >= end || text.charCodeAt(index) !== APOSTROPHE) return index
  const first = text.charCodeAt(index + 1) | 0x20
  if (first === 115 || first === 116 || first === 109 || first === 100) return index + 2 // s t m d
  if (index + 2 >= end) return index
  const second = text.charCodeAt(index + 2) | 0x20
  if ((first === 114 || first === 118) && second === 101) return index + 3 // re ve
  return first === 108 && second === 108 ? index + 3 : index // ll
}

/** Receives a piece as its class and its span `text[start, end)` (no substring is made). */
type Visit = (kind: ScannedKind, text: string, start: number, end: number) => void

/** The word piece starting at `start` whose letters start at `letters`; returns its end. */
const word = (text: string, start: number, letters: number, end: number, visit: Visit): number => {
  let index = letters
  while (index < end && classOf(text.charCodeAt(index)) === UPPER) index++
  const upper = index - letters
  while (index < end && classOf(text.charCodeAt(index)) === LOWER) index++
  index = contractionEnd(text, index, end)
  const spaced = text.charCodeAt(start) === SPACE
  visit(
    upper === 0
      ? spaced
        ? "lowerSpaced"
        : "lower"
      : upper > 1
        ? "upper"
        : spaced
          ? "capitalizedSpaced"
          : "capitalized",
    text,
    start,
    index
  )
  return index
}

/** The punctuation piece (` ?punct+[\r\n/]*`) starting at `start`; returns its end. */
const punctuation = (text: string, start: number, end: number, visit: Visit): number => {
  let index = text.charCodeAt(start) === SPACE ? start + 1 : start
  while (index < end && classOf(text.charCodeAt(index)) === OTHER) index++
  while (index < end && (classOf(text.charCodeAt(index)) === NEWLINE || text.charCodeAt(index) === SLASH)) index++
  const last = classOf(text.charCodeAt(index - 1))
  // Estimator.classify: a piece that starts and ends with a space/newline is whitespace-like.
  visit(text.charCodeAt(start) === SPACE && last === NEWLINE ? "newline" : "punctuation", text, start, index)
  return index
}

const isSpaceLike = (code: number): boolean => code === 32 || code === 9 || code === 10 || code === 13

/** The whitespace piece starting at `start`; returns its end. */
const whitespace = (text: string, start: number, end: number, visit: Visit): number => {
  let runEnd = start
  let lastNewline = -1
  for (; runEnd < end; runEnd++) {
    const kind = classOf(text.charCodeAt(runEnd))
    if (kind === NEWLINE) lastNewline = runEnd
    else if (kind !== BLANK) break
  }
  const pieceEnd = lastNewline >= 0 ? lastNewline + 1 : runEnd === end || runEnd - start === 1 ? runEnd : runEnd - 1
  // Estimator.classify: \v and \f at either end make a piece without letters "punctuation".
  const kind =
    isSpaceLike(text.charCodeAt(start)) && isSpaceLike(text.charCodeAt(pieceEnd - 1))
      ? lastNewline >= 0
        ? "newline"
        : "whitespace"
      : "punctuation"
  visit(kind, text, start, pieceEnd)
  return pieceEnd
}

/** Pieces of `text[start, end)`, which holds no COMPLEX code unit and ends where a piece ends. */
const scanSimple = (text: string, start: number, end: number, visit: Visit): void => {
  let index = start
  while (index < end) {
    const code = text.charCodeAt(index)
    const kind = classOf(code)
    if (kind === UPPER || kind === LOWER) index = word(text, index, index, end, visit)
    else if (kind === DIGIT) {
      let digitsEnd = index + 1
      while (digitsEnd < end && digitsEnd < index + 3 && classOf(text.charCodeAt(digitsEnd)) === DIGIT) digitsEnd++
      visit("digits", text, index, digitsEnd)
      index = digitsEnd
    } else if (kind === NEWLINE) index = whitespace(text, index, end, visit)
    else {
      const next = index + 1 < end ? classOf(text.charCodeAt(index + 1)) : 0
      if (next === UPPER || next === LOWER) index = word(text, index, index + 1, end, visit)
      else if (kind === OTHER || (code === SPACE && next === OTHER)) index = punctuation(text, index, end, visit)
      else index = whitespace(text, index, end, visit)
    }
  }
}

const isNonSpace = (code: number): boolean => {
  const kind = classOf(code)
  return kind !== NEWLINE && kind !== BLANK
}

/**
 * Whether a piece starts at `index` whatever precedes or follows: a single
 * space between two non-whitespace characters (the cut `TextChunks` uses).
 * No piece holds a non-space followed by a space, so none crosses it, and the
 * pieces before it end the same whether text follows it or not.
 */
const isBoundary = (text: string, index: number): boolean =>
  text.charCodeAt(index) === SPACE &&
  index + 1 < text.length &&
  isNonSpace(text.charCodeAt(index - 1)) &&
  isNonSpace(text.charCodeAt(index + 1))

const nonAsciiRun = /[^\0-\x7f]+/g

/** Index of the first COMPLEX code unit of `text` at or after `from`, or -1. */
const nextComplex = (text: string, from: number): number => {
  nonAsciiRun.lastIndex = from
  for (let found = nonAsciiRun.exec(text); found !== null; found = nonAsciiRun.exec(text)) {
    for (let index = found.index; index < nonAsciiRun.lastIndex; index++) {
      if (classOf(text.charCodeAt(index)) === COMPLEX) return index
    }
  }
  return -1
}

/**
 * Calls `visitSimple` with the class and span of each piece of `text` (as
 * {@link pattern} splits it, in order), except that stretches holding
 * letters, digits or marks outside ASCII, CJK-script symbols, or
 * surrogates — from the piece
 * boundary before them to the one after — are handed whole, in their place
 * in the order, to `visitOther` (for the regex). `text` is a chunk of at
 * most a few KiB (`TextChunks`).
 *
 * @category pieces
 */
export const forEachPiece = (text: string, visitSimple: Visit, visitOther: (stretch: string) => void): void => {
  let start = 0
  for (let found = nextComplex(text, 0); found >= 0; found = nextComplex(text, start)) {
    let before = found - 1
    while (before > start && !isBoundary(text, before)) before--
    if (before > start) scanSimple(text, start, before, visitSimple)
    else before = start
    let after = found + 1
    while (after < text.length && !isBoundary(text, after)) after++
    visitOther(text.slice(before, after))
    start = after
  }
  if (start < text.length) scanSimple(text, start, text.length, visitSimple)
}
