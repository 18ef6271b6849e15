import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ActiveView from "../src/ActiveView.ts"
import * as ArrayLineage from "../src/ArrayLineage.ts"
import type * as Checkpoint from "../src/Checkpoint.ts"
import type * as Entry from "../src/Entry.ts"
import * as IncrementalActiveView from "../src/IncrementalActiveView.ts"
import { countReads } from "./support/readCounter.ts"

const header = (id: string, parentId: string | null) => ({
  id,
  parentId,
  timestamp: "2026-03-01T00:00:00.000Z",
  schemaVersion: 1 as const
})

const checkpointBody = (id: string, through: string, firstKept: string): Checkpoint.Checkpoint => ({
  id,
  generation: 1,
  coveredRange: { fromEntryId: null, toEntryId: through },
  firstKeptEntryId: firstKept,
  tokensBefore: 1000,
  tokensAfter: 100,
  summarizer: { kind: "extractive", promptVersion: "test" },
  text: `summary through ${through}`,
  createdAt: "2026-03-01T00:00:00.000Z"
})

/** One entry to append, described relative to what is already there (ids picked by index). */
const spec = fc.record({
  kind: fc.constantFrom(
    "user",
    "assistant",
    "assistant",
    "tool-ish",
    "system",
    "edit",
    "replace",
    "insert",
    "checkpoint",
    "memory"
  ),
  // null parent, the previous entry, an earlier entry (a fork), or an id not in the log
  parent: fc.constantFrom("null", "previous", "previous", "previous", "earlier", "unknown"),
  pick: fc.nat(),
  duplicateId: fc.integer({ min: 0, max: 9 }).map((value) => value === 0)
})

type Spec = typeof spec extends fc.Arbitrary<infer A> ? A : never

const build = (specs: ReadonlyArray<Spec>): Array<Entry.Entry> => {
  const entries: Array<Entry.Entry> = []
  specs.forEach((one, index) => {
    const earlier = (offset = 0) => (entries.length === 0 ? "none" : entries[(one.pick + offset) % entries.length]!.id)
    const id = one.duplicateId && entries.length > 0 ? earlier() : `e${index}`
    const parentId =
      one.parent === "null"
        ? null
        : one.parent === "previous"
          ? (entries.at(-1)?.id ?? null)
          : one.parent === "earlier"
            ? earlier(1)
            : "missing"
    const base = header(id, parentId)
    switch (one.kind) {
      case "edit":
        entries.push({ ...base, kind: "edit", edit: { op: "drop", entryId: earlier(), strategy: "t", reason: "r" } })
        // The edit may also name an entry that comes later (an id not yet used).
        return
      case "replace":
        // As an offload of a tool result that just arrived: the message named is usually in the same step.
        entries.push({
          ...base,
          kind: "edit",
          edit: {
            op: "replace",
            entryId: entries.at(-1 - (one.pick % 3))?.id ?? "none",
            strategy: "offload",
            reason: "r",
            message: { role: "tool", content: [] }
          }
        } as Entry.Entry)
        return
      case "insert":
        entries.push({
          ...base,
          kind: "edit",
          edit: {
            op: "insert",
            id: `e${index + 1}`,
            afterEntryId: earlier(),
            strategy: "t",
            reason: "r",
            message: { role: "user", content: "inserted" }
          }
        })
        return
      case "checkpoint":
        entries.push({ ...base, kind: "checkpoint", checkpoint: checkpointBody(id, earlier(), earlier(1)) })
        return
      case "memory":
        entries.push({ ...base, kind: "memory", memory: { text: `remember ${index}` } } as Entry.Entry)
        return
      default: {
        const role = one.kind === "tool-ish" ? "assistant" : one.kind
        entries.push({ ...base, kind: "message", message: { role, content: `${one.kind} ${index}` } } as Entry.Entry)
      }
    }
  })
  return entries
}

