import type { Message } from "@context-engine/core"
import { ContextView } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { SlidingWindowEngine, TieredSummaryEngine } from "@context-engine/engines"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { collapseTestRuns, summarize } from "../src/CollapseTestRuns.ts"
import { session } from "../src/session.ts"

const resultText = (message: Message.Message): string => {
  const part = (message.content as ReadonlyArray<Message.ToolResultPart>)[0]!
  return part.output.type === "text" ? part.output.value : ""
}

describe("collapseTestRuns", () => {
  it("summarizes runner output", () => {
    expect(summarize("Tests: 390 passed, 10 failed, 400 total")).toBe("390 passed, 10 failed")
    expect(summarize("nothing here")).toBe("no counts")
  })

  it("keeps the newest run verbatim and collapses older ones with a reference", () => {
    const entries = session()
    const view = ContextView.fromEntries(entries)
    const { edits } = collapseTestRuns.apply({ view } as Parameters<typeof collapseTestRuns.apply>[0])
    expect(edits).toHaveLength(11)
    const after = ContextView.applyEdits(view, edits)
    const runs = after.items.filter((item) => item.message.role === "tool")
    expect(runs.slice(0, -1).every((item) => resultText(item.message).startsWith("[older test run:"))).toBe(true)
    expect(resultText(runs.at(-1)!.message)).toContain("Tests: 399 passed, 1 failed")
    expect(resultText(runs[0]!.message)).toContain(`transcript entry ${runs[0]!.entryId}`)
  })

  it("runs as a pipeline stage of the sliding-window engine and makes the request fit without the window", () => {
    const engine = SlidingWindowEngine.make({
      extraStrategies: [collapseTestRuns],
      strategies: { toolTrim: { excludeTools: ["bash"] } }
    })
    const policy = Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000 }, "example")
    const input = { entries: session(), policy }
    expect(Effect.runSync(engine.shouldCompact(input)).compact).toBe(true)
    const result = Effect.runSync(engine.compact(input))
    const stage = result.stages.find((report) => report.stage === "collapseTestRuns")
    expect(stage?.status).toBe("applied")
    expect(stage!.tokensAfter).toBeLessThan(stage!.tokensBefore)
    expect(result.stages.find((report) => report.stage === "slidingWindow")?.status).toBe("not-needed")
    expect(result.fits).toBe(true)
  })

  it("is the same option in the tiered engine: it runs after the lossless stages and before the checkpoint", () => {
    const engine = TieredSummaryEngine.make({
      extraStrategies: [collapseTestRuns],
      strategies: { toolTrim: { excludeTools: ["bash"] } }
    })
    const policy = Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000 }, "example")
    const stages = Effect.runSync(engine.plan({ entries: session(), policy })).stages
    expect(stages.slice(-3)).toEqual(["media", "collapseTestRuns", "checkpoint"])
    expect(stages).toContain("clamp")
  })
})
