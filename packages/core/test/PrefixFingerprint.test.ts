import { describe, expect, it } from "vitest"
import * as ArrayLineage from "../src/ArrayLineage.ts"
import * as ContentHash from "../src/ContentHash.ts"
import type { ViewItem } from "../src/ContextView.ts"
import * as ContextView from "../src/ContextView.ts"
import * as PrefixFingerprint from "../src/PrefixFingerprint.ts"
import { piMessages } from "./support/piTranscript.ts"
import { countReads } from "./support/readCounter.ts"

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

describe("PrefixFingerprint.fingerprintThrough", () => {
  it("remembers a prefix matched by content as the new items: the next step's extension reads none of them", () => {
    const items = ContextView.fromMessages(piMessages().slice(0, 200)).items
    expect(PrefixFingerprint.fingerprintThrough(items, 198)).toBe(chained(items, 198))
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
    expect(PrefixFingerprint.fingerprintThrough(rebuilt, 198)).toBe(chained(items, 198))
    expect(reads.count).toBeGreaterThan(198)
    // The next step extends the rebuilt items: found by identity, no earlier item is read.
    reads.count = 0
    const next = [...rebuilt.slice(0, 199), items[199]!]
    expect(PrefixFingerprint.fingerprintThrough(next, 199)).toBe(chained(items, 199))
    expect(reads.count).toBe(0)
  })

  it("a chain is extended and checked against a view recorded as extending its own view (ArrayLineage) without reading the earlier items", () => {
    const items = ContextView.fromMessages(piMessages().slice(0, 210)).items
    const first = ArrayLineage.extend([], items.slice(0, 200))
    const chain = PrefixFingerprint.extendChain(undefined, first, 199)
    const second = ArrayLineage.extend(first, items.slice(200))
    const reads = countReads(second, first.length)
    expect(PrefixFingerprint.chainCovers(chain, second, 199)).toBe(true)
    const next = PrefixFingerprint.extendChain(chain, second, 209)
    expect(reads.count).toBe(0)
    expect(next.chain.fingerprints[209]).toBe(chained(items, 209))
    expect(next.chain.fingerprints[199]).toBe(chained(items, 199))
    // A caller's own array of the same items is compared (and still covered).
    expect(PrefixFingerprint.chainCovers(next, [...items], 209)).toBe(true)
  })
})
