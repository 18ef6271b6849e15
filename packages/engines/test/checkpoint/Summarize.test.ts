import { Checkpoint, type ContextEngine, Errors } from "@context-engine/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Build from "../../src/checkpoint/Build.ts"
import * as Summarize from "../../src/checkpoint/Summarize.ts"
import type { SummarizeRequest, Summarizer } from "../../src/Summarizer.ts"
import { buildInput, extractiveSummary, prepared } from "./fixture.ts"

const setup = () => {
  const { req, preparation } = prepared()
  const input: ContextEngine.EngineInput = { entries: req.entries, policy: req.policy }
  const plan: ContextEngine.CompactionPlan = { reasons: ["manual"], targetTokens: 1_000, stages: [] }
  return { req, preparation, input, plan }
}

const content = (goal: string) => ({ ...Checkpoint.emptyContent(), goal })

describe("Summarize.beforeCompact", () => {
  it("chains the hooks: each sees the covered range and the summary the previous one supplied", async () => {
    const { preparation, input, plan } = setup()
    const seen: Array<unknown> = []
    const outcome = await Effect.runPromise(
      Summarize.beforeCompact({
        input,
        plan,
        preparation,
        hooks: [
          (event) => {
            seen.push(event.summary, event.coveredEntryIds)
            return { summary: content("first") }
          },
          (event) => {
            seen.push(event.summary?.goal)
            return undefined
          }
        ]
      })
    )
    expect(seen).toEqual([undefined, preparation.coveredEntryIds, "first"])
    expect(outcome).toEqual({ _tag: "Continue", summary: content("first") })
  })

  it("stops at a cancel with the hook's reason, and at a throwing hook with its failure", async () => {
    const { req, preparation, input, plan } = setup()
    let later = 0
    const cancelled = await Effect.runPromise(
      Summarize.beforeCompact({
        input,
        plan,
        preparation,
        hooks: [() => ({ cancel: true, reason: "user is typing" }), () => void later++]
      })
    )
    expect(cancelled).toEqual({ _tag: "Stop", note: "cancelled by a beforeCompact hook: user is typing" })
    expect(later).toBe(0)
    const threw = await Effect.runPromise(
      Summarize.beforeCompact({
        input,
        plan,
        preparation,
        hooks: [
          () => {
            throw new Error("boom")
          }
        ]
      })
    )
    if (threw._tag !== "Stop") throw new Error("expected a stop")
    expect(threw.failure).toMatchObject({ _tag: "PluginFailed", plugin: "beforeCompact[0]", failure: "threw" })
    // there is no checkpoint before this one, so none is said to be kept
    expect(threw.note).toMatch(/; no checkpoint written \(none before it\)$/)
    const { checkpoint } = Build.build(buildInput(req, preparation), extractiveSummary(req, preparation))
    const again = await Effect.runPromise(
      Summarize.beforeCompact({
        input,
        plan,
        preparation: { ...preparation, previous: checkpoint },
        hooks: [
          () => {
            throw new Error("boom")
          }
        ]
      })
    )
    if (again._tag !== "Stop") throw new Error("expected a stop")
    expect(again.note).toMatch(/; kept the previous checkpoint$/)
  })
})

describe("Summarize.summarize", () => {
  it("asks the summarizer for the prepared range under the cap and returns the built checkpoint", async () => {
    const { req, preparation } = setup()
    const requests: Array<SummarizeRequest> = []
    const summarizer: Summarizer = {
      name: "recording",
      summarize: (request) => {
        requests.push(request)
        return Effect.fail(new Errors.SummarizerFailed({ summarizer: "recording", reason: "offline" }))
      }
    }
    const build = (result: Parameters<typeof Build.build>[1]) => Build.build(buildInput(req, preparation), result)
    const failed = await Effect.runPromise(
      Summarize.summarize({
        summarizer,
        fallback: null,
        hookSummary: undefined,
        preparation,
        maxTokens: 321,
        countTokens: req.measurer.tokenizer.count,
        build
      })
    )
    expect(requests).toHaveLength(1)
    expect(requests[0]).toMatchObject({ covered: preparation.covered, turnPrefix: [], maxTokens: 321 })
    expect(failed._tag).toBe("Failed")
    expect(failed.failures[0]).toBeInstanceOf(Errors.SummarizerFailed)
  })
})
