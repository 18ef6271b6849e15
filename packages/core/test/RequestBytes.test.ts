import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ArrayLineage from "../src/ArrayLineage.ts"
import type { ViewItem } from "../src/ContextView.ts"
import * as RequestBytes from "../src/RequestBytes.ts"
import { countReads } from "./support/readCounter.ts"

const item = (text: string, index: number): ViewItem => ({
  entryId: `e${index}`,
  message: { role: index % 2 === 0 ? "user" : "assistant", content: text },
  source: "transcript",
  editedBy: []
})

/** The body's bytes from the definition: the messages and tools as JSON arrays. */
const bytesOf = (items: ReadonlyArray<ViewItem>): number =>
  2 +
  Math.max(0, items.length - 1) +
  items.reduce((sum, one) => sum + Buffer.byteLength(JSON.stringify(one.message), "utf8"), 0)

describe("RequestBytes.viewBytes", () => {
  it("equals the body's bytes for views that extend, branch from and repeat earlier ones", () => {
    fc.assert(
      fc.property(
        fc.array(fc.record({ base: fc.nat(), added: fc.array(fc.string(), { maxLength: 4 }) }), { maxLength: 20 }),
        (steps) => {
          const views: Array<ReadonlyArray<ViewItem>> = [ArrayLineage.extend([], [])]
          let counter = 0
          for (const step of steps) {
            const base = views[step.base % views.length]!
            const view = ArrayLineage.extend(
              base,
              step.added.map((text) => item(text, counter++))
            )
            views.push(view)
            expect(RequestBytes.viewBytes({ items: view, tools: [] })).toBe(bytesOf(view))
            // An older view measured again (a shorter member of the lineage) is measured whole.
            expect(RequestBytes.viewBytes({ items: base, tools: [] })).toBe(bytesOf(base))
          }
        }
      ),
      { numRuns: 200 }
    )
  })

  it("a view recorded as extending one measured before reads none of its earlier items", () => {
    const first = ArrayLineage.extend(
      [],
      Array.from({ length: 100 }, (_, index) => item(`message ${index} ✓`, index))
    )
    RequestBytes.viewBytes({ items: first, tools: [] })
    const second = ArrayLineage.extend(first, [item("next", 100)])
    const reads = countReads(second, first.length)
    expect(RequestBytes.viewBytes({ items: second, tools: [] })).toBe(bytesOf([...first, item("next", 100)]))
    expect(reads.count).toBe(0)
  })
})
