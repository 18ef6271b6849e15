/**
 * A compaction that falls a little short of the input budget sends its best reduction, not the unreduced
 * request (new-user trial: a 3,452-token reduction missed a 3,200-token budget, the raw request went out instead,
 * the breaker opened after three such misses and requests grew to 27,832 tokens in an 8,000-token window).
 */
import { Errors } from "@context-engine/core"
import { SlidingWindowEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { promptTokens, smallPolicy, windowedModel } from "./support/MockProvider.ts"

describe("a compaction short of the budget", () => {
  it("sends the engine's best reduction and reports the shortfall; requests never grow with the history", async () => {
    const events: Array<ContextEvent> = []
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    // input budget 4,000 − 1,000 reserve − 200 margin = 2,800
    const policy = smallPolicy(4_000)
    const wrapped = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({
        engine: SlidingWindowEngine.make(),
        policy,
        onEvent: (event) => events.push(event)
      })
    })
    // The latest ask alone (≈ 3,000 o200k tokens) is over the budget; the user's own words are never clamped.
    const ask = `Please review: ${"the parser must keep the source offsets of every token it reads. ".repeat(250)}`
    const messages: Array<ModelMessage> = []
    for (let turn = 0; turn < 12; turn++)
      messages.push(
        { role: "user", content: `turn ${turn}: ${"alpha beta gamma delta ".repeat(60)}` },
        { role: "assistant", content: `done ${turn}` }
      )
    for (let step = 0; step < 3; step++) {
      messages.push({ role: "user", content: `${ask} (step ${step})` })
      await generateText({ model: wrapped, messages })
      messages.push({ role: "assistant", content: "ok" })
    }
    expect(calls).toHaveLength(3)
    for (const call of calls) {
      // Only the ask went out: every earlier turn was dropped by the window, none sent raw.
      expect(call.params.prompt).toHaveLength(1)
      expect(promptTokens(call.params)).toBeLessThan(3_300)
    }
    const failed = events.filter((event) => event.type === "compaction-failed")
    expect(failed).toHaveLength(3)
    for (const event of failed) expect(event.error).toBeInstanceOf(Errors.BudgetExceeded)
  })
})
