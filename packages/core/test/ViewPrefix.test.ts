import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ArrayLineage from "../src/ArrayLineage.ts"
import type { ViewItem } from "../src/ContextView.ts"
import * as ContextView from "../src/ContextView.ts"
import { categories } from "../src/Measurement.ts"
import * as MessageSeal from "../src/MessageSeal.ts"
import * as ViewPrefix from "../src/ViewPrefix.ts"
import { piMessages } from "./support/piTranscript.ts"
import { countReads } from "./support/readCounter.ts"

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
        fc.array(
          fc.record({ length: fc.nat(300), loopStart: fc.nat(300), other: fc.boolean(), recorded: fc.boolean() }),
          { minLength: 1 }
        ),
        (views) => {
          let last: { readonly view: ReadonlyArray<ViewItem>; readonly other: boolean } | undefined
          for (const { length, loopStart, other, recorded } of views) {
            const source = other ? rebuilt : items
            // Recorded as extending the last view (ArrayLineage) when it grows it, as the request path's views are.
            const view =
              recorded && last !== undefined && last.other === other && length >= last.view.length
                ? ArrayLineage.extend(last.view, source.slice(last.view.length, length))
                : recorded
                  ? ArrayLineage.extend([], source.slice(0, length))
                  : source.slice(0, length)
            last = { view, other }
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

  it("a view recorded as extending the last one counted (ArrayLineage) is matched without reading its earlier items", () => {
    // Sealed messages, as a session holds them: their counts need no in-place-edit check.
    const items = ContextView.fromMessages(piMessages().slice(0, 210).map(MessageSeal.seal)).items
    const sums = ViewPrefix.makeSums(2, ViewPrefix.shallowStamps)
    const first = ArrayLineage.extend([], items.slice(0, 200))
    sums(first, 0, countOf)
    const second = ArrayLineage.extend(first, items.slice(200))
    const reads = countReads(second, first.length)
    const result = sums(second, 0, countOf)
    expect(reads.count).toBe(0)
    const cold = ViewPrefix.makeSums(1, ViewPrefix.shallowStamps)(items, 0, countOf)
    expect([...result.categories(210)]).toEqual([...cold.categories(210)])
    expect(result.unknownImages(210)).toBe(cold.unknownImages(210))
  })
})
