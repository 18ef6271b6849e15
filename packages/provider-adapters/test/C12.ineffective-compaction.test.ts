/**
 * Shared case C12 (../shared/cases): a compaction that does not shrink the
 * request is rejected and falls to the next tier, with a model summarizer
 * answering the case's replies. A: a valid short summary that leaves the
 * request over budget — the engine goes on to clamp the protected test output
 * and reports success only when the request fits. B: a summary larger than
 * what it replaces — rejected, nothing committed, the range is not summarized
 * again in the pass, and the request still fits after the deterministic tiers.
 */
import { Errors, type Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import { type CaseReply, replyModel, toEntries } from "./support/CaseModel.ts"

interface C12 {
  readonly policy: Cases.CasePolicy
  readonly messages: Array<Message.Message>
  readonly summarizerReplies: { readonly A: Array<CaseReply>; readonly B: Array<CaseReply> }
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