describe("IncrementalActiveView", () => {
  it("equals ActiveView.reconstruct at every step of a growing log (forks, edits, checkpoints, duplicate ids)", () => {
    fc.assert(
      fc.property(
        fc.array(spec, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: 0, max: 5 }), { minLength: 1, maxLength: 15 }),
        fc.boolean(),
        (specs, steps, recorded) => {
          const all = build(specs)
          const reconstruct = IncrementalActiveView.make()
          let length = 0
          let entries: ReadonlyArray<Entry.Entry> = []
          let items: ReadonlyArray<unknown> = []
          for (const grow of steps) {
            const next = Math.min(all.length, length + grow)
            // A fresh array each step over the same entry objects: a plain copy, or (as the middleware's snapshots)
            // one recorded as extending the previous step's (ArrayLineage), whose earlier entries are not compared.
            entries = recorded ? ArrayLineage.extend(entries, all.slice(length, next)) : all.slice(0, next)
            length = next
            const active = reconstruct(entries, { tools: [] })
            expect(active).toEqual(ActiveView.reconstruct(entries, { tools: [] }))
            // A view recorded as extending the previous step's holds its very items first.
            if (ArrayLineage.isExtensionOf(active.view.items, items))
              expect(items.every((item, index) => item === active.view.items[index])).toBe(true)
            items = active.view.items
          }
        }
      ),
      { numRuns: 400 }
    )
  })

  it("extends the previous view when messages are appended to the leaf (same item objects, no rebuild)", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("s", null), kind: "message", message: { role: "system", content: "sys" } },
      { ...header("u", "s"), kind: "message", message: { role: "user", content: "go" } }
    ]
    const reconstruct = IncrementalActiveView.make()
    const first = reconstruct(entries.slice())
    entries.push({ ...header("a", "u"), kind: "message", message: { role: "assistant", content: "ok" } })
    const second = reconstruct(entries.slice())
    expect(second.view.items.slice(0, 2)).toEqual(first.view.items)
    expect(second.view.items[1]).toBe(first.view.items[1])
    expect(second).toEqual(ActiveView.reconstruct(entries))
  })

  it("a step whose entries are recorded as extending the previous ones reads none of the earlier entries, and its view extends the previous view", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("s", null), kind: "message", message: { role: "system", content: "sys" } }
    ]
    for (let index = 0; index < 40; index++)
      entries.push({
        ...header(`m${index}`, entries.at(-1)!.id),
        kind: "message",
        message: { role: index % 2 === 0 ? "user" : "assistant", content: `message ${index}` }
      } as Entry.Entry)
    const reconstruct = IncrementalActiveView.make()
    const first = ArrayLineage.extend([], entries)
    const before = reconstruct(first)
    const next = { ...header("m40", "m39"), kind: "message", message: { role: "assistant", content: "more" } }
    const second = ArrayLineage.extend(first, [next as Entry.Entry])
    const reads = countReads(second, first.length)
    const after = reconstruct(second)
    // At most the entry before the first new one (its id: the new entry's parent).
    expect(reads.count).toBeLessThanOrEqual(1)
    expect(ArrayLineage.isExtensionOf(after.view.items, before.view.items)).toBe(true)
    expect(ArrayLineage.isExtensionOf(after.conversation, before.conversation)).toBe(true)
    expect(after).toEqual(ActiveView.reconstruct([...entries, next as Entry.Entry]))
  })

  it("without a system prefix or checkpoint, the view's items are the conversation array, extended once per step", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("u", null), kind: "message", message: { role: "user", content: "go" } }
    ]
    const reconstruct = IncrementalActiveView.make()
    const first = reconstruct(entries.slice())
    expect(first.view.items).toBe(first.conversation)
    entries.push({ ...header("a", "u"), kind: "message", message: { role: "assistant", content: "ok" } })
    const second = reconstruct(entries.slice())
    expect(second.view.items).toBe(second.conversation)
    expect(second.view.items[0]).toBe(first.view.items[0])
    expect(second).toEqual(ActiveView.reconstruct(entries))
  })

  it("drops the pinned latest user message once a newer user message arrives after a checkpoint", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("u1", null), kind: "message", message: { role: "user", content: "task" } },
      { ...header("a1", "u1"), kind: "message", message: { role: "assistant", content: "working" } },
      { ...header("a2", "a1"), kind: "message", message: { role: "assistant", content: "still working" } },
      // Covers the user message: the view pins it after the checkpoint.
      { ...header("cp", "a2"), kind: "checkpoint", checkpoint: checkpointBody("cp", "a1", "a2") }
    ]
    const reconstruct = IncrementalActiveView.make()
    expect(reconstruct(entries.slice()).conversation.map((item) => item.entryId)).toEqual(["u1", "a2"])
    entries.push({ ...header("u2", "cp"), kind: "message", message: { role: "user", content: "next task" } })
    const view = reconstruct(entries.slice())
    expect(view.conversation.map((item) => item.entryId)).toEqual(["a2", "u2"])
    expect(view).toEqual(ActiveView.reconstruct(entries))
  })

  it("notices an earlier entry replaced by a new object (an app rewrote its history) and reconstructs", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("u", null), kind: "message", message: { role: "user", content: "first" } },
      { ...header("a", "u"), kind: "message", message: { role: "assistant", content: "ok" } }
    ]
    const reconstruct = IncrementalActiveView.make()
    reconstruct(entries.slice())
    entries[0] = { ...header("u", null), kind: "message", message: { role: "user", content: "rewritten" } }
    entries.push({ ...header("b", "a"), kind: "message", message: { role: "assistant", content: "more" } })
    const view = reconstruct(entries.slice())
    expect(view.view.items[0]!.message).toEqual({ role: "user", content: "rewritten" })
    expect(view).toEqual(ActiveView.reconstruct(entries))
  })

  it("extends the view when a step appends messages and edits naming only them (an offload on arrival)", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("u", null), kind: "message", message: { role: "user", content: "go" } },
      { ...header("a", "u"), kind: "message", message: { role: "assistant", content: "reading" } }
    ]
    const reconstruct = IncrementalActiveView.make()
    const first = reconstruct(entries.slice())
    const offloaded = { role: "assistant" as const, content: "[offloaded: 40,000 tokens, ref r1]" }
    entries.push(
      { ...header("t", "a"), kind: "message", message: { role: "assistant", content: "a very long output" } },
      {
        ...header("x", "t"),
        kind: "edit",
        edit: { op: "replace", entryId: "t", strategy: "offload", reason: "large", message: offloaded }
      }
    )
    const second = reconstruct(entries.slice())
    expect(second).toEqual(ActiveView.reconstruct(entries))
    // Extended: the earlier items are the same objects (a cold reconstruction builds every item again).
    expect(second.view.items[0]).toBe(first.view.items[0])
    expect(second.view.items[2]!.message).toBe(offloaded)
    // An edit naming an earlier message: still equal to the full reconstruction.
    entries.push({
      ...header("y", "x"),
      kind: "edit",
      edit: { op: "drop", entryId: "a", strategy: "t", reason: "r" }
    })
    const third = reconstruct(entries.slice())
    expect(third).toEqual(ActiveView.reconstruct(entries))
  })

  it("appends a user message after a checkpoint when no earlier user message is pinned ahead of the tail", () => {
    const entries: Array<Entry.Entry> = [
      { ...header("u1", null), kind: "message", message: { role: "user", content: "task" } },
      { ...header("a1", "u1"), kind: "message", message: { role: "assistant", content: "working" } },
      { ...header("u2", "a1"), kind: "message", message: { role: "user", content: "and then this" } },
      { ...header("a2", "u2"), kind: "message", message: { role: "assistant", content: "still working" } },
      // Keeps u2 (the latest user message) in the tail: nothing is pinned.
      { ...header("cp", "a2"), kind: "checkpoint", checkpoint: checkpointBody("cp", "a1", "u2") }
    ]
    expect(ActiveView.pinsLatestUser(entries)).toBe(false)
    const reconstruct = IncrementalActiveView.make()
    const first = reconstruct(entries.slice())
    entries.push({ ...header("u3", "cp"), kind: "message", message: { role: "user", content: "next task" } })
    const second = reconstruct(entries.slice())
    expect(second).toEqual(ActiveView.reconstruct(entries))
    // Extended (a cold reconstruction builds every item again).
    expect(second.conversation[0]).toBe(first.conversation[0])
    expect(second.conversation.map((item) => item.entryId)).toEqual(["u2", "a2", "u3"])
  })
})
