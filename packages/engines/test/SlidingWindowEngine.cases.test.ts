/**
 * Shared regression cases (../shared/cases) through the sliding-window
 * engine: C01, C02, C08, C09 in full; C03 (clamp) and C04 (typed
 * fixed-overhead outcome, once) at the level this tier can.
 */

import type { ContextEngine, Message, ModelPolicy } from "@context-engine/core"
import { ContextView, Entry, Errors, Measurer, Tokenizers, ToolPairing } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases, deepFreeze } from "@context-engine/core/testing"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"

interface Case {
  readonly id: string
  readonly policy: Cases.CasePolicy
  readonly messages: ReadonlyArray<Message.Message>
  readonly tools?: Record<string, { readonly description: string; readonly inputSchema?: Message.JsonValue }>
  readonly expect: ReadonlyArray<string>
}

const entriesOf = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(Date.UTC(2026, 2, 1, 0, 0, index)).toISOString(),
    schemaVersion: Entry.CURRENT_SCHEMA_VERSION,
    kind: "message",
    message
  }))

const inputOf = (c: Case, policy?: ModelPolicy.ModelPolicy): ContextEngine.EngineInput =>
  deepFreeze({
    entries: entriesOf(c.messages),
    policy: policy ?? Cases.policySync(c.policy, c.id),
    tools: Object.entries(c.tools ?? {}).map(([name, tool]) => ({
      name,
      description: tool.description,
      inputSchema: tool.inputSchema ?? { type: "object" }
    }))
  })

const run = <A, E>(effect: Effect.Effect<A, E>) => Effect.runSyncExit(effect)
const ok = <A, E>(effect: Effect.Effect<A, E>): A => {
  const exit = run(effect)
  if (Exit.isFailure(exit)) throw new Error(`expected success, got ${String(exit.cause)}`)
  return exit.value
}
const failure = <A, E>(effect: Effect.Effect<A, E>): E => {
  const exit = run(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: E } | undefined
  if (reason === undefined) throw new Error(`expected a typed failure, got ${String(exit.cause)}`)
  return reason.error
}

/** Cases are measured with the exact o200k_base tokenizer (independent of estimator calibration). */
const o200k = Measurer.make(Tokenizers.get("o200k_base"))
const makeEngine = (options: SlidingWindowEngine.Options = {}) =>
  SlidingWindowEngine.make({ measurer: () => o200k, ...options })

/** Appends a compaction's entries, as a caller would. */
const appended = (
  input: ContextEngine.EngineInput,
  result: ContextEngine.CompactionResult
): ContextEngine.EngineInput => ({
  ...input,
  entries: [...input.entries, ...result.entriesToAppend]
})

const toolParts = (messages: ReadonlyArray<Message.Message>) =>
  messages.flatMap((message) =>
    typeof message.content === "string" ? [] : Array.from(message.content as ReadonlyArray<Message.ContentPart>)
  )

const latestUser = (messages: ReadonlyArray<Message.Message>) => messages.findLast((message) => message.role === "user")

