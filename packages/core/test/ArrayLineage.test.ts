import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ArrayLineage from "../src/ArrayLineage.ts"

describe("ArrayLineage", () => {
  it("an array built by extend holds its base's elements, then the added ones, and neither argument changes", () => {
    const base = ArrayLineage.extend([], ["a", "b"])
    const added = ["c"]
    const next = ArrayLineage.extend(base, added)
    expect(next).toEqual(["a", "b", "c"])
    expect(base).toEqual(["a", "b"])
    expect(added).toEqual(["c"])
    expect(ArrayLineage.isExtensionOf(next, base)).toBe(true)
    expect(ArrayLineage.isExtensionOf(base, next)).toBe(false)
    expect(ArrayLineage.isExtensionOf(next, next)).toBe(true)
  })

  it("knows nothing of arrays it did not build: a caller's equal array is not an extension", () => {
    const own = ["a", "b"]
    const next = ArrayLineage.extend(own, ["c"])
    expect(ArrayLineage.isExtensionOf(next, own)).toBe(false)
    expect(ArrayLineage.isExtensionOf(own, own)).toBe(false)
    expect(ArrayLineage.isExtensionOf(["a", "b", "c"], next)).toBe(false)
  })

  it("an older array extended again starts a new lineage (a branch): neither branch extends the other", () => {
    const root = ArrayLineage.extend([], [1, 2])
    const left = ArrayLineage.extend(root, [3])
    const right = ArrayLineage.extend(root, [4, 5])
    expect(ArrayLineage.isExtensionOf(left, root)).toBe(true)
    expect(ArrayLineage.isExtensionOf(right, root)).toBe(false)
    expect(ArrayLineage.isExtensionOf(right, left)).toBe(false)
    expect(ArrayLineage.isExtensionOf(ArrayLineage.extend(left, [6]), root)).toBe(true)
  })

  it("lineageOf names one object for the members of a lineage, none for a branch, a foreign or a grown array", () => {
    const root = ArrayLineage.extend([], [1])
    const next = ArrayLineage.extend(root, [2])
    const branch = ArrayLineage.extend(root, [3])
    expect(ArrayLineage.lineageOf(root)).toBeDefined()
    expect(ArrayLineage.lineageOf(next)).toBe(ArrayLineage.lineageOf(root))
    expect(ArrayLineage.lineageOf(branch)).not.toBe(ArrayLineage.lineageOf(root))
    expect(ArrayLineage.lineageOf([1, 2])).toBeUndefined()
    ;(next as Array<number>).push(4)
    expect(ArrayLineage.lineageOf(next)).toBeUndefined()
  })

  it("does not trust an array whose length changed since it was built (a push)", () => {
    const base = ArrayLineage.extend([], [1, 2])
    const next = ArrayLineage.extend(base, [3])
    ;(base as Array<number>).push(9)
    expect(ArrayLineage.isExtensionOf(next, base)).toBe(false)
    const grown = ArrayLineage.extend([], [1])
    const after = ArrayLineage.extend(grown, [2])
    ;(after as Array<number>).push(3)
    expect(ArrayLineage.isExtensionOf(after, grown)).toBe(false)
  })

  it("whenever isExtensionOf holds, the shorter array is a prefix of the longer (random extends of random bases)", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ base: fc.nat(), added: fc.array(fc.nat(3), { maxLength: 3 }) }), { maxLength: 30 }),
        (steps) => {
          const built: Array<ReadonlyArray<number>> = []
          for (const step of steps) {
            const base = built.length === 0 ? [] : built[step.base % built.length]!
            built.push(ArrayLineage.extend(base, step.added))
          }
          for (const items of built)
            for (const known of built)
              if (ArrayLineage.isExtensionOf(items, known)) expect(items.slice(0, known.length)).toEqual(known)
          // An array built from the newest array (the request path's case: each step extends the last) extends it.
          for (let index = 1; index < built.length; index++)
            if (steps[index]!.base % index === index - 1)
              expect(ArrayLineage.isExtensionOf(built[index]!, built[index - 1]!)).toBe(true)
        }
      ),
      { numRuns: 300 }
    )
  })
})
