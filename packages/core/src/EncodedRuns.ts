/**
 * Runs of text that look like hashes or encoded data (hex digests, base64
 * payloads, signatures), which the estimator costs by length: BPE
 * vocabularies hold almost none of their fragments (`Estimator.ts`).
 *
 * A candidate run is a maximal run of ≥ 16 characters of the base64/hex
 * alphabets (`[A-Za-z0-9+/=_-]`), found by a scan (a `{16,}` regex overflows
 * V8's stack on a multi-MiB run); {@link kindOf} says whether it looks
 * encoded.
 *
 * @since 0.6.0
 */

/**
 * Shortest candidate run, in UTF-16 code units: 16, the shortest hex digest
 * length the hex rate was calibrated on (`bench/calibrate-estimator.ts`:
 * 16, 32, 40 and 64 hex characters).
 *
 * @category constants
 */
export const minRunChars = 16

const isEncodedChar = (code: number): boolean =>
  (code >= 48 && code <= 57) ||
  (code >= 65 && code <= 90) ||
  (code >= 97 && code <= 122) ||
  code === 43 ||
  code === 47 ||
  code === 61 ||
  code === 95 ||
  code === 45

/**
 * Calls `visit` with the span `[start, end)` of every maximal run of at least
 * {@link minRunChars} characters of `[A-Za-z0-9+/=_-]` in `text`, in order.
 * Reads every 16th character until one is in the alphabet — a run that long
 * covers one of them — then the run around it, so prose and code are not read
 * character by character.
 *
 * @category runs
 */
export const forEachLongRun = (text: string, visit: (start: number, end: number) => void): void => {
  // Invariant: text[index - 1] is not in the alphabet, so no run crosses index.
  let index = 0
  while (index + minRunChars <= text.length) {
    const probe = index + minRunChars - 1
    if (!isEncodedChar(text.charCodeAt(probe))) {
      index = probe + 1
      continue
    }
    let start = probe
    while (start > index && isEncodedChar(text.charCodeAt(start - 1))) start--
    let end = probe + 1
    while (end < text.length && isEncodedChar(text.charCodeAt(end))) end++
    if (end - start >= minRunChars) visit(start, end)
    index = end + 1
  }
}

const hexRun = /^[0-9a-fA-F]+$/

const charClass = (code: number): number =>
  code >= 48 && code <= 57 ? 0 : code >= 65 && code <= 90 ? 1 : code >= 97 && code <= 122 ? 2 : 3

/**
 * Whether a run of the base64/hex alphabet looks like encoded data rather
 * than a word, identifier or path: hex of ≥ 16 chars with a digit and a
 * letter, or ≥ 24 chars mixing digits, upper and lower case that switch
 * character class at least every third character (random text switches
 * about every other character; `camelCase` words and paths rarely do).
 *
 * @category runs
 */
export const kindOf = (run: string): "hex" | "base64" | undefined => {
  if (hexRun.test(run)) return /[0-9]/.test(run) && /[a-fA-F]/.test(run) ? "hex" : undefined
  if (run.length < 24) return undefined
  let switches = 0
  let seen = 0
  let previous = charClass(run.charCodeAt(0))
  for (let index = 1; index < run.length; index++) {
    const current = charClass(run.charCodeAt(index))
    seen |= 1 << current
    if (current !== previous) switches++
    previous = current
  }
  return (seen & 7) === 7 && switches * 3 >= run.length ? "base64" : undefined
}
