import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ContextView from "../src/ContextView.ts"
import type { ViewEdit } from "../src/ViewEdit.ts"

/** The one-edit-at-a-time definition that the batched `applyEdits` must equal. */
const reference = (view: ContextView.ContextView, edits: ReadonlyArray<ViewEdit>): ContextView.ContextView => {
  let items = view.items.slice()
  for (const edit of edits) {
    if (edit.op === "drop") items = items.filter((item) => item.entryId !== edit.entryId)
    else if (edit.op === "replace")
      items = items.map((item) =>
        item.entryId === edit.entryId
          ? { ...item, message: edit.message, editedBy: [...item.editedBy, edit.strategy] }
          : item
      )
    else {
      if (items.some((item) => item.entryId === edit.id)) continue
      const index = items.findIndex((item) => item.entryId === edit.afterEntryId)
      if (index === -1) continue
      items.splice(index + 1, 0, {
        entryId: edit.id,
        message: edit.message,
        source: "synthetic",
        editedBy: [edit.strategy]
      })
    }
  }
  return { items, tools: view.tools }
}

const id = fc.constantFrom("m0", "m1", "m2", "m3", "m4", "x0", "x1", "missing")
const edit: fc.Arbitrary<ViewEdit> = fc.oneof(
  fc.record({
    op: fc.constant("drop" as const),
    entryId: id,
    strategy: fc.constantFrom("a", "b"),
    reason: fc.constant("r")
  }),
  fc.record({
    op: fc.constant("replace" as const),
    entryId: id,
    message: fc.string().map((text) => ({ role: "user" as const, content: text })),
    strategy: fc.constantFrom("a", "b"),
    reason: fc.constant("r")
  }),
  fc.record({
    op: fc.constant("insert" as const),
    id: fc.constantFrom("x0", "x1", "m2"),
    afterEntryId: id,
    message: fc.constant({ role: "assistant" as const, content: "ins" }),
    strategy: fc.constantFrom("a", "b"),
    reason: fc.constant("r")
  })
)

describe("ContextView.applyEdits", () => {
  it("equals applying the edits one at a time (drops, replaces, inserts, repeats, unknown ids)", () => {
    fc.assert(
      fc.property(fc.array(edit, { maxLength: 25 }), (edits) => {
        const view = ContextView.fromMessages(
          Array.from({ length: 5 }, (_, index) => ({ role: "user" as const, content: `message ${index}` }))
        )
        expect(ContextView.applyEdits(view, edits)).toEqual(reference(view, edits))
      }),
      { numRuns: 500 }
    )
  })

  it("equals it on views where an entry has several items, with inserts after inserts", () => {
    const ids = fc.constantFrom("m0", "m1", "m2", "x0", "x1", "x2", "x3", "missing")
    const insert: fc.Arbitrary<ViewEdit> = fc.record({
      op: fc.constant("insert" as const),
      id: fc.constantFrom("x0", "x1", "x2", "x3", "m1"),
      afterEntryId: ids,
      message: fc.string().map((text) => ({ role: "assistant" as const, content: text })),
      strategy: fc.constantFrom("a", "b"),
      reason: fc.constant("r")
    })
    const drop: fc.Arbitrary<ViewEdit> = fc.record({
      op: fc.constant("drop" as const),
      entryId: ids,
      strategy: fc.constant("a"),
      reason: fc.constant("r")
    })
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("m0", "m1", "m2"), { minLength: 1, maxLength: 6 }),
        fc.array(fc.oneof({ arbitrary: insert, weight: 4 }, { arbitrary: drop, weight: 1 }), { maxLength: 30 }),
        (entryIds, edits) => {
          const view: ContextView.ContextView = {
            items: entryIds.map((entryId, index) => ({
              entryId,
              message: { role: "user" as const, content: `item ${index}` },
              source: "transcript" as const,
              editedBy: []
            })),
            tools: []
          }
          expect(ContextView.applyEdits(view, edits)).toEqual(reference(view, edits))
        }
      ),
      { numRuns: 1000 }
    )
  })
})
