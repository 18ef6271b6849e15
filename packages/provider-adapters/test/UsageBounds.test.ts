/**
 * The provider's reported usage is the truth for the request it describes,
 * but a number far outside what the request can hold (a proxy that reports
 * the wrong request, a caller's test double reporting 10 input tokens) must
 * not hide a growing request from every compaction trigger.
 */
import { ContextView, Measurer, Tokenizers } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { promptTokens, usage } from "./support/MockProvider.ts"

const draft = (turn: number): string =>
  `draft ${turn}: ${Array.from({ length: 300 }, (_, k) => `word${(turn * 7919 + k * 104729) % 100000}`).join(" ")}`

describe("reported usage far below the request", () => {
  it("cannot hide the request from compaction: 60 turns of ~1K tokens stay within the 14K input budget although usage says 10", async () => {
    const sentTokens: Array<number> = []
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        sentTokens.push(promptTokens(options))
        return {
          content: [{ type: "text", text: "fine" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: usage(10),
          warnings: []
        }
      }
    })
    const wrapped = wrapLanguageModel({
      model,
      middleware: contextEngineMiddleware({
        engine: TieredSummaryEngine.makeAsync(),
        policy: { model: "gpt-4o", contextWindowTokens: 16_000, maxOutputTokens: 2_000, tokenizer: "o200k_base" }
      })
    })
    const messages: Array<ModelMessage> = [{ role: "user", content: "Write the migration plan; ticket OPS-77." }]
    for (let turn = 0; turn < 60; turn++) {
      messages.push({ role: "assistant", content: draft(turn) }, { role: "user", content: `more please (${turn})` })
      messages.push({ role: "assistant", content: (await generateText({ model: wrapped, messages })).text })
    }
    const history = Measurer.make(Tokenizers.get("o200k_base")).measure(ContextView.fromMessages(messages)).inputTokens
    expect(history).toBeGreaterThan(50_000)
    // The local count is exact (o200k for gpt-4o), and an exact count is never scaled down to a lower usage
    // (UsageScale.minRatio): every request is within the window less the output reserve. Session 14's new-user
    // trial: with the 0.5 floor of estimates, a mock reporting 100 sent 21,631 tokens into a 16,000-token window.
    expect(Math.max(...sentTokens)).toBeLessThanOrEqual(16_000 - 2_000)
  })

  it("counts the anchored prefix at no less than its exact local count, and says so; more is believed", () => {
    const measurer = Measurer.make(Tokenizers.get("o200k_base"))
    const view = ContextView.fromMessages([
      { role: "user", content: draft(1) },
      { role: "assistant", content: draft(2) }
    ])
    const local = measurer.measure(view).inputTokens
    const low = measurer.measure(view, { anchor: { inputTokens: 10, lastEntryId: "m1" } })
    expect(low.inputTokens).toBe(local)
    expect(low.notes?.join(" ")).toContain("reported usage of 10 tokens is below the exact local count")
    const high = measurer.measure(view, { anchor: { inputTokens: local * 100, lastEntryId: "m1" } })
    expect(high.inputTokens).toBe(local * 100)
    const plausible = measurer.measure(view, { anchor: { inputTokens: local + 300, lastEntryId: "m1" } })
    expect(plausible.inputTokens).toBe(local + 300)
    expect(plausible.notes).toBeUndefined()
  })

  it("an estimated count is believed down to half of itself (another tokenizer family may count less)", () => {
    const measurer = Measurer.make(Tokenizers.get("estimate:anthropic"))
    const view = ContextView.fromMessages([
      { role: "user", content: draft(1) },
      { role: "assistant", content: draft(2) }
    ])
    const local = measurer.measure(view).inputTokens
    const low = measurer.measure(view, { anchor: { inputTokens: 10, lastEntryId: "m1" } })
    expect(low.inputTokens).toBe(Math.ceil(local * 0.5))
    expect(low.notes?.join(" ")).toContain("reported usage of 10 tokens is below 0.5 × the local count")
    const lower = Math.round(local * 0.7)
    expect(measurer.measure(view, { anchor: { inputTokens: lower, lastEntryId: "m1" } }).inputTokens).toBe(lower)
  })
})
