import type { Message, Strategy } from "@context-engine/core"
import { ContextView, ToolPairing } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { Clamp, Invariants, Pipeline, ToolTrim } from "../src/index.ts"
import { call, filler, result } from "./support/views.ts"

const measurer = FakeMeasurer.make()
const policy = StrategyInput.policy(200_000)

const session = (n: number, chars: number): Array<Message.Message> => [
  { role: "system", content: "sys" },
  { role: "user", content: "go" },
  ...Array.from(
    { length: n },
    (_, index): Array<Message.Message> => [
      { role: "assistant", content: [call(`c${index}`, "read", { path: `f${index}.ts` })] },
      { role: "tool", content: [result(`c${index}`, "read", filler(chars, index + 1))] }
    ]
  ).flat(),
  { role: "user", content: "next" }
]

const run = (view: ContextView.ContextView, strategies: ReadonlyArray<Strategy.Strategy>, targetTokens: number) =>
  Pipeline.run({
    view,
    strategies,
    targetTokens,
    budget: StrategyInput.budget(policy, measurer, view),
    measurer,
    policy
  })

/** A strategy that drops one named entry. */
const dropper = (name: string, entryId: string, minReclaimTokens = 0): Strategy.Strategy => ({
  name,
  minReclaimTokens,
  apply: () => ({ edits: [{ op: "drop", entryId, strategy: name, reason: "test" }] })
})

