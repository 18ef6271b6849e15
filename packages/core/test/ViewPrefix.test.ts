import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ContentHash from "../src/ContentHash.ts"
import type { ViewItem } from "../src/ContextView.ts"
import * as ContextView from "../src/ContextView.ts"
import { categories } from "../src/Measurement.ts"
import * as ViewPrefix from "../src/ViewPrefix.ts"
import { piMessages } from "./support/piTranscript.ts"

/** The chained fingerprint computed from its definition (no memo). */
const chained = (items: ReadonlyArray<ViewItem>, lastIndex: number): string => {
  let previous = ""
  for (let index = 0; index <= lastIndex; index++) {
    const item = items[index]!
    previous = ContentHash.hash(
      `${previous}\u0001${item.entryId}\u0000${item.source}\u0000${ContentHash.hash(item.message)}`
    )
  }
  return previous
}

describe("ViewPrefix.fingerprintThrough", () => {
  it("remembers a prefix matched by content as the new items: the next step's extension reads none of them", () => {
    const items = ContextView.fromMessages(piMessages().slice(0, 200)).items
    expect(ViewPrefix.fingerprintThrough(items, 198)).toBe(chained(items, 198))
    // The same items rebuilt as new objects (another view of equal content): matched by content, item by item.
    const reads = { count: 0 }
    const rebuilt = items.map(
      (item) =>
        new Proxy(
          { ...item },
          {
            get: (target, key) => {
              reads.count++
              return target[key as keyof ViewItem]
            }
          }
        ) as ViewItem
    )
    expect(ViewPrefix.fingerprintThrough(rebuilt, 198)).toBe(chained(items, 198))
    expect(reads.count).toBeGreaterThan(198)
    // The next step extends the rebuilt items: found by identity, no earlier item is read.
    reads.count = 0
    const next = [...rebuilt.slice(0, 199), items[199]!]
    expect(ViewPrefix.fingerprintThrough(next, 199)).toBe(chained(items, 199))
    expect(reads.count).toBe(0)
  })
})

describe("ViewPrefix.makeSums", () => {
  /** A per-item count that depends on the item and on whether it is before the tool loop. */
  const countOf = (item: ViewItem, prior: boolean): ViewPrefix.ItemCount => {
    const size = JSON.stringify(item.message.content).length
    return {
      byCategory: prior ? { userText: size } : { userText: size, toolResults: size % 7 },
      unknownImages: size % 3 === 0 ? 1 : 0,
      estimatedFiles: size % 5 === 0 ? 1 : 0
    }
  }

  it("every prefix sum is the sum of its items' counts, across views that extend, shorten and switch lineage", () => {
    const items = ContextView.fromMessages(piMessages().slice(0, 300)).items
    const rebuilt = items.map((item) => ({ ...item, message: { ...item.message } }) as ViewItem)
    const sums = ViewPrefix.makeSums(2, ViewPrefix.shallowStamps)
    fc.assert(
      fc.property(
        fc.array(fc.record({ length: fc.nat(300), loopStart: fc.nat(300), other: fc.boolean() }), { minLength: 1 }),
        (views) => {
          for (const { length, loopStart, other } of views) {
            const view = (other ? rebuilt : items).slice(0, length)
            const result = sums(view, loopStart, countOf)
            const end = Math.floor(length / 2)
            const expected = { userText: 0, toolResults: 0, images: 0, files: 0 }
            for (let index = 0; index < end; index++) {
              const count = countOf(view[index]!, index < loopStart)
              expected.userText += count.byCategory.userText ?? 0
              expected.toolResults += count.byCategory.toolResults ?? 0
              expected.images += count.unknownImages
              expected.files += count.estimatedFiles
            }
            const vector = result.categories(end)
            expect(vector[categories.indexOf("userText")]).toBe(expected.userText)
            expect(vector[categories.indexOf("toolResults")]).toBe(expected.toolResults)
            expect(result.unknownImages(end)).toBe(expected.images)
            expect(result.estimatedFiles(end)).toBe(expected.files)
          }
        }
      ),
      { numRuns: 40 }
    )
  })
})
