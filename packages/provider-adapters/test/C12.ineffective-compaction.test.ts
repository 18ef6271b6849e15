/**
 * Shared case C12 (../shared/cases): a compaction that does not shrink the
 * request is rejected and falls to the next tier, with a model summarizer
 * answering the case's replies. A: a valid short summary that leaves the
 * request over budget — the engine goes on to clamp the protected test output
 * and reports success only when the request fits. B: a summary larger than
 * what it replaces — rejected, nothing committed, the range is not summarized
 * again in the pass, and the request still fits after the deterministic tiers.
 * C: through the middleware with an overstated window (as in C11): the
 * provider rejects the request, the recovery compaction's summary (reply B)
 * is rejected like B and does not count, a reducing tier makes the retry
 * fit, and exactly one retry is sent; when nothing fits, the original
 * overflow error surfaces after that one retry.
 */
import { APICallError } from "@ai-sdk/provider"
import { Errors, type Message, type ModelPolicy } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import type { ContextEvent } from "../src/ContextEvent.ts"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import { type CaseReply, replyModel, toEntries } from "./support/CaseModel.ts"
import { pairingIntact, windowedModel } from "./support/MockProvider.ts"

interface C12 {
  readonly policy: Cases.CasePolicy
  readonly messages: Array<Message.Message>
  readonly summarizerReplies: { readonly A: Array<CaseReply>; readonly B: Array<CaseReply> }
  readonly providerReality: {
    readonly configuredPolicy: {
      readonly contextWindow: number
      readonly maxOutputTokens: number
      readonly keepRecentTokens: number
    }
    readonly contextWindow: number
  }
}

const c12 = loadCase<C12>("C12")
const policy = Cases.policySync(c12.policy, "C12")

const compactWith = async (replies: ReadonlyArray<CaseReply>) => {
  const { model, prompts } = replyModel(replies)
  const engine = TieredSummaryEngine.makeAsync({
    summarizer: LanguageModelSummarizer.make({ model }),
    fallbackSummarizer: null,
    memory: { extractor: null }
  })
  const entries = toEntries(c12.messages)
  const before = JSON.stringify(entries)
  const input = { entries, policy }
  expect((await engine.shouldCompact(input)).compact).toBe(true)
  const result = await engine.compact(input)
  expect(JSON.stringify(entries)).toBe(before)
  // A second pass on the result needs no compaction.
  const next = [...entries, ...result.entriesToAppend]
  expect((await engine.shouldCompact({ entries: next, policy })).reasons).not.toContain("threshold")
  return { result, prompts }
}

describe("C12: a compaction that does not shrink the request is rejected and falls to the next tier", () => {
  it("C12 A: the summary leaves the request over budget; the pass goes on until the request fits", async () => {
    const { result, prompts } = await compactWith(c12.summarizerReplies.A)
    // The deterministic tiers run first (the protected test output is clamped), then the summary; one call.
    expect(prompts).toHaveLength(1)
    expect(result.stages.find((stage) => stage.stage === "clamp")?.status).toBe("applied")
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    expect(result.after.inputTokens).toBeLessThan(result.before.inputTokens)
  })

  it("C12 B: a summary larger than what it replaces is rejected, asked once, nothing committed, the request fits", async () => {
    const { result, prompts } = await compactWith(c12.summarizerReplies.B)
    expect(prompts).toHaveLength(1)
    expect(result.checkpoint).toBeUndefined()
    expect(result.entriesToAppend.filter((entry) => entry.kind === "checkpoint")).toEqual([])
    const rejected = result.failures?.find((f): f is Errors.ValidationFailed => f instanceof Errors.ValidationFailed)
    expect(rejected?.failedChecks).toContain("smaller-than-replaced")
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.note).toMatch(/does not shrink/)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
  })
})

describe("C12 C: the recovery compaction's summary is rejected and does not count as the one compact-and-retry", () => {
  const reality = c12.providerReality
  const configured: Partial<ModelPolicy.ModelPolicy> = {
    model: "claude-test",
    contextWindowTokens: reality.configuredPolicy.contextWindow,
    maxOutputTokens: reality.configuredPolicy.maxOutputTokens,
    reserveTokens: reality.configuredPolicy.maxOutputTokens,
    keepRecentTokens: reality.configuredPolicy.keepRecentTokens,
    tokenizer: "o200k_base"
  }
  const system = c12.messages[0]!.content as string
  const history = c12.messages.slice(1) as Array<ModelMessage>

  const setup = (options: { readonly rejectAll?: boolean } = {}) => {
    const summarizer = replyModel(c12.summarizerReplies.B)
    const engine = TieredSummaryEngine.makeAsync({
      summarizer: LanguageModelSummarizer.make({ model: summarizer.model }),
      fallbackSummarizer: null,
      memory: { extractor: null }
    })
    const events: Array<ContextEvent> = []
    const provider = windowedModel({
      windowTokens: reality.contextWindow,
      maxOutputTokens: reality.configuredPolicy.maxOutputTokens,
      replies: () => ({ text: "Reading the suite failures now." }),
      ...options
    })
    const middleware = contextEngineMiddleware({ engine, policy: configured, onEvent: (event) => events.push(event) })
    return {
      events,
      calls: provider.calls,
      prompts: summarizer.prompts,
      model: wrapLanguageModel({ model: provider.model, middleware })
    }
  }

  it("the request goes out under the overstated window and is rejected by the real one; one retry fits", async () => {
    const { events, calls, prompts, model } = setup()
    const { text } = await generateText({ model, system, messages: history, maxRetries: 0 })
    expect(text).toBe("Reading the suite failures now.")
    expect(calls.map((call) => call.rejected)).toEqual([true, false])
    expect(calls[1]!.tokens + reality.configuredPolicy.maxOutputTokens).toBeLessThanOrEqual(reality.contextWindow)
    expect(pairingIntact(calls[1]!.params)).toBe(true)
    // The summarizer was asked once for the range, and its (larger) summary was rejected, never committed.
    expect(prompts).toHaveLength(1)
    const compactions = events.filter((event) => event.type === "compaction")
    expect(compactions).toHaveLength(1)
    const compaction = compactions[0]! as Extract<ContextEvent, { type: "compaction" }>
    expect(compaction.reasons).toContain("overflow")
    expect(compaction.checkpointId).toBeUndefined()
    expect(compaction.stages.find((stage) => stage.stage === "checkpoint")?.note).toMatch(/does not shrink/)
    // A reducing tier made the difference: the recovery's request is smaller than the rejected one.
    expect(compaction.tokensAfter).toBeLessThan(compaction.tokensBefore)
  })

  it("when nothing fits, the original overflow error surfaces after exactly one retry", async () => {
    const { calls, model } = setup({ rejectAll: true })
    const error = await generateText({ model, system, messages: history, maxRetries: 0 }).catch(
      (caught: unknown) => caught
    )
    expect(APICallError.isInstance(error)).toBe(true)
    expect(calls).toHaveLength(2)
    expect((error as APICallError).message).toBe(
      `prompt is too long: ${calls[0]!.tokens} tokens > ${reality.contextWindow} maximum`
    )
  })
})
