import { ActiveView, type Entry, type Message, ToolPairing, type ViewEdit } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as AgentEdits from "../src/AgentEdits.ts"

const entries = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))
const call = (id: string, path: string): Message.Message => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName: "read", input: { path } }]
})
const result = (id: string, text: string): Message.Message => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "read", output: { type: "text", value: text } }]
})
const path = entries([
  { role: "system", content: "agent" },
  { role: "user", content: "Task 1: read src/a.ts" }, // e1
  call("c1", "src/a.ts"), // e2
  result("c1", "A".repeat(5_000)), // e3
  { role: "assistant", content: "a.ts exports alpha." }, // e4
  { role: "user", content: "Task 2: read src/b.ts" }, // e5
  call("c2", "src/b.ts"), // e6
  result("c2", "B".repeat(5_000)) // e7
])
const withEdits = (base: ReadonlyArray<Entry.Entry>, edits: ReadonlyArray<ViewEdit.ViewEdit>): Array<Entry.Entry> => [
  ...base,
  ...edits.map(
    (edit, index): Entry.Entry => ({
      id: `edit${index}`,
      // Each edit follows the previous entry, so the path is one chain.
      parentId: index === 0 ? (base.at(-1)?.id ?? null) : `edit${index - 1}`,
      timestamp: new Date(0).toISOString(),
      schemaVersion: 1,
      kind: "edit",
      edit
    })
  )
]
const view = (all: ReadonlyArray<Entry.Entry>) => ActiveView.reconstruct(all).view

describe("AgentEdits.rewindEdits", () => {
  it("replaces a finished task with the summary and an index, keeping pairing and the latest user message", () => {
    const rewind = AgentEdits.rewindEdits(path, { from: "e1", summary: "Task 1 done: a.ts exports alpha." })
    if ("error" in rewind) throw new Error(rewind.error)
    expect(rewind.replacedEntryIds).toEqual(["e1", "e2", "e3", "e4"])
    const after = view(withEdits(path, rewind.edits))
    const ids = after.items.map((item) => item.entryId)
    expect(ids).toEqual(["e0", "e1", "e5", "e6", "e7"])
    const summary = after.items[1]!.message
    expect(summary.role).toBe("user")
    expect(String(summary.content)).toContain("Task 1 done: a.ts exports alpha.")
    for (const id of ["e1", "e2", "e3", "e4"]) expect(String(summary.content)).toContain(`- ${id} `)
    expect(String(summary.content)).toContain('read {"path":"src/a.ts"}')
    expect(ToolPairing.analyze(after.items).problems).toEqual([])
  })

  it("widens a stretch that starts at a tool result or ends at a call to whole units", () => {
    const rewind = AgentEdits.rewindEdits(path, { from: "e3", to: "e2", summary: "x" })
    expect(rewind).toMatchObject({ error: expect.stringContaining("empty") })
    const widened = AgentEdits.rewindEdits(path, { from: "e3", to: "e4", summary: "read a.ts" })
    if ("error" in widened) throw new Error(widened.error)
    expect(widened.replacedEntryIds).toEqual(["e2", "e3", "e4"])
    expect(ToolPairing.analyze(view(withEdits(path, widened.edits)).items).problems).toEqual([])
  })

  it("refuses a stretch with the latest user message, an unknown entry or an empty summary", () => {
    expect(AgentEdits.rewindEdits(path, { from: "e1", to: "e7", summary: "all" })).toHaveProperty("error")
    expect(AgentEdits.rewindEdits(path, { from: "nope", summary: "x" })).toHaveProperty("error")
    expect(AgentEdits.rewindEdits(path, { from: "e1", summary: "  " })).toHaveProperty("error")
  })
})

describe("AgentEdits restore / offload / read", () => {
  it("offload keeps the tool-call id, restore puts the original back, read returns exact characters", () => {
    const offload = AgentEdits.offloadEdit(path, "e3", "a.ts: 5000 A's")
    if ("error" in offload) throw new Error(offload.error)
    const offloaded = withEdits(path, [offload])
    expect(AgentEdits.placement(offloaded, offloaded, "e3")).toBe("edited")
    const shown = view(offloaded).items.find((item) => item.entryId === "e3")!
    expect(JSON.stringify(shown.message)).toContain("a.ts: 5000 A's")
    expect(ToolPairing.analyze(view(offloaded).items).problems).toEqual([])
    const restore = AgentEdits.restoreEdit(offloaded, "e3")
    if ("error" in restore) throw new Error(restore.error)
    const restored = withEdits(path, [offload, restore])
    expect(view(restored).items.find((item) => item.entryId === "e3")!.message).toEqual(
      path[3]!.kind === "message" && path[3]!.message
    )
    expect(AgentEdits.restoreEdit(path, "e3")).toHaveProperty("error")
    expect(AgentEdits.read(path, "e7", 4_990, 100)).toEqual({ text: "B".repeat(10), offset: 4_990, totalChars: 5_000 })
    expect(AgentEdits.read(path, "e7", 0, 10)).toEqual({
      text: "B".repeat(10),
      offset: 0,
      totalChars: 5_000,
      nextOffset: 10
    })
    expect(AgentEdits.offloadEdit(path, "e0", "x")).toHaveProperty("error")
  })

  it("offload refuses the latest user message (it stays verbatim, as in a rewind) and an empty note", () => {
    // QA session 4: context_offload on the latest user message returned { offloaded: true } and the next request
    // ended with the offload pointer instead of the user's words.
    const endsOnUser = entries([
      { role: "user", content: "Task 1: read src/a.ts" },
      call("c1", "src/a.ts"),
      result("c1", "A".repeat(100)),
      { role: "assistant", content: "done" },
      { role: "user", content: "next" } // e4
    ])
    expect(AgentEdits.offloadEdit(endsOnUser, "e4", "the user said next")).toEqual({
      error: "the latest user message stays verbatim; it is never offloaded"
    })
    expect(AgentEdits.offloadEdit(endsOnUser, "e0", "task 1")).not.toHaveProperty("error")
    expect(AgentEdits.offloadEdit(endsOnUser, "e2", "  ")).toEqual({ error: "the note is empty" })
  })
})
