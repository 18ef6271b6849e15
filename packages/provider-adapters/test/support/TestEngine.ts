/**
 * A small in-test `ContextEngine`: real measurement (core `Measurer` on the
 * policy's tokenizer), compaction by dropping the oldest whole units (a tool
 * call and its results move together) outside the system prompt and the
 * latest user turn, recorded as `drop` edit entries. Records every outcome so
 * tests can assert on `recordOutcome`.
 */
import {
  Budget,
  type ContextEngine,
  ContextView,
  type Entry,
  Errors,
  Measurer,
  Tokenizers,
  Turns,
  type ViewEdit
} from "@context-engine/core"
import { Effect } from "effect"

export interface TestEngine extends ContextEngine.ContextEngine {
  readonly outcomes: Array<{ readonly policyWindow: number; readonly outcome: ContextEngine.Outcome }>
  readonly compactions: Array<{ readonly reasons: ReadonlyArray<string>; readonly targetTokens: number }>
}

export const make = (options: { readonly failCompaction?: boolean } = {}): TestEngine => {
  const outcomes: TestEngine["outcomes"] = []
  const compactions: TestEngine["compactions"] = []
  const viewOf = (input: ContextEngine.EngineInput): ContextView.ContextView => {
    const edits = input.entries.flatMap(
      (entry: Entry.Entry): ReadonlyArray<ViewEdit.ViewEdit> => (entry.kind === "edit" ? [entry.edit] : [])
    )
    return ContextView.applyEdits(ContextView.fromEntries(input.entries, input.tools ?? []), edits)
  }
  const measureView = (input: ContextEngine.EngineInput, view: ContextView.ContextView) => {
    const measurer = Measurer.make(Tokenizers.forPolicy(input.policy))
    const systemTokens = view.items
      .filter((item) => item.message.role === "system")
      .reduce((sum, item) => sum + measurer.messageTokens(item.message), 0)
    const budget = Budget.make(input.policy, {
      systemTokens,
      toolSchemaTokens: measurer.toolSchemaTokens(view.tools)
    })
    return { measurement: measurer.measure(view, { budget }), budget, measurer }
  }
  const decide = (input: ContextEngine.EngineInput): ContextEngine.CompactionDecision => {
    const { measurement, budget } = measureView(input, viewOf(input))
    const compact = input.manual === true || measurement.inputTokens > budget.inputBudgetTokens * 0.9
    return { compact, reasons: compact ? ["threshold"] : [], measurement, budget }
  }
  const plan = (input: ContextEngine.EngineInput): ContextEngine.CompactionPlan => {
    const { budget } = measureView(input, viewOf(input))
    return { reasons: ["threshold"], targetTokens: Math.floor(budget.inputBudgetTokens * 0.6), stages: ["dropOldest"] }
  }
  return {
    specificationVersion: "v1",
    name: "test-engine",
    outcomes,
    compactions,
    measure: (input) => Effect.succeed(measureView(input, viewOf(input)).measurement),
    shouldCompact: (input) => Effect.succeed(decide(input)),
    plan: (input) => Effect.succeed(plan(input)),
    compact: (input, given) =>
      Effect.suspend(() => {
        const chosen = given ?? plan(input)
        compactions.push({ reasons: chosen.reasons, targetTokens: chosen.targetTokens })
        if (options.failCompaction) {
          return Effect.fail(
            new Errors.BudgetExceeded({ requestTokens: 0, budgetTokens: 0, reason: "configured to fail" })
          )
        }
        let view = viewOf(input)
        const before = measureView(input, view).measurement
        const edits: Array<ViewEdit.ViewEdit> = []
        while (measureView(input, view).measurement.inputTokens > chosen.targetTokens) {
          const units = Turns.units(view.items)
          const latestUser = Turns.latestUserIndex(view.items)
          // Droppable: not a system message, not the latest user message, not one of the two newest units.
          const unit = units
            .slice(0, -2)
            .find(
              (span) =>
                view.items[span.start]!.message.role !== "system" &&
                !(span.start <= latestUser && latestUser < span.end)
            )
          if (unit === undefined) break
          const dropped = view.items.slice(unit.start, unit.end).map(
            (item): ViewEdit.ViewEdit => ({
              op: "drop",
              entryId: item.entryId,
              strategy: "dropOldest",
              reason: "oldest unit"
            })
          )
          edits.push(...dropped)
          view = ContextView.applyEdits(view, dropped)
        }
        const after = measureView(input, view).measurement
        let parentId = input.entries.at(-1)?.id ?? null
        const entriesToAppend = edits.map((edit, index): Entry.Entry => {
          const id = `edit:${input.entries.length}:${index}:${edit.op === "drop" ? edit.entryId : ""}`
          const entry: Entry.Entry = {
            id,
            parentId,
            timestamp: new Date(0).toISOString(),
            schemaVersion: 1,
            kind: "edit",
            edit
          }
          parentId = id
          return entry
        })
        return Effect.succeed({
          view,
          edits,
          entriesToAppend,
          stages: [],
          before,
          after,
          fits: after.inputTokens <= chosen.targetTokens
        })
      }),
    validate: () => Effect.succeed({ ok: true, checks: [], identifierRetention: 1, missing: [] }),
    assembleContext: (input) =>
      Effect.sync(() => {
        const view = viewOf(input)
        return { messages: ContextView.toMessages(view), view, measurement: measureView(input, view).measurement }
      }),
    recordOutcome: (input, outcome) =>
      Effect.sync(() => {
        outcomes.push({ policyWindow: input.policy.contextWindowTokens, outcome })
      })
  }
}