describe("Pipeline.run", () => {
  it("skips a strategy written against another specificationVersion, and runs one that declares v1", () => {
    const view = StrategyInput.frozenView(session(2, 400))
    const fromTheFuture = { ...dropper("future", "m2"), specificationVersion: "v2" } as unknown as Strategy.Strategy
    const current: Strategy.Strategy = { ...dropper("current", "m3"), specificationVersion: "v1" }
    const outcome = run(view, [fromTheFuture, current], 1)
    expect(outcome.stages.map((stage) => [stage.stage, stage.status])).toEqual([
      ["normalize", "not-needed"],
      ["future", "skipped"],
      ["current", "applied"]
    ])
    expect(outcome.stages[1]?.note).toContain("specificationVersion v2")
    expect(outcome.edits.some((edit) => edit.strategy.startsWith("future"))).toBe(false)
    expect(outcome.edits.some((edit) => edit.strategy === "current")).toBe(true)
  })

  it("stops as soon as the view fits and reports later stages as not needed", () => {
    const view = StrategyInput.frozenView(session(6, 8_000))
    const before = measurer.measure(view).inputTokens
    const outcome = run(
      view,
      [ToolTrim.soft({ minReclaimTokens: 0 }), ToolTrim.clear({ minReclaimTokens: 0 })],
      before - 1
    )
    expect(outcome.fits).toBe(true)
    expect(outcome.stages.map((stage) => [stage.stage, stage.status])).toEqual([
      ["normalize", "not-needed"],
      ["toolTrim.soft", "applied"],
      ["toolTrim.clear", "not-needed"]
    ])
    const soft = outcome.stages[1]!
    expect(soft.tokensBefore).toBe(before)
    expect(soft.tokensAfter).toBe(measurer.measure(outcome.view).inputTokens)
    expect(soft.edits).toBe(outcome.edits.length)
    expect(soft.durationMs).toBeGreaterThanOrEqual(0)
  })

  it("re-measures exactly: reported tokens equal a fresh measurement of the result", () => {
    const view = StrategyInput.frozenView(session(12, 6_000))
    const outcome = run(view, [Clamp.make({ maxPartTokens: 1000 }), ToolTrim.clear({ minReclaimTokens: 0 })], 3_000)
    const fresh = measurer.measure(outcome.view, { budget: StrategyInput.budget(policy, measurer, view) })
    expect(outcome.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)).toEqual([
      "clamp",
      "toolTrim.clear"
    ])
    expect(outcome.after.inputTokens).toBe(fresh.inputTokens)
    expect(outcome.after.byCategory).toEqual(fresh.byCategory)
    expect(outcome.view).toEqual(ContextView.applyEdits(view, outcome.edits))
  })

  it("counts only new messages after a stage", () => {
    let counted = 0
    const counting = FakeMeasurer.make({ onCount: () => counted++ })
    const view = StrategyInput.frozenView(session(10, 8_000))
    const budget = StrategyInput.budget(policy, counting, view)
    const first = counting.measure(view, { budget })
    counted = 0
    const outcome = Pipeline.run({
      view,
      strategies: [ToolTrim.clear({ minReclaimTokens: 0 })],
      targetTokens: 0,
      budget,
      measurer: counting,
      policy,
      measurement: first
    })
    const replaced = outcome.edits.filter((edit) => edit.op === "replace").length
    expect(replaced).toBeGreaterThan(0)
    // initial per-item pass + one count per replaced message; unchanged messages are not recounted.
    expect(counted).toBe(view.items.length + replaced)
  })

  it("skips a stage that frees less than its minimum and keeps the view", () => {
    const view = StrategyInput.frozenView(session(3, 400))
    const outcome = run(view, [dropper("tiny", "m3", 1_000_000)], 0)
    expect(outcome.stages[1]).toMatchObject({ stage: "tiny", status: "skipped", edits: 0 })
    expect(outcome.stages[1]!.note).toMatch(/less than its minimum of 1000000/)
    expect(outcome.view).toBe(view)
    expect(outcome.edits).toEqual([])
  })

  it("reports a throwing strategy as skipped and goes on", () => {
    const view = StrategyInput.frozenView(session(3, 4_000))
    const boom: Strategy.Strategy = {
      name: "boom",
      apply: () => {
        throw new Error("kaput")
      }
    }
    const outcome = run(
      view,
      [boom, ToolTrim.clear({ minReclaimTokens: 0, keepRecentToolResults: 0, keepLastAssistants: 0 })],
      0
    )
    expect(outcome.stages[1]).toMatchObject({ stage: "boom", status: "skipped" })
    expect(outcome.stages[1]!.note).toContain("kaput")
    expect(outcome.stages[2]!.status).toBe("applied")
  })

  it("refuses edits to system and latest user messages and repairs pairing after a careless drop", () => {
    const view = StrategyInput.frozenView(session(3, 4_000))
    const careless: Strategy.Strategy = {
      name: "careless",
      apply: () => ({
        edits: [
          { op: "drop", entryId: "m0", strategy: "careless", reason: "system" },
          { op: "drop", entryId: "m8", strategy: "careless", reason: "latest user" },
          // Drops an assistant tool call but leaves its result: an orphan.
          { op: "drop", entryId: "m2", strategy: "careless", reason: "call" }
        ]
      })
    }
    const outcome = run(view, [careless], 0)
    expect(outcome.stages[1]!.note).toContain("2 edit(s) refused")
    expect(outcome.view.items.map((item) => item.entryId)).toEqual(["m0", "m1", "m4", "m5", "m6", "m7", "m8"])
    expect(ToolPairing.analyze(outcome.view.items).problems).toEqual([])
    expect(Invariants.check(view, outcome.view)).toEqual([])
  })

  it("synthesizes one interrupted result for an unanswered call, idempotently", () => {
    const view = StrategyInput.frozenView([
      { role: "user", content: "run it" },
      { role: "assistant", content: [call("mig", "bash", { command: "migrate" })] },
      { role: "user", content: "it crashed" }
    ])
    const first = run(view, [], 1_000_000)
    const results = (v: ContextView.ContextView) =>
      v.items
        .flatMap((item) => Array.from(item.message.content as ReadonlyArray<Message.ContentPart>))
        .filter((part) => part.type === "tool-result")
    expect(results(first.view)).toHaveLength(1)
    expect(first.view.items.map((item) => item.message.role)).toEqual(["user", "assistant", "tool", "user"])
    const second = run(first.view, [], 1_000_000)
    expect(second.edits).toEqual([])
    expect(results(ContextView.applyEdits(first.view, first.edits))).toHaveLength(1)
  })
})

describe("Pipeline normalization", () => {
  it("drops empty and reasoning-only assistant messages but never the latest user message", () => {
    const view = StrategyInput.frozenView([
      { role: "user", content: "go" },
      {
        role: "assistant",
        content: [{ type: "reasoning", text: "thinking…", providerOptions: { anthropic: { signature: "s" } } }]
      },
      { role: "assistant", content: "" },
      { role: "assistant", content: "answer" },
      { role: "user", content: "" }
    ])
    const outcome = run(view, [], 1_000_000)
    expect(outcome.view.items.map((item) => item.entryId)).toEqual(["m0", "m3", "m4"])
    expect(outcome.stages[0]).toMatchObject({ stage: "normalize", status: "applied", edits: 2 })
    expect(Invariants.check(view, outcome.view)).toEqual([])
  })
})
