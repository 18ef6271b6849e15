import type { Entry, ViewEdit } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Build from "../../src/checkpoint/Build.ts"
import * as Commit from "../../src/checkpoint/Commit.ts"
import { user } from "../support.ts"
import { buildInput, extractiveSummary, prepared, TIMESTAMP } from "./fixture.ts"

/** Edit entries with ids `edit/<n>` chained after `after` (or m32), like the kernel's. */
const editEntries: Commit.EditEntries = (edits, after = []) => {
  let parentId: string | null = after.at(-1)?.id ?? "m32"
  return edits.map((edit, index) => {
    const entry: Entry.EditEntry = {
      id: `edit/${index}`,
      parentId,
      timestamp: TIMESTAMP,
      schemaVersion: 1,
      kind: "edit",
      edit
    }
    parentId = entry.id
    return entry
  })
}

const replace = (entryId: string): ViewEdit.ViewEdit => ({
  op: "replace",
  entryId,
  message: user("[cleared]"),
  strategy: "toolTrim",
  reason: "test"
})

const setup = () => {
  const { req, preparation } = prepared()
  const built = Build.build(buildInput(req, preparation), extractiveSummary(req, preparation))
  return { req, preparation, built }
}

describe("Commit.notNeeded", () => {
  it("keeps the deterministic stages' edits and says why no checkpoint was written", () => {
    const { req } = setup()
    const cheap = { ...req.cheap, edits: [replace("m27")] }
    const common = { cheap, before: req.measurement, editEntries }
    const lowWater = Commit.notNeeded({ ...common, targetTokens: 5_000, lowWaterTokens: 3_000 })
    expect(lowWater.checkpoint).toBeUndefined()
    expect(lowWater.entriesToAppend.map((entry) => entry.id)).toEqual(["edit/0"])
    expect(lowWater.stages.at(-1)).toMatchObject({
      stage: "checkpoint",
      status: "not-needed",
      edits: 0,
      note: "the deterministic stages reach the low-water mark (3000 tokens)"
    })
    const fits = Commit.notNeeded({ ...common, targetTokens: 5_000, lowWaterTokens: 5_000 })
    expect(fits.stages.at(-1)?.note).toBe("fits after the deterministic stages")
  })
})

describe("Commit.commit", () => {
  const commit = (edits: ReadonlyArray<ViewEdit.ViewEdit>, memoryEntries: ReadonlyArray<Entry.Entry> = []) => {
    const { req, preparation, built } = setup()
    return Commit.commit({
      cheap: { ...req.cheap, edits },
      preparation,
      built,
      tried: ["extractive"],
      memoryEntries,
      memoryNote: "",
      before: req.measurement,
      targetTokens: req.budget.inputBudgetTokens,
      lastEntryId: "m32",
      timestamp: TIMESTAMP,
      failures: [],
      editEntries
    })
  }

  it("drops edits on covered entries, keeps those on the tail, and chains the checkpoint entry after them", () => {
    const result = commit([replace("m3"), replace("m27")])
    expect(result.edits).toEqual([replace("m27")])
    expect(result.entriesToAppend.map((entry) => [entry.id, entry.parentId, entry.kind])).toEqual([
      ["edit/0", "m32", "edit"],
      ["checkpoint:1:m24", "edit/0", "checkpoint"]
    ])
    expect(result.checkpoint?.id).toBe("checkpoint:1:m24")
    expect(result.fits).toBe(true)
    expect(result.failures).toBeUndefined()
    expect(result.stages.at(-1)).toMatchObject({ stage: "checkpoint", status: "applied", edits: 1 })
    expect(result.stages.at(-1)?.note).toMatch(/^extractive; covered 24 messages; identifier retention \d+\.\d%$/)
  })

  it("puts this cycle's memory records first and the checkpoint last, parented on the last of them", () => {
    const memory: Entry.Entry = {
      id: "memory-flush:1:m24",
      parentId: "m32",
      timestamp: TIMESTAMP,
      schemaVersion: 1,
      kind: "event",
      event: { name: "context-engine.memory-flush" }
    }
    const result = commit([], [memory])
    expect(result.entriesToAppend.map((entry) => [entry.id, entry.parentId])).toEqual([
      ["memory-flush:1:m24", "m32"],
      ["checkpoint:1:m24", "memory-flush:1:m24"]
    ])
  })
})
