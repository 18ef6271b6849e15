/**
 * The engine kernel (issue #10 req 2): a custom strategy is the same option
 * in every engine, keeps the built-in stages and runs after the lossless
 * built-in stages, before the lossy tier; replacing the built-in stages is a
 * separate, explicitly named option; one low-water setting.
 */
import type { ContextEngine, Entry, Strategy } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Engine from "../src/Engine.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, results, user } from "./support.ts"

const BUILT_IN = ["normalize", "clamp", "dedupe", "toolTrim.soft", "toolTrim.clear", "toolTrim.clearInputs", "media"]

const noop: Strategy.Strategy = { name: "custom", apply: () => ({ edits: [] }) }

const policy = Cases.policySync({ contextWindow: 6_000, maxOutputTokens: 500 }, "kernel")

const entries: Array<Entry.Entry> = [
  user("Read the logs."),
  calls({ id: "c1", name: "read", input: { path: "a.log" } }),
  results({ id: "c1", name: "read", text: "log line\n".repeat(1_500) }),
  assistant("Read."),
  user("Now summarize them.")
].map((message, index) => ({
  id: `e${index}`,
  parentId: index === 0 ? null : `e${index - 1}`,
  timestamp: "2026-03-01T00:00:00.000Z",
  schemaVersion: 1,
  kind: "message",
  message
}))

const stagesOf = (engine: ContextEngine.ContextEngine) => Effect.runSync(engine.plan({ entries, policy })).stages

describe("Engine kernel", () => {
  // The sliding-window engine's last resort after the window (Tiers.lastResort), with or without the built-ins.
  const LAST_RESORT = [
    "lastResort:toolTrim.soft",
    "lastResort:toolTrim.clear",
    "lastResort:toolTrim.clearInputs",
    "lastResort:slidingWindow.steps",
    "lastResort:clamp.fit"
  ]

  it("extraStrategies keeps the built-in stages and runs before the lossy tier, in every engine", () => {
    expect(stagesOf(SlidingWindowEngine.make({ extraStrategies: [noop] }))).toEqual([
      ...BUILT_IN,
      "custom",
      "slidingWindow",
      ...LAST_RESORT
    ])
    expect(stagesOf(TieredSummaryEngine.make({ extraStrategies: [noop] }))).toEqual([
      ...BUILT_IN,
      "custom",
      "checkpoint"
    ])
  })

  it("replaceBuiltInStrategies replaces only the built-in stages; the deprecated function form still does", () => {
    const replace = { replaceBuiltInStrategies: () => [noop] }
    expect(stagesOf(SlidingWindowEngine.make(replace))).toEqual([
      "normalize",
      "custom",
      "slidingWindow",
      ...LAST_RESORT
    ])
    expect(stagesOf(TieredSummaryEngine.make(replace))).toEqual(["normalize", "custom", "checkpoint"])
    expect(stagesOf(TieredSummaryEngine.make({ strategies: () => [noop] }))).toEqual([
      "normalize",
      "custom",
      "checkpoint"
    ])
  })

  it("a custom stage runs and reports in a compaction of both engines", async () => {
    const seen: Array<string> = []
    const spy: Strategy.Strategy = {
      name: "spy",
      apply: () => {
        seen.push("ran")
        return { edits: [] }
      }
    }
    for (const engine of [
      SlidingWindowEngine.make({ extraStrategies: [spy] }),
      TieredSummaryEngine.make({ extraStrategies: [spy] })
    ]) {
      const result = await Effect.runPromise(engine.compact({ entries, policy }))
      const names = result.stages.map((stage) => stage.stage)
      expect(names.indexOf("spy")).toBeGreaterThan(names.indexOf("media"))
    }
    expect(seen.length).toBeGreaterThanOrEqual(1)
  })

  it("one low-water setting: a threshold compaction aims at fixed overhead + lowWaterShare × the conversation budget", () => {
    const core = Engine.kernel({ lowWaterShare: 0.25 })
    const prepared = core.prepare({ entries, policy })
    const { budget } = prepared
    const targets = core.targets({ entries, policy }, prepared)
    expect(targets.targetTokens).toBe(budget.inputBudgetTokens)
    expect(targets.lowWaterTokens).toBe(budget.fixedOverheadTokens + Math.floor(budget.availableTokens * 0.25))
    expect(core.targets({ entries, policy, manual: true }, prepared).lowWaterTokens).toBe(budget.inputBudgetTokens)
    expect(Engine.DEFAULT_LOW_WATER_SHARE).toBe(0.5)
  })

  it("edit entries: one id scheme and a deterministic default clock (the last entry's timestamp)", () => {
    const core = Engine.kernel({})
    const edit = { op: "drop" as const, entryId: "e1", strategy: "custom", reason: "r" }
    const made = core.editEntries({ entries, policy }, [edit, edit], core.timestamp({ entries, policy }))
    expect(made.map((entry) => [entry.id, entry.parentId, entry.timestamp])).toEqual([
      ["e4/edit/0", "e4", "2026-03-01T00:00:00.000Z"],
      ["e4/edit/1", "e4/edit/0", "2026-03-01T00:00:00.000Z"]
    ])
  })
})
