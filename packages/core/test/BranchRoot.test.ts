/**
 * BranchRoot: a history that starts over at the root (an application changed
 * its first message) is its own branch for every reader, while `parentId:
 * null` without the mark still continues the entry before it (imports).
 */
import { describe, expect, it } from "vitest"
import * as ActiveView from "../src/ActiveView.ts"
import * as BranchRoot from "../src/BranchRoot.ts"
import type { MessageEntry } from "../src/Entry.ts"
import * as IncrementalActiveView from "../src/IncrementalActiveView.ts"

const message = (
  id: string,
  parentId: string | null,
  text: string,
  role: "system" | "user" = "user"
): MessageEntry => ({
  id,
  parentId,
  timestamp: "2026-01-01T00:00:00.000Z",
  schemaVersion: 1,
  kind: "message",
  message: role === "system" ? { role, content: text } : { role, content: [{ type: "text", text }] }
})

const old = [message("a", null, "Step 1.", "system"), message("b", "a", "deploy")]
const restarted = [...old, BranchRoot.mark(message("c", null, "Step 2.", "system")), message("d", "c", "deploy")]

describe("BranchRoot", () => {
  it("the walk stops at a marked root: the branch and the view hold the new history only", () => {
    expect(ActiveView.branch(restarted).map((entry) => entry.id)).toEqual(["c", "d"])
    expect(ActiveView.reconstruct(restarted).view.items.map((item) => item.entryId)).toEqual(["c", "d"])
    // the old branch is still there, by its leaf
    expect(ActiveView.branch(restarted, "b").map((entry) => entry.id)).toEqual(["a", "b"])
  })

  it("without the mark (or with a parent) an entry continues as before", () => {
    const unmarked = [...old, message("c", null, "Step 2.", "system"), message("d", "c", "deploy")]
    expect(ActiveView.branch(unmarked)).toBe(unmarked)
    const withParent = BranchRoot.mark(message("c", "b", "more"))
    expect(BranchRoot.isRoot(withParent)).toBe(false)
    expect(BranchRoot.isRoot({ parentId: null, meta: { branchRoot: "yes" } })).toBe(false)
    expect(BranchRoot.mark(message("x", null, "y")).message).toEqual(message("x", null, "y").message)
  })

  it("the incremental view does not extend the previous view with a new root; it agrees with the cold view", () => {
    // user messages only: a system message alone already sends the incremental view cold
    const previous = [message("a", null, "first"), message("b", "a", "second")]
    const next = [...previous, BranchRoot.mark(message("c", null, "first, reworded")), message("d", "c", "second")]
    const incremental = IncrementalActiveView.make()
    incremental(previous)
    const stepped = incremental(next)
    expect(stepped.view.items.map((item) => item.entryId)).toEqual(["c", "d"])
    expect(stepped.view.items).toEqual(ActiveView.reconstruct(next).view.items)
  })
})
