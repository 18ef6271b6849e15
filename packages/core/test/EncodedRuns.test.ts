import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as EncodedRuns from "../src/EncodedRuns.ts"

const alphabet = /[A-Za-z0-9+/=_-]/

/** The reference: every maximal run of the alphabet, read character by character, kept when ≥ 16 long. */
const linearRuns = (text: string): Array<[number, number]> => {
  const runs: Array<[number, number]> = []
  let index = 0
  while (index < text.length) {
    if (!alphabet.test(text[index]!)) {
      index++
      continue
    }
    const start = index
    while (index < text.length && alphabet.test(text[index]!)) index++
    if (index - start >= 16) runs.push([start, index])
  }
  return runs
}

const foundRuns = (text: string): Array<[number, number]> => {
  const runs: Array<[number, number]> = []
  EncodedRuns.forEachLongRun(text, (start, end) => runs.push([start, end]))
  return runs
}

const run = (min: number, max: number) =>
  fc.string({ unit: fc.constantFrom(..."ABCXYZabcxyz0189+/=_-"), minLength: min, maxLength: max })
const separator = fc.string({ unit: fc.constantFrom(..." \n.,:\"'(){}é→😀"), minLength: 1, maxLength: 3 })
const text = fc
  .array(fc.tuple(fc.oneof(run(0, 14), run(14, 18), run(15, 17), run(30, 70)), separator), { maxLength: 20 })
  .map((parts) => parts.map(([word, gap]) => word + gap).join(""))

describe("EncodedRuns.forEachLongRun", () => {
  it("property: the same runs, in order, as reading every character (runs of 15, 16 and 17 included)", () => {
    fc.assert(
      fc.property(fc.tuple(separator, text, fc.boolean()), ([gap, value, leadingRun]) => {
        // with and without a run at the very start and end of the text
        for (const variant of [value, gap + value, value.trimEnd(), leadingRun ? `A1b2C3d4E5f6G7h8${value}` : value]) {
          expect(foundRuns(variant)).toEqual(linearRuns(variant))
        }
      }),
      { numRuns: 2000 }
    )
  })

  it("finds a run at the start, at the end, and one exactly 16 long", () => {
    const digest = "0123456789abcdef"
    expect(foundRuns(digest)).toEqual([[0, 16]])
    expect(foundRuns(`x ${digest}`)).toEqual([[2, 18]])
    expect(foundRuns(`${digest.slice(1)} ${digest}.`)).toEqual([[16, 32]])
  })
})
