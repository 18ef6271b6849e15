/**
 * The decision measures the request that will be sent. Found by the
 * session-4 new-user trial: replaying pi's large session in a 200K window
 * sent requests of 163,986 and 164,249 tokens against a 163,616-token budget
 * without compacting, because `shouldCompact` measured the view before the
 * normalize stage synthesized results for 18 unanswered tool calls
 * (813 tokens) and `assembleContext` measured it after.
 */
import { type ContextEngine, type Entry, type Message, PolicyRegistry, RequestShape } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, entriesOf, user } from "./support.ts"

// 24 parallel edits the user interrupted: no result was recorded for any of them.
const interrupted: Message.Message = {
  role: "assistant",
  content: Array.from({ length: 24 }, (_, index) => ({
    type: "tool-call" as const,
    toolCallId: `call-${index}`,
    toolName: "edit",
    input: { path: `src/file-${index}.ts`, oldText: "a", newText: "b" }
  }))
}
const session = entriesOf([
  user("Rename the option in every source file."),
  interrupted,
  user("stop — I will do it by hand"),
  assistant("Stopped."),
  user("Now explain what the option does.")
])

const engines: ReadonlyArray<[string, () => ContextEngine.AsyncContextEngine]> = [
  ["tiered-summary", () => TieredSummaryEngine.makeAsync()],
  ["sliding-window", () => SlidingWindowEngine.makeAsync()]
]

/**
 * Asserts, at each window of `windows`, that compaction is due exactly when the assembled request is over the
 * budget; returns whether some window put the sent request over it by at most `nearTokens` (the boundary was seen).
 */
const dueExactlyWhenSentIsOver = async (
  makeEngine: () => ContextEngine.AsyncContextEngine,
  entries: ReadonlyArray<Entry.Entry>,
  windows: { readonly from: number; readonly to: number; readonly by: number },
  maxOutputTokens: number,
  nearTokens: number
): Promise<boolean> => {
  let sawTipOver = false
  for (let windowTokens = windows.from; windowTokens <= windows.to; windowTokens += windows.by) {
    const policy = PolicyRegistry.resolveSync({
      model: "decision-test",
      contextWindowTokens: windowTokens,
      maxOutputTokens
    })
    const engine = makeEngine()
    const input = { entries, policy }
    const decision = await engine.shouldCompact(input)
    const sent = (await engine.assembleContext(input)).measurement.inputTokens
    expect(decision.compact, `window ${windowTokens}`).toBe(sent > decision.budget.inputBudgetTokens)
    if (sent > decision.budget.inputBudgetTokens && sent - nearTokens <= decision.budget.inputBudgetTokens)
      sawTipOver = true
  }
  return sawTipOver
}

describe.each(engines)("%s: shouldCompact measures what assembleContext sends", (_name, makeEngine) => {
  it("the decision's measurement is the assembled request's, and the pairing repair is what differs", async () => {
    const policy = PolicyRegistry.resolveSync({
      model: "decision-test",
      contextWindowTokens: 200_000,
      maxOutputTokens: 4_096
    })
    const engine = makeEngine()
    const input = { entries: session, policy }
    const decision = await engine.shouldCompact(input)
    const assembled = await engine.assembleContext(input)
    // 24 results were synthesized, so the sent request is larger than the raw view.
    expect(
      assembled.messages.filter((message) => message.role === "tool").flatMap((message) => message.content)
    ).toHaveLength(24)
    expect(decision.measurement.inputTokens).toBe(assembled.measurement.inputTokens)
    expect((await engine.measure(input)).inputTokens).toBe(assembled.measurement.inputTokens)
  })

  it("at every window around the boundary, compaction is due exactly when the sent request is over the budget", async () => {
    // Within the synthesized results' tokens of the budget: the raw view fits, the sent request does not.
    const sawTipOver = await dueExactlyWhenSentIsOver(
      makeEngine,
      session,
      { from: 2_400, to: 3_400, by: 20 },
      1_024,
      300
    )
    expect(sawTipOver).toBe(true)
  })

  it("a compaction reports as `before` what its decision measured (the sent request), not the raw view", async () => {
    // Session 4: the compaction's before / tokensBefore (events, OTel, the CLI's Decision line) was the raw view's
    // count while the decision measured the normalized request — two numbers for one request.
    const policy = PolicyRegistry.resolveSync({
      model: "decision-test",
      contextWindowTokens: 1_900,
      maxOutputTokens: 512
    })
    const engine = makeEngine()
    const input = { entries: session, policy }
    const decision = await engine.shouldCompact(input)
    expect(decision.compact).toBe(true)
    const result = await engine.compact(input)
    expect(result.before).toEqual(decision.measurement)
    // The normalize stage's own report still shows the growth it caused, from the raw view up to what is sent.
    const normalize = result.stages.find((stage) => stage.stage === "normalize")
    expect(normalize?.tokensAfter).toBe(decision.measurement.inputTokens)
    expect(normalize!.tokensBefore).toBeLessThan(decision.measurement.inputTokens)
    if (result.checkpoint !== undefined) expect(result.checkpoint.tokensBefore).toBe(decision.measurement.inputTokens)
  })
})

