import { isDeepStrictEqual } from "node:util"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Estimator from "../src/Estimator.ts"
import * as O200kPieces from "../src/O200kPieces.ts"

type Segment = readonly [kind: Estimator.SegmentKind, piece: string]

/** The reference: the o200k regex's pieces, classified by `Estimator.classify`. */
const regexSegments = (text: string): Array<Segment> => {
  const segments: Array<Segment> = []
  O200kPieces.forEachRegexPiece(text, (piece) => segments.push([Estimator.classify(piece), piece]))
  return segments
}

/** The scanner's segments; the stretches it hands back go through the regex, as the estimator does. */
const scannedSegments = (text: string): { segments: Array<Segment>; regexChars: number } => {
  const segments: Array<Segment> = []
  let regexChars = 0
  O200kPieces.forEachPiece(
    text,
    (kind, source, start, end) => segments.push([kind, source.slice(start, end)]),
    (stretch) => {
      regexChars += stretch.length
      segments.push(...regexSegments(stretch))
    }
  )
  return { segments, regexChars }
}

const chars = (alphabet: string) => fc.constantFrom(...alphabet)
const asciiPunctuation = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~"
const fragment = fc.oneof(
  { weight: 6, arbitrary: fc.stringMatching(/^[A-Za-z]{1,10}$/) },
  { weight: 2, arbitrary: fc.stringMatching(/^[A-Z][a-z]{0,8}$/) },
  {
    weight: 3,
    arbitrary: fc.constantFrom(
      ..."'s 't 're 've 'm 'll 'd 'S 'T 'RE 'Re 'rE 'VE 'vE 'M 'LL 'lL 'D ' 'x 'l 'r 'v 'e".split(" ")
    )
  },
  { weight: 3, arbitrary: fc.stringMatching(/^[0-9]{1,8}$/) },
  { weight: 6, arbitrary: fc.string({ unit: chars(" \t\n\r\v\f"), minLength: 1, maxLength: 6 }) },
  { weight: 4, arbitrary: fc.constantFrom(" ", " ", "  ", "\n", "\n\n", "\r\n", " \n ", "\t") },
  { weight: 4, arbitrary: fc.string({ unit: chars(asciiPunctuation), minLength: 1, maxLength: 4 }) },
  { weight: 2, arbitrary: fc.constantFrom('{"', '":', '",', '":"', "\\n", "=>", "//", "/*", "*/", "${", "</", "/>") },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9a-f]{16,40}$/) },
  { weight: 1, arbitrary: fc.stringMatching(/^[A-Za-z0-9+/=_-]{16,48}$/) },
  // any ASCII, control characters included
  {
    weight: 2,
    arbitrary: fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)) })
  },
  {
    weight: 2,
    arbitrary: fc.constantFrom(
      // letters, marks and digits of other scripts (regex stretches)
      ..."é ü ß Ç 日本語 中 한 カ Привет ʰ \u0301 ǅ ² ½ ٣ 𝐀 \ud800 \udc00".split(" "),
      // symbols of the CJK scripts (CJK radicals, Kanbun): not letters, but a piece holding one is `cjk`
      ..."⺀ ⺁ ㆐ 〆 ・".split(" "),
      // non-ASCII whitespace, punctuation and symbols (scanned)
      ..."\u00a0 \u3000 \u2028 \u2029 \ufeff \u0085 \u00ad \u200b — → ─ ━ │ … “ ’ ✓ × ▼ 😀".split(" ")
    )
  },
  { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 3 }) }
)
const text = fc.array(fragment, { maxLength: 60 }).map((parts) => parts.join(""))

describe("O200kPieces.forEachPiece", () => {
  it("property: the same pieces with the same classes, in the same order, as the regex and Estimator.classify", () => {
    fc.assert(
      fc.property(text, (value) => {
        expect(scannedSegments(value).segments).toEqual(regexSegments(value))
      }),
      { numRuns: 3000 }
    )
  })

  it("property: ASCII-only text never goes to the regex", () => {
    fc.assert(
      fc.property(text, (value) => {
        // biome-ignore lint/suspicious/noControlCharactersInRegex: ASCII means code units 0-127
        const ascii = value.replace(/[^\x00-\x7f]/g, "")
        expect(scannedSegments(ascii).regexChars).toBe(0)
      })
    )
  })

  it("splits as the o200k pattern does (whitespace before a word, contractions, digit groups, slashes after punctuation)", () => {
    const pieces = (value: string) => scannedSegments(value).segments.map(([, piece]) => piece)
    expect(pieces("   foo")).toEqual(["  ", " foo"])
    expect(pieces("\n\n  bar\n")).toEqual(["\n\n", " ", " bar", "\n"])
    expect(pieces("I'LL we'Re don't'")).toEqual(["I'LL", " we'Re", " don't", "'"])
    expect(pieces("1234567 x")).toEqual(["123", "456", "7", " x"])
    expect(pieces("((foo). */\n/bar")).toEqual(["((", "foo", ").", " */\n/", "bar"])
    expect(pieces("\tfoo\t\t1")).toEqual(["\tfoo", "\t", "\t", "1"])
    expect(pieces("a → b")).toEqual(["a", " →", " b"])
  })

  it("classifies as Estimator.classify does, where it differs from the look of the piece", () => {
    const kinds = (value: string) => scannedSegments(value).segments.map(([kind]) => kind)
    // a space, punctuation, then a newline starts and ends with whitespace
    expect(kinds(" .\n")).toEqual(["newline"])
    // \v or \f at either end of a whitespace piece
    expect(kinds("\v")).toEqual(["punctuation"])
    expect(kinds(" \v ")).toEqual(["whitespace"])
    expect(kinds(" Foo FOO foo\tBar")).toEqual(["capitalizedSpaced", "upper", "lowerSpaced", "capitalized"])
  })

  it("scans non-ASCII whitespace, punctuation and symbols itself (arrows, box drawing, dashes, quotes)", () => {
    const text = "a → b\n│ ─── “c” — d\u00a0e ✓ done…"
    const { segments, regexChars } = scannedSegments(text)
    expect(regexChars).toBe(0)
    expect(segments).toEqual(regexSegments(text))
  })

  it("every BMP code unit, in words, runs and whitespace around it: the regex's pieces and classes", () => {
    const mismatches: Array<string> = []
    for (let code = 0; code <= 0xffff; code++) {
      const unit = String.fromCharCode(code)
      const text = `a${unit}b ${unit}${unit}Foo  ${unit} 12${unit}'s\n${unit}`
      if (!isDeepStrictEqual(scannedSegments(text).segments, regexSegments(text))) mismatches.push(code.toString(16))
    }
    expect(mismatches).toEqual([])
  })

  it("hands stretches with non-ASCII letters to the regex, from the piece boundary before to the one after", () => {
    const handed: Array<string> = []
    O200kPieces.forEachPiece(
      "one two café three four",
      () => {},
      (stretch) => handed.push(stretch)
    )
    expect(handed).toEqual([" café"])
  })
})
