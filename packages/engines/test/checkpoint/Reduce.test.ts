import { ActiveView, Errors } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import type * as Commit from "../../src/checkpoint/Commit.ts"
import * as Reduce from "../../src/checkpoint/Reduce.ts"
import { request, sessionMessages } from "./fixture.ts"

const editEntries: Commit.EditEntries = () => []

const reduceInput = (req: ReturnType<typeof request>, targetTokens: number, lowWaterTokens = targetTokens) => ({
  note: "nothing older than the kept recent window to summarize",
  cheap: req.cheap,
  policy: req.policy,
  budget: req.budget,
  measurer: req.measurer,
  targetTokens,
  lowWaterTokens,
  before: req.measurement,
  hasCheckpoint: false,
  failures: [],
  editEntries
})

describe("Reduce.reduce", () => {
  it("reduces deterministically under the target, reporting the skipped checkpoint and each reduction stage", () => {
    const req = request(sessionMessages(8))
    const target = Math.floor(req.measurement.inputTokens / 2)
    const result = Reduce.reduce(reduceInput(req, target))
    if (result instanceof Errors.BudgetExceeded) throw result
    expect(result.checkpoint).toBeUndefined()
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(target)
    const names = result.stages.map((stage) => stage.stage)
    expect(names).toContain("checkpoint")
    expect(result.stages.find((stage) => stage.stage === "checkpoint")).toMatchObject({
      status: "skipped",
      note: "nothing older than the kept recent window to summarize"
    })
    const after = names.slice(names.indexOf("checkpoint") + 1)
    expect(after.length).toBeGreaterThan(0)
    for (const name of after) expect(name).toMatch(/^reduce:/)
    // The latest user message is still there, verbatim.
    const last = req.cheap.view.items.findLast((item) => item.message.role === "user")
    expect(result.view.items.find((item) => item.entryId === last?.entryId)?.message).toEqual(last?.message)
  })

  it("goes down to the low-water mark, not just under the target (QA session 6: else every step compacts)", () => {
    const req = request(sessionMessages(8))
    const target = req.measurement.inputTokens - 1
    const lowWater = Math.floor(req.measurement.inputTokens / 2)
    const result = Reduce.reduce(reduceInput(req, target, lowWater))
    if (result instanceof Errors.BudgetExceeded) throw result
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(lowWater)
  })

  it("clamps the newest output only as far as the target needs, not down to the low-water mark", () => {
    const req = request(sessionMessages(8))
    // a low-water mark no dropped turn can reach: the turn in progress alone is above it
    const result = Reduce.reduce(reduceInput(req, req.measurement.inputTokens - 1, 1))
    if (result instanceof Errors.BudgetExceeded) throw result
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeGreaterThan(1)
    expect(result.stages.some((stage) => stage.stage === "reduce:clamp.fit")).toBe(false)
  })

  it("fails with BudgetExceeded and the numbers when even the whole ladder cannot fit", () => {
    const req = request(sessionMessages(8))
    const result = Reduce.reduce({ ...reduceInput(req, 20), hasCheckpoint: true })
    expect(result).toBeInstanceOf(Errors.BudgetExceeded)
    const error = result as Errors.BudgetExceeded
    expect(error.budgetTokens).toBe(20)
    expect(error.requestTokens).toBeGreaterThan(20)
    expect(error.reason).toContain("nothing older than the kept recent window to summarize")
    expect(error.reason).toContain("the previous checkpoint")
    expect(error.reason).toContain(`still need ${error.requestTokens} tokens`)
  })

  it("never drops or rewrites the previous checkpoint", () => {
    const req = request(sessionMessages(8))
    const checkpoint = ActiveView.checkpointItem("checkpoint:1:m4", {
      id: "checkpoint:1:m4",
      generation: 1,
      coveredRange: { fromEntryId: null, toEntryId: "m4" },
      firstKeptEntryId: "m5",
      tokensBefore: 0,
      tokensAfter: 0,
      summarizer: { kind: "extractive", promptVersion: "test" },
      text: "Goal: fix the failing tests.",
      createdAt: "2026-01-01T00:00:00.000Z"
    })
    const items = req.cheap.view.items.filter(
      (item) => Number(item.entryId.slice(1)) === 0 || Number(item.entryId.slice(1)) > 4
    )
    const view = { ...req.cheap.view, items: [items[0]!, checkpoint, ...items.slice(1)] }
    const cheap = { ...req.cheap, view, after: req.measurer.measure(view, { budget: req.budget }) }
    const result = Reduce.reduce({ ...reduceInput(req, Math.floor(cheap.after.inputTokens / 2)), cheap })
    if (result instanceof Errors.BudgetExceeded) throw result
    expect(result.view.items.find((item) => item.source === "checkpoint")).toEqual(checkpoint)
    expect(result.edits.some((edit) => "entryId" in edit && edit.entryId === checkpoint.entryId)).toBe(false)
  })
})
