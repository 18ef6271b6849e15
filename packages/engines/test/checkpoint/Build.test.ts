import { Checkpoint, type ContextEngine } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Build from "../../src/checkpoint/Build.ts"
import { buildInput, extractiveSummary, prepared } from "./fixture.ts"

const setup = () => {
  const { req, preparation } = prepared()
  const input = (targetTokens?: number): Build.BuildInput => buildInput(req, preparation, targetTokens)
  return { req, preparation, input, summary: extractiveSummary(req, preparation) }
}

describe("Build.build", () => {
  it("builds the checkpoint of a summary, the view prefix → checkpoint → tail, and validates it", () => {
    const { req, preparation, input, summary } = setup()
    const built = Build.build(input(), summary)
    expect(built.checkpoint).toMatchObject({
      id: "checkpoint:1:m24",
      generation: 1,
      coveredRange: { fromEntryId: null, toEntryId: "m24" },
      firstKeptEntryId: "m25",
      tokensBefore: req.measurement.inputTokens,
      createdAt: "2026-01-01T00:00:00.000Z",
      content: summary.content
    })
    // the covered user messages (every turn's first message) kept verbatim after the checkpoint, then the tail
    expect(built.extra.view.items.map((item) => item.entryId)).toEqual([
      "m0",
      "checkpoint:1:m24",
      "m1",
      "m5",
      "m9",
      "m13",
      "m17",
      "m21",
      ...preparation.tail.map((item) => item.entryId)
    ])
    expect(built.checkpoint.keptUserEntryIds).toEqual(["m1", "m5", "m9", "m13", "m17", "m21"])
    expect(built.checkpoint.tokensAfter).toBe(built.extra.after.inputTokens)
    expect(built.extra.after.inputTokens).toBeLessThan(req.measurement.inputTokens)
    expect(built.report.ok).toBe(true)
    expect(built.checkpoint.validation).toEqual(built.report)
  })

  it("fails validation for an empty summary and for a request over the target", () => {
    const { input, summary } = setup()
    const empty = Build.build(input(), { ...summary, content: Checkpoint.emptyContent() })
    expect(empty.report.ok).toBe(false)
    const over = Build.build(input(100), summary)
    expect(over.report.ok).toBe(false)
    expect(over.report.checks.find((check) => check.name === "next-request-fits")?.ok).toBe(false)
  })

  it("continues a previous checkpoint's range from where the preparation says the new range starts", () => {
    const { input, summary, preparation } = setup()
    const previous = Build.build(input(), summary).checkpoint
    const next = Build.build(
      {
        ...input(),
        preparation: {
          ...preparation,
          previous,
          generation: 2,
          checkpointId: "checkpoint:2:m24",
          coveredFromEntryId: "m13"
        }
      },
      summary
    )
    expect(next.checkpoint).toMatchObject({ id: "checkpoint:2:m24", generation: 2 })
    expect(next.checkpoint.coveredRange).toEqual({ fromEntryId: "m13", toEntryId: "m24" })
  })
})

describe("Build.revalidate", () => {
  it("checks only that the next request fits when a result has no checkpoint", () => {
    const { req } = setup()
    const result = {
      view: req.cheap.view,
      edits: [],
      entriesToAppend: [],
      stages: [],
      before: req.measurement,
      after: req.measurement,
      fits: false
    } satisfies ContextEngine.CompactionResult
    const report = Build.revalidate({ entries: req.entries, policy: req.policy }, result, req.measurer)
    expect(report.ok).toBe(false)
    expect(report.checks.map((check) => check.name)).toEqual(["next-request-fits"])
  })

  it("re-checks a committed checkpoint against the transcript range it names", () => {
    const { req, input, summary } = setup()
    const built = Build.build(input(), summary)
    const result = {
      view: built.extra.view,
      edits: [],
      checkpoint: built.checkpoint,
      entriesToAppend: [],
      stages: [],
      before: req.measurement,
      after: built.extra.after,
      fits: true
    } satisfies ContextEngine.CompactionResult
    const report = Build.revalidate({ entries: req.entries, policy: req.policy }, result, req.measurer)
    expect(report.ok).toBe(true)
    expect(report.identifierRetention).toBe(built.report.identifierRetention)
  })
})
