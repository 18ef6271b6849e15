/**
 * Bounded chunks of text, so counting tokens stays linear in the text's
 * length and never overflows the stack.
 *
 * Why: BPE pre-tokenizer regexes (tiktoken's `o200k_base` pattern, used by
 * `gpt-tokenizer` and by our estimator) backtrack over one piece, and BPE
 * merging in `gpt-tokenizer` is quadratic in the length of a piece. One
 * unbroken run (a 6 MiB base64 blob, 256 KiB of one letter) made V8 throw
 * `RangeError: Maximum call stack size exceeded` or took minutes
 * (issue #12). Cutting text into chunks of at most {@link maxChunkChars}
 * bounds both.
 *
 * Where it cuts: preferably just before a single space that sits between
 * two non-whitespace characters. Every o200k / cl100k pre-tokenizer piece
 * starts there (a space never continues a piece; it only prefixes the next
 * word or punctuation run), and BPE never merges across pieces, so such a
 * cut leaves the exact count unchanged. A chunk with no such space (a long
 * run without whitespace) is cut hard at {@link maxChunkChars}, never inside
 * a surrogate pair. Error bound of a hard cut: the piece it splits is
 * encoded as two; measured on `o200k_base` (`test/TextChunks.test.ts`) a
 * hard cut changes the count by at most 1 token (0 on runs of one letter,
 * ≤ 0.25 on average on random base64), i.e. at most 1 token per
 * {@link maxChunkChars} characters of unbroken run: ≤ 0.15% of a base64
 * run's count.
 *
 * @since 0.2.0
 */

/**
 * Longest chunk handed to a tokenizer, in UTF-16 code units: 1,024. Chosen
 * by measuring `gpt-tokenizer` on runs of one letter and on random base64:
 * per-character cost is flat up to about 1 KiB and grows beyond it.
 *
 * @category constants
 */
export const maxChunkChars = 1024

const space = 32

const isWhitespace = (code: number): boolean =>
  code === 32 || code === 9 || code === 10 || code === 13 || code === 11 || code === 12

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff

/** End of the chunk starting at `start`: a safe cut point, or a hard cut. */
const chunkEnd = (text: string, start: number, limit: number): { readonly end: number; readonly hard: boolean } => {
  const hardEnd = start + limit
  if (hardEnd >= text.length) return { end: text.length, hard: false }
  for (let index = hardEnd; index > start + 1; index--) {
    if (
      text.charCodeAt(index) === space &&
      !isWhitespace(text.charCodeAt(index - 1)) &&
      index + 1 < text.length &&
      !isWhitespace(text.charCodeAt(index + 1))
    ) {
      return { end: index, hard: false }
    }
  }
  return { end: isHighSurrogate(text.charCodeAt(hardEnd - 1)) ? hardEnd - 1 : hardEnd, hard: true }
}

/**
 * Calls `visit` with consecutive chunks of `text` (each ≤ `limit` code
 * units, concatenating back to `text`), and returns how many cuts were hard
 * (inside a piece; see the module comment for the error bound). Linear in
 * `text.length`: a backward search for a space scans at most `limit` code
 * units, and the stretch it scanned in vain lies inside the next chunk, so
 * each code unit is scanned at most twice.
 *
 * @category chunking
 */
export const forEachChunk = (text: string, visit: (chunk: string) => void, limit: number = maxChunkChars): number => {
  if (text.length <= limit) {
    if (text.length > 0) visit(text)
    return 0
  }
  let hardCuts = 0
  let start = 0
  while (start < text.length) {
    const { end, hard } = chunkEnd(text, start, limit)
    if (hard) hardCuts++
    visit(text.slice(start, end))
    start = end
  }
  return hardCuts
}

/**
 * Sum of `count` over the chunks of `text` ({@link forEachChunk}).
 *
 * @category chunking
 */
export const sumOverChunks = (
  text: string,
  count: (chunk: string) => number,
  limit: number = maxChunkChars
): number => {
  let total = 0
  forEachChunk(
    text,
    (chunk) => {
      total += count(chunk)
    },
    limit
  )
  return total
}
