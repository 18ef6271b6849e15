/**
 * QA session 6 (1b): with a summarizer that fails, the tiered-summary engine
 * reduces deterministically instead. That reduction aims at the low-water
 * mark, as a checkpoint compaction does, so compactions are spaced out and the
 * provider's prompt cache is rewritten only at compactions — not a request cut
 * to just under the budget that is over it again after the next turn.
 */
import { Errors } from "@context-engine/core"
import { type Summarizer, TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import type { ContextEvent } from "../src/ContextEvent.ts"

const failing: Record<string, Summarizer.Summarizer> = {
  "Effect.fail": {
    name: "broken",
    summarize: () => Effect.fail(new Errors.SummarizerFailed({ summarizer: "broken", reason: "summarizer exploded" }))
  },
  "Effect.die": { name: "broken", summarize: () => Effect.die(new Error("summarizer exploded")) }
}

const runTurns = async (summarizer: Summarizer.Summarizer, turns: number) => {
  const prompts: Array<ReadonlyArray<string>> = []
  const model = new MockLanguageModelV4({
    modelId: "gpt-4o",
    doGenerate: async (options) => {
      prompts.push(options.prompt.map((message) => JSON.stringify(message)))
      return {
        content: [{ type: "text", text: `ok ${"y ".repeat(50)}` }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: undefined, noCache: undefined, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: undefined, text: undefined, reasoning: undefined }
        },
        warnings: []
      }
    }
  })
  const events: Array<ContextEvent> = []
  const wrapped = wrapLanguageModel({
    model,
    middleware: contextEngineMiddleware({
      engine: TieredSummaryEngine.make({ summarizer, fallbackSummarizer: null }),
      policy: { contextWindowTokens: 4_000, maxOutputTokens: 500 },
      onEvent: (event) => events.push(event)
    })
  })
  const messages: Array<ModelMessage> = []
  for (let turn = 0; turn < turns; turn++) {
    messages.push({ role: "user", content: `turn ${turn} word${turn} ${"alpha beta gamma delta ".repeat(30)}` })
    const result = await generateText({ model: wrapped, messages })
    messages.push(...result.response.messages)
  }
  return { events, prompts }
}

describe("a failing summarizer's fallback reduction is spaced like checkpoint compactions", () => {
  for (const [name, summarizer] of Object.entries(failing)) {
    it(`summarizer ${name}: 40 growing turns compact a few times, each to the low-water mark`, async () => {
      const { events, prompts } = await runTurns(summarizer, 40)
      const requests = events.flatMap((event) => (event.type === "request" ? [event] : []))
      const compactions = events.flatMap((event) => (event.type === "compaction" ? [event] : []))
      expect(requests).toHaveLength(40)
      // every request went out within its budget
      for (const request of requests) expect(request.inputTokens).toBeLessThanOrEqual(request.budgetTokens)
      expect(compactions.length).toBeGreaterThan(0)
      for (const compaction of compactions) {
        expect(compaction.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("skipped")
        expect(compaction.stages.some((stage) => stage.stage === "reduce:slidingWindow")).toBe(true)
        // down to about half the budget (the low-water mark: half the conversation room), not just under it
        expect(compaction.tokensAfter).toBeLessThan(0.6 * requests[0]!.budgetTokens)
      }
      // Each turn adds ~140 tokens to a ~3,200-token budget whose low-water mark is half the conversation
      // room: a reduction to it buys ~10 turns, so no two compactions on consecutive steps.
      const compactionSteps: Array<number> = []
      let step = 0
      for (const event of events) {
        if (event.type === "request") step++
        else if (event.type === "compaction") compactionSteps.push(step + 1)
      }
      for (let index = 1; index < compactionSteps.length; index++)
        expect(compactionSteps[index]! - compactionSteps[index - 1]!).toBeGreaterThan(3)
      // The provider's prompt cache is rewritten only at compactions: every other request starts with the
      // previous request's messages (the turn appended after them).
      const cacheRewriteSteps = prompts.flatMap((prompt, index) => {
        const previous = prompts[index - 1]
        return previous?.some((message, at) => prompt[at] !== message) ? [index + 1] : []
      })
      expect(cacheRewriteSteps).toEqual(compactionSteps)
      expect(compactions.length).toBeLessThanOrEqual(4)
    }, 120_000)
  }
})