// Found by the session-13 replay of aider's history in a 32K window: a request of 13,773 tokens went out against a
// 13,760-token budget without compacting, because the threshold measured the normalized view and assembleContext
// then marked a recorded `/diff` at the request's end as executed (C18), 15 tokens more.
const withCommand = entriesOf([
  user("Fix the off-by-one in the pager of src/pager.ts."),
  assistant(`Fixed the pager: ${"the last page now shows its final row. ".repeat(40)}`),
  user("/diff"),
  user("Now explain why the last row was lost.")
])

describe.each(engines)("%s: the threshold measures the request's executed-command marks", (_name, makeEngine) => {
  it("the decision's measurement is the assembled request's, which carries the mark", async () => {
    const policy = PolicyRegistry.resolveSync({
      model: "decision-test",
      contextWindowTokens: 200_000,
      maxOutputTokens: 4_096
    })
    const engine = makeEngine()
    const input = { entries: withCommand, policy }
    const assembled = await engine.assembleContext(input)
    expect(JSON.stringify(assembled.messages)).toContain(RequestShape.EXECUTED_COMMAND_MARK)
    expect((await engine.shouldCompact(input)).measurement.inputTokens).toBe(assembled.measurement.inputTokens)
    expect((await engine.measure(input)).inputTokens).toBe(assembled.measurement.inputTokens)
  })

  it("at every window around the boundary, compaction is due exactly when the marked request is over the budget", async () => {
    // Within the mark's tokens of the budget: the unmarked view fits, the sent request does not.
    const sawTipOver = await dueExactlyWhenSentIsOver(makeEngine, withCommand, { from: 700, to: 820, by: 2 }, 256, 15)
    expect(sawTipOver).toBe(true)
  })
})

// Found by the session-14 probe: a manual compaction stopped at its target measuring the view, and assembling marked
// the trailing commands — the request went out 56 tokens over the budget (1,340 against 1,284).
const endingOnCommands = entriesOf([
  ...Array.from({ length: 12 }, (_, turn) => [
    user(`Step ${turn}: change src/mod${turn}.ts so the pager keeps its last row. ${"Explain it. ".repeat(10)}`),
    assistant(`Changed src/mod${turn}.ts: ${"the last page now shows its final row. ".repeat(20)}`)
  ]).flat(),
  user("/diff"),
  user("/status"),
  user("/cost"),
  user("Now explain why the last row was lost."),
  user("/diff")
])

describe.each(engines)("%s: a compaction leaves room for the request's executed-command marks", (_name, makeEngine) => {
  it("at every window, the request assembled after a manual or automatic compaction is within the budget", async () => {
    let closestTokens = Number.POSITIVE_INFINITY
    let compactions = 0
    for (let windowTokens = 1_200; windowTokens <= 2_000; windowTokens += 13) {
      const policy = PolicyRegistry.resolveSync({
        model: "decision-test",
        contextWindowTokens: windowTokens,
        maxOutputTokens: 256
      })
      for (const manual of [false, true]) {
        const engine = makeEngine()
        const input = { entries: endingOnCommands, policy, manual }
        const decision = await engine.shouldCompact(input)
        if (!decision.compact) continue
        // A manual compaction aimed at the budget itself (a caller's plan; the sliding window's own manual target
        // keeps only the recent tokens).
        const result = manual
          ? await engine.compact(input, {
              ...(await engine.plan(input)),
              targetTokens: decision.budget.inputBudgetTokens
            })
          : await engine.compact(input)
        const sent = (
          await engine.assembleContext({ entries: [...endingOnCommands, ...result.entriesToAppend], policy })
        ).measurement
        expect(sent.inputTokens, `window ${windowTokens}, manual ${manual}`).toBeLessThanOrEqual(sent.budgetTokens)
        closestTokens = Math.min(closestTokens, sent.budgetTokens - sent.inputTokens)
        compactions++
      }
    }
    expect(compactions).toBeGreaterThan(60)
    // The boundary was reached: some compaction filled the budget to within the marks' tokens.
    expect(closestTokens).toBeLessThan(20)
  })
})
