import { describe, expect, it } from "vitest"
import * as ContentHash from "../src/ContentHash.ts"
import type { ViewItem } from "../src/ContextView.ts"
import * as ContextView from "../src/ContextView.ts"
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
