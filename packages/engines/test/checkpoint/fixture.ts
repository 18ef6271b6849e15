/**
 * A small session for the checkpoint phases' tests: a system prompt and
 * `turns` turns (user ask, assistant tool call, a large tool result,
 * assistant reply), measured by the fake measurer (1 token per 4 characters
 * + 3 per message) so sizes are easy to reason about.
 */
import { ActiveView, Budget, type ContextView, type Entry, type Measurer, type Message } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { Pipeline } from "@context-engine/strategies"
import { Effect } from "effect"
import type * as Build from "../../src/checkpoint/Build.ts"
import * as Prepare from "../../src/checkpoint/Prepare.ts"
import * as ExtractiveSummarizer from "../../src/ExtractiveSummarizer.ts"
import type { SummarizeResult } from "../../src/Summarizer.ts"
import { assistant, calls, entriesOf, results, user } from "../support.ts"

export const sessionMessages = (turns: number, resultChars = 2_000): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++) {
    messages.push(user(`Please fix the failing test number ${turn} in src/module${turn}.ts now.`))
    messages.push(calls({ id: `call${turn}`, name: "read", input: { path: `src/module${turn}.ts` } }))
    messages.push(results({ id: `call${turn}`, name: "read", text: `${turn}`.repeat(resultChars) }))
    messages.push(assistant(`Fixed test ${turn} in src/module${turn}.ts.`))
  }
  return messages
}

/**
 * Everything a phase needs about one request: its entries (default: the messages as a chain of message entries),
 * view, measurer, budget and the strategies' result.
 */
export const request = (
  messages: ReadonlyArray<Message.Message>,
  contextWindow = 8_000,
  entries: ReadonlyArray<Entry.Entry> = entriesOf(messages)
) => {
  const measurer: Measurer.Measurer = FakeMeasurer.make()
  const active = ActiveView.reconstruct(entries)
  const policy = StrategyInput.policy(contextWindow, 500)
  const budget = Budget.make(policy, {
    systemTokens: active.prefix.reduce((total, item) => total + measurer.messageTokens(item.message, item.source), 0),
    toolSchemaTokens: 0
  })
  const measurement = measurer.measure(active.view, { budget })
  /** The deterministic stages' result with no stage at all (normalization only). */
  const cheap = Pipeline.run({
    view: active.view,
    strategies: [],
    targetTokens: budget.inputBudgetTokens,
    budget,
    measurer,
    policy,
    measurement
  })
  return { entries, active, measurer, policy, budget, measurement, cheap }
}

/** One request of {@link request}. */
export type Request = ReturnType<typeof request>

/** `req` with another `keepRecentTokens`. */
export const withKeepRecent = (req: Request, keepRecentTokens: number): Request => ({
  ...req,
  policy: { ...req.policy, keepRecentTokens }
})

/** Prepare's input for a manual compaction of `req`: no low-water landing, so the tail is keepRecentTokens. */
export const prepareInput = (req: Request, view: ContextView.ContextView = req.cheap.view): Prepare.PrepareInput => ({
  entries: req.entries,
  active: req.active,
  view,
  measurer: req.measurer,
  budget: req.budget,
  policy: req.policy,
  targetTokens: req.budget.inputBudgetTokens,
  lowWaterTokens: req.budget.inputBudgetTokens
})

/** The timestamp every built checkpoint of these tests carries. */
export const TIMESTAMP = "2026-01-01T00:00:00.000Z"

/**
 * What Build, Commit and Summarize start from: 8 turns with a 1,200-token
 * tail, prepared (the covered range is m1 … m24, the tail from m25).
 */
export const prepared = () => {
  const req = withKeepRecent(request(sessionMessages(8)), 1_200)
  const preparation = Prepare.prepare(prepareInput(req))
  if (preparation._tag !== "Ready") throw new Error(preparation.note)
  return { req, preparation }
}

/** Build's input for a prepared request at {@link TIMESTAMP}, aiming at `targetTokens`. */
export const buildInput = (
  req: Request,
  preparation: Prepare.Preparation,
  targetTokens: number = req.budget.inputBudgetTokens
): Build.BuildInput => ({
  preparation,
  prefix: req.active.prefix,
  tools: [],
  measurer: req.measurer,
  budget: req.budget,
  targetTokens,
  tokensBefore: req.measurement.inputTokens,
  timestamp: TIMESTAMP
})

/** The offline summary of the prepared covered range, at most 400 tokens. */
export const extractiveSummary = (req: Request, preparation: Prepare.Preparation): SummarizeResult =>
  Effect.runSync(
    ExtractiveSummarizer.make().summarize({
      covered: preparation.covered,
      maxTokens: 400,
      countTokens: req.measurer.tokenizer.count
    })
  )
