/**
 * `pnpm --filter @context-engine/example-custom-strategy start`: runs the
 * sliding-window engine with the custom strategy on a small session under a
 * 32K window and prints the stage report.
 */
import { PolicyRegistry } from "@context-engine/core"
import { SlidingWindowEngine } from "@context-engine/engines"
import { Effect } from "effect"
import { collapseTestRuns } from "./CollapseTestRuns.ts"
import { session } from "./session.ts"

// `extraStrategies` is the same option in every engine (TieredSummaryEngine too): the built-in stages
// stay, the custom one runs after the lossless stages and before the window (or the checkpoint).
const engine = SlidingWindowEngine.makeAsync({
  extraStrategies: [collapseTestRuns],
  // Leave old tool output to the custom strategy, so its effect is visible.
  strategies: { toolTrim: { excludeTools: ["bash"] } }
})
const policy = Effect.runSync(
  PolicyRegistry.fallback("example", { contextWindowTokens: 32_000, maxOutputTokens: 4_000 })
)
const input = { entries: session(), policy }

const decision = await engine.shouldCompact(input)
console.log(
  `request: ${decision.measurement.inputTokens} tokens, budget ${decision.budget.inputBudgetTokens}; compact: ${decision.compact}`
)
const result = await engine.compact(input)
console.table(
  result.stages.map((stage) => ({
    stage: stage.stage,
    status: stage.status,
    freed: stage.tokensBefore - stage.tokensAfter,
    edits: stage.edits,
    note: stage.note ?? ""
  }))
)
console.log(`after: ${result.after.inputTokens} tokens; ${result.entriesToAppend.length} edit entries to append`)
