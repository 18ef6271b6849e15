import { type ContextView, type Entry, Measurer, type Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { messageEntry } from "./support.ts"

interface Case {
  readonly messages: Array<Message.Message>
  readonly policy: Cases.CasePolicy
  readonly providerUsage: ReadonlyArray<{ readonly requestEndsAt: number; readonly inputTokens: number }>
  readonly providerReality: {
    readonly inputTokensPerLocalEstimate: number
    readonly afterCompaction: { readonly nextUserMessage: Message.Message }
  }
}

const entry = messageEntry

const toEntries = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => entry(`m${index}`, index === 0 ? null : `m${index - 1}`, message))

describe("C13: trigger and acceptance are measured on one scale", () => {
  const c13 = loadCase<Case>("C13")
  const policy = Cases.policySync(c13.policy)
  const latest = c13.providerUsage.at(-1)!
  const ratio = c13.providerReality.inputTokensPerLocalEstimate
  // The mock provider of providerReality.rule: round(1.35 × the engine's own local estimate of what it sends).
  const local = Measurer.forPolicy(policy)
  const providerCount = (view: ContextView.ContextView) => Math.round(ratio * local.measure(view).inputTokens)

  it("C13: triggers on anchored usage, measures `after` on the same scale, fits as the provider counts, then re-anchors", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = { entries: toEntries(c13.messages), policy }
    const estimateOnly = await engine.measure(input)
    await engine.recordOutcome(input, { inputTokens: latest.inputTokens, lastEntryId: `m${latest.requestEndsAt}` })
    const decision = await engine.shouldCompact(input)
    expect(estimateOnly.inputTokens).toBeLessThan(decision.budget.inputBudgetTokens)
    expect(decision.measurement.method).toBe("anchored")
    expect(decision.measurement.inputTokens).toBeGreaterThan(decision.budget.inputBudgetTokens)
    expect(decision).toMatchObject({ compact: true, reasons: ["threshold"] })

    const result = await engine.compact(input)
    expect(result.before.inputTokens).toBe(decision.measurement.inputTokens)
    expect(result.edits.length + (result.checkpoint ? 1 : 0)).toBeGreaterThan(0)
    expect(result.after.method).not.toBe("anchored")
    expect(result.fits).toBe(true)
    const provider = providerCount(result.view)
    expect(provider).toBeLessThanOrEqual(decision.budget.inputBudgetTokens)
    expect(result.after.inputTokens).toBeGreaterThanOrEqual(Math.floor(0.95 * provider))

    // The app sends the compacted request; until its usage arrives the measurement says it is an estimate.
    const compacted = [...input.entries, ...result.entriesToAppend]
    const next = { entries: compacted, policy }
    const sent = await engine.assembleContext(next)
    expect((await engine.measure(next)).method).not.toBe("anchored")
    const usage = providerCount(sent.view)
    await engine.recordOutcome(next, { inputTokens: usage, lastEntryId: sent.view.items.at(-1)!.entryId })

    const reply: Message.Message = {
      role: "assistant",
      content: [{ type: "text", text: "Looking at the three failures now." }]
    }
    const last = compacted.at(-1)!.id
    const later = [
      ...compacted,
      entry("reply", last, reply),
      entry("ask", "reply", c13.providerReality.afterCompaction.nextUserMessage)
    ]
    const laterInput = { entries: later, policy }
    const measured = await engine.measure(laterInput)
    const appended =
      local.messageTokens(reply) + local.messageTokens(c13.providerReality.afterCompaction.nextUserMessage)
    expect(measured.method).toBe("anchored")
    expect(Math.abs(measured.inputTokens - (usage + ratio * appended))).toBeLessThanOrEqual(3)
    expect((await engine.shouldCompact(laterInput)).compact).toBe(false)
  })

  it("C13 property: the decision follows the provider's usage whichever way the local estimate disagrees", async () => {
    const entries = toEntries(c13.messages)
    const viewOf = async (upTo: number) =>
      (await TieredSummaryEngine.makeAsync().assembleContext({ entries: entries.slice(0, upTo), policy })).view
    const estimate = local.measure(await viewOf(entries.length)).inputTokens
    const prefix = local.measure(await viewOf(latest.requestEndsAt + 1)).inputTokens
    const seen = new Set<string>()
    await fc.assert(
      fc.asyncProperty(
        fc.double({ min: 0.5, max: 2, noNaN: true }),
        fc.integer({ min: 7_000, max: 14_000 }),
        async (usageRatio, contextWindow) => {
          const input = { entries, policy: Cases.policySync({ ...c13.policy, contextWindow }) }
          const engine = TieredSummaryEngine.makeAsync()
          const usage = Math.round(prefix * usageRatio)
          await engine.recordOutcome(input, { inputTokens: usage, lastEntryId: `m${latest.requestEndsAt}` })
          const decision = await engine.shouldCompact(input)
          const budget = decision.budget.inputBudgetTokens
          const anchored = usage + (usage / prefix) * (estimate - prefix)
          // Within a few tokens of the boundary rounding decides; away from it the usage does.
          fc.pre(Math.abs(anchored - budget) > 20)
          expect(decision.compact).toBe(anchored > budget)
          seen.add(`usage ${anchored > budget ? "over" : "under"}, estimate ${estimate > budget ? "over" : "under"}`)
        }
      ),
      { numRuns: 60 }
    )
    // Both disagreements were generated (and decided by the usage).
    expect(seen).toContain("usage over, estimate under")
    expect(seen).toContain("usage under, estimate over")
  })
})