describe("C01 parallel tool batch", () => {
  const c01 = loadCase<Case>("C01")
  const batchIds = toolParts(c01.messages).flatMap((part) =>
    part.type === "tool-call" && part.toolCallId.startsWith("call_p") ? [part.toolCallId] : []
  )

  const check = (input: ContextEngine.EngineInput, result: ContextEngine.CompactionResult) => {
    const messages = ContextView.toMessages(result.view)
    expect(ToolPairing.analyze(result.view.items).problems).toEqual([])
    const parts = toolParts(messages)
    const verbatimResults = parts.filter(
      (part) =>
        part.type === "tool-result" &&
        batchIds.includes(part.toolCallId) &&
        part.output.type === "text" &&
        !part.output.value.includes("transcript entry")
    )
    const keptCalls = parts.filter((part) => part.type === "tool-call" && batchIds.includes(part.toolCallId))
    // The batch is all kept with its assistant message, or all gone.
    expect([0, batchIds.length]).toContain(keptCalls.length)
    if (keptCalls.length === 0)
      expect(parts.filter((part) => part.type === "tool-result" && batchIds.includes(part.toolCallId))).toEqual([])
    expect(verbatimResults.length).toBeLessThanOrEqual(keptCalls.length)
    expect(latestUser(messages)).toBe(latestUser(c01.messages))
    expect(ok(makeEngine().validate(input, result)).ok).toBe(true)
  }

  it("has a batch of 7 calls", () => expect(batchIds).toHaveLength(7))

  it("keeps pairing and the batch whole under the case policy (manual compaction to keepRecentTokens)", () => {
    const engine = makeEngine()
    const input = { ...inputOf(c01), manual: true }
    const result = ok(engine.compact(input))
    expect(result.after.inputTokens).toBeLessThan(result.before.inputTokens)
    check(input, result)
  })

  it("drops the batch as one unit when the window must cut through it", () => {
    const engine = makeEngine({ strategies: { clamp: { maxPartTokens: 1_000_000 } } })
    const policy = Cases.policySync(
      { contextWindow: 9_000, maxOutputTokens: 1_000, keepRecentTokens: 2_000 },
      "C01-squeezed"
    )
    const input = inputOf(c01, policy)
    const result = ok(engine.compact(input))
    check(input, result)
    expect(result.stages.find((stage) => stage.stage === "slidingWindow")?.status).toBe("applied")
  })
})

describe("C02 interrupted tool call", () => {
  const c02 = loadCase<Case>("C02")
  const resultsFor = (messages: ReadonlyArray<Message.Message>) =>
    toolParts(messages).filter((part) => part.type === "tool-result" && part.toolCallId === "call_mig")

  it("assembles exactly one synthesized interrupted result, and again after compacting twice", () => {
    const engine = makeEngine()
    const input = inputOf(c02)
    const assembled = ok(engine.assembleContext(input))
    const results = resultsFor(assembled.messages)
    expect(results).toHaveLength(1)
    const only = results[0]!
    if (only.type !== "tool-result") throw new Error("unreachable")
    expect(only.output).toEqual({ type: "error-text", value: ToolPairing.INTERRUPTED_RESULT_TEXT })
    // The transcript is not changed.
    expect(resultsFor(input.entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : [])))).toEqual([])

    const first = ok(engine.compact({ ...input, manual: true }))
    expect(resultsFor(ContextView.toMessages(first.view))).toHaveLength(1)
    const second = ok(engine.compact({ ...appended(input, first), manual: true }))
    expect(resultsFor(ContextView.toMessages(second.view))).toHaveLength(1)
    expect(resultsFor(ok(engine.assembleContext(appended(appended(input, first), second))).messages)).toHaveLength(1)
  })
})

describe("C03 oversized user message (clamp)", () => {
  const c03 = loadCase<Case>("C03")

  it("fits after one pass by clamping, keeps the transcript, and a second pass needs nothing", () => {
    const engine = makeEngine()
    const input = inputOf(c03)
    const decision = ok(engine.shouldCompact(input))
    expect(decision.compact).toBe(true)
    const result = ok(engine.compact(input))
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(decision.budget.inputBudgetTokens)
    const clamp = result.stages.find((stage) => stage.stage === "clamp")
    expect(clamp?.status).toBe("applied")
    const clamped = result.view.items.find((item) => item.entryId === "e3")!
    const text = (clamped.message.content as ReadonlyArray<Message.TextPart>)[0]!.text
    expect(text).toMatch(/clamped: \d+ of \d+ characters \(~\d+ tokens\) cut/)
    // The original is still in the transcript, unchanged.
    expect((input.entries[3] as Entry.MessageEntry).message).toBe(c03.messages[3])
    const next = appended(input, result)
    expect(ok(engine.shouldCompact(next)).compact).toBe(false)
    expect(ok(engine.measure(next)).inputTokens).toBe(result.after.inputTokens)
  })
})

