/**
 * SubstringIndex (Aho–Corasick): the same answer as `text.includes(pattern)`
 * for every pattern, on hand-picked overlaps and on random strings over a
 * small alphabet (where patterns overlap, nest and share suffixes).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as IdentifierExtraction from "../src/IdentifierExtraction.ts"
import * as SubstringIndex from "../src/SubstringIndex.ts"

const naive = (patterns: ReadonlyArray<string>, text: string): Array<number> =>
  patterns.flatMap((pattern, id) => (text.includes(pattern) ? [id] : []))

describe("SubstringIndex", () => {
  it("finds nested, overlapping and suffix-sharing patterns", () => {
    const patterns = ["he", "she", "his", "hers", "src/app.ts", "app", "ts", "missing", ""]
    const index = SubstringIndex.make(patterns)
    expect(index.foundIn("ushers read src/app.ts")).toEqual([0, 1, 3, 4, 5, 6, 8])
    expect(index.foundIn("")).toEqual([8])
    expect(index.foundIn("this")).toEqual([2, 8])
  })

  it("agrees with String.includes on random patterns and texts", () => {
    const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "/", "."), maxLength: 6 })
    fc.assert(
      fc.property(
        fc.array(word, { maxLength: 12 }),
        fc.string({ unit: fc.constantFrom("a", "b", "c", "/", "."), maxLength: 40 }),
        (patterns, text) => {
          expect(SubstringIndex.make(patterns).foundIn(text)).toEqual(naive(patterns, text))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("reads pieces as their concatenation: a match may span pieces, and the answer is the joined text's", () => {
    expect(
      SubstringIndex.make(["src/app.ts", "b\nc", "x"]).foundIn(["edited src/", "app.ts", "\n", "b", "\n", "c"])
    ).toEqual([0, 1])
    const unit = fc.constantFrom("a", "b", "c", "/", "\n")
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit, maxLength: 5 }), { maxLength: 12 }),
        fc.array(fc.string({ unit, maxLength: 8 }), { maxLength: 8 }),
        (patterns, pieces) => {
          expect(SubstringIndex.make(patterns).foundIn(pieces)).toEqual(naive(patterns, pieces.join("")))
          expect(SubstringIndex.absentFrom(patterns, pieces)).toEqual(
            patterns.filter((pattern) => !pieces.join("").includes(pattern))
          )
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("SubstringIndex.eachIn", () => {
  it("visits each pattern once per piece that holds it, pieces read on their own, in order", () => {
    const visits: Array<[number, number]> = []
    SubstringIndex.make(["ab", "b", "ba", ""]).eachIn(["abab", "xa", "bx"], (id, piece) => visits.push([id, piece]))
    // "ba" of "xa" + "bx" spans two pieces: not found.
    expect(visits.sort((x, y) => x[1] - y[1] || x[0] - y[0])).toEqual([
      [0, 0],
      [1, 0],
      [2, 0],
      [3, 0],
      [3, 1],
      [1, 2],
      [3, 2]
    ])
  })

  it("agrees with String.includes piece by piece on random patterns and pieces", () => {
    const unit = fc.constantFrom("a", "b", "c", "/")
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit, maxLength: 5 }), { maxLength: 12 }),
        fc.array(fc.string({ unit, maxLength: 10 }), { maxLength: 8 }),
        (patterns, pieces) => {
          const seen = pieces.map(() => [] as Array<number>)
          SubstringIndex.make(patterns).eachIn(pieces, (id, piece) => seen[piece]!.push(id))
          expect(seen.map((ids) => ids.sort((a, b) => a - b))).toEqual(pieces.map((piece) => naive(patterns, piece)))
        }
      ),
      { numRuns: 300 }
    )
  })
})

describe("IdentifierExtraction with the index", () => {
  const ids = {
    ...IdentifierExtraction.empty(),
    paths: ["src/app.ts", "app.ts", "packages/core/src/Budget.ts"],
    commands: ["pnpm vitest run src/app.ts"],
    ports: ["3000"]
  }

  it("missingFrom reports exactly the identifiers absent from the text, same index reused across texts", () => {
    expect(IdentifierExtraction.missingFrom(ids, "ran `pnpm vitest run src/app.ts` on port 3000")).toEqual({
      ...IdentifierExtraction.empty(),
      paths: ["packages/core/src/Budget.ts"]
    })
    expect(IdentifierExtraction.missingFrom(ids, "nothing here")).toEqual(ids)
  })

  it("containedInOthers lists identifiers quoted inside a different identifier", () => {
    expect(IdentifierExtraction.containedInOthers(ids).map((item) => item.value)).toEqual(["src/app.ts", "app.ts"])
  })
})