describe("C04 fixed overhead over budget", () => {
  const c04 = loadCase<Case>("C04")

  it("reports the overhead separately and a typed outcome once, without compacting", () => {
    const engine = makeEngine()
    const input = inputOf(c04)
    const measurement = ok(engine.measure(input))
    expect(measurement.byCategory.system).toBeGreaterThan(0)
    expect(measurement.byCategory.toolSchemas).toBeGreaterThan(0)
    const decision = ok(engine.shouldCompact(input))
    expect(decision.compact).toBe(false)
    expect(decision.reasons).toEqual(["fixed-overhead-exceeded"])
    const error = failure(engine.compact(input))
    expect(error).toBeInstanceOf(Errors.FixedOverheadExceedsBudget)
    // The system messages with their framing (3 tokens each, MessageTokens.messageFramingTokens) and the tool schemas.
    const systemMessages = c04.messages.filter((message) => message.role === "system").length
    expect((error as Errors.FixedOverheadExceedsBudget).fixedOverheadTokens).toBe(
      measurement.byCategory.system + 3 * systemMessages + measurement.byCategory.toolSchemas
    )
    // The conversation is returned unchanged by assembleContext.
    expect(ok(engine.assembleContext(input)).messages).toEqual(c04.messages)
  })
})

describe("C08 current turn protected", () => {
  const c08 = loadCase<Case>("C08")

  it("keeps the current call and its result paired, clamps the result, keeps the latest user verbatim", () => {
    const engine = makeEngine()
    const input = inputOf(c08)
    expect(ok(engine.shouldCompact(input)).compact).toBe(true)
    const result = ok(engine.compact(input))
    expect(result.fits).toBe(true)
    const ids = result.view.items.map((item) => item.entryId)
    const last = c08.messages.length - 1
    for (const id of [`e${last - 2}`, `e${last - 1}`, `e${last}`]) expect(ids).toContain(id)
    const dump = result.view.items.find((item) => item.entryId === `e${last}`)!
    const part = (dump.message.content as ReadonlyArray<Message.ToolResultPart>)[0]!
    expect(part.toolCallId).toBe("call_dump")
    expect(part.output.type === "text" && /clamped: \d+ of \d+ characters/.test(part.output.value)).toBe(true)
    expect(result.view.items.find((item) => item.entryId === `e${last - 2}`)!.message).toBe(c08.messages[last - 2])
    expect(ToolPairing.analyze(result.view.items).problems).toEqual([])
  })

  it("drops older finished turns before anything from the current turn when clamping is not allowed to help", () => {
    const engine = makeEngine({ strategies: { clamp: { maxPartTokens: 1_000_000, maxShareOfAvailable: 1 } } })
    const policy = Cases.policySync({ contextWindow: 60_000, maxOutputTokens: 2_000 }, "C08-wide")
    const squeezed = { ...inputOf(c08, policy), manual: true }
    const result = ok(engine.compact(squeezed))
    const ids = result.view.items.map((item) => item.entryId)
    const last = c08.messages.length - 1
    for (const id of [`e${last - 2}`, `e${last - 1}`, `e${last}`]) expect(ids).toContain(id)
    expect(ids).not.toContain("e1")
  })
})

describe("C09 budget smaller than the only message", () => {
  const c09 = loadCase<Case>("C09")

  it("fails with BudgetExceeded naming the numbers; never an empty list, never a silent drop", () => {
    const engine = makeEngine()
    const input = inputOf(c09)
    const decision = ok(engine.shouldCompact(input))
    expect(decision.compact).toBe(true)
    const error = failure(engine.compact(input))
    expect(error).toBeInstanceOf(Errors.BudgetExceeded)
    const exceeded = error as Errors.BudgetExceeded
    expect(exceeded.requestTokens).toBe(decision.measurement.inputTokens)
    expect(exceeded.budgetTokens).toBe(decision.budget.inputBudgetTokens)
    expect(exceeded.message).toContain(String(exceeded.requestTokens))
    // The context the caller keeps still holds the message.
    expect(ok(engine.assembleContext(input)).messages).toEqual(c09.messages)
  })

  it("clamps the message with a marker when the policy allows clamping user input", () => {
    const engine = makeEngine({ clampLatestUserMessage: true })
    const input = inputOf(c09)
    const result = ok(engine.compact(input))
    expect(result.fits).toBe(true)
    expect(result.view.items).toHaveLength(1)
    const text = (result.view.items[0]!.message.content as ReadonlyArray<Message.TextPart>)[0]!.text
    expect(text.startsWith("Please review this document:")).toBe(true)
    expect(text).toMatch(/clamped: \d+ of \d+ characters/)
  })
})
