/**
 * A system prompt larger than the input budget (wqa5 item 2): no compaction
 * can make the request fit, so it goes out unchanged — and the app is told,
 * once per request, with the numbers (`compaction-skipped` carrying
 * `FixedOverheadExceedsBudget`).
 */
import { TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import * as ContextController from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { smallPolicy, windowedModel } from "./support/MockProvider.ts"

// ≈ 3,000 tokens of o200k text: far over the 800-token input budget below.
const system = `You are a careful agent. ${"Follow every rule in this list exactly and cite it. ".repeat(300)}`

describe("fixed overhead over the input budget", () => {
  it("sends the request unchanged and emits one compaction-skipped event per request with the numbers", async () => {
    const events: Array<ContextEvent> = []
    // The provider accepts it (its window is large); only the policy's window is small.
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    // input budget 2,000 − 1,000 reserve − 200 margin = 800
    const policy = { ...smallPolicy(2_000), keepRecentTokens: 200 }
    const middleware = contextEngineMiddleware({
      engine: TieredSummaryEngine.make(),
      policy,
      onEvent: (event) => events.push(event)
    })
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages: Array<ModelMessage> = [{ role: "user", content: "Summarize the rules." }]
    await generateText({ model: wrapped, system, messages })
    await generateText({
      model: wrapped,
      system,
      messages: [...messages, { role: "assistant", content: "ok" }, { role: "user", content: "Again." }]
    })
    expect(calls).toHaveLength(2)
    expect(calls[0]!.params.prompt[0]).toEqual({ role: "system", content: system })
    const skipped = events.filter((event) => event.type === "compaction-skipped")
    expect(skipped).toHaveLength(2)
    const first = skipped[0]!
    if (first.type !== "compaction-skipped") throw new Error("unreachable")
    expect(first.error?._tag).toBe("FixedOverheadExceedsBudget")
    if (first.error?._tag !== "FixedOverheadExceedsBudget") throw new Error("unreachable")
    expect(first.error?.inputBudgetTokens).toBe(800)
    expect(first.error?.contextWindowTokens).toBe(2_000)
    expect(first.error?.reservedOutputTokens).toBe(1_000)
    expect(first.error!.fixedOverheadTokens).toBeGreaterThan(2_500)
    expect(first.reason).toContain(`Fixed overhead of ${first.error!.fixedOverheadTokens} tokens`)
    expect(first.reason).toContain("exceeds the input budget of 800 tokens (context window 2000 − reserve 1000")
    expect(first.reason).toContain("raise the context window or shorten the system prompt")
    expect(events.filter((event) => event.type === "compaction" || event.type === "compaction-failed")).toEqual([])
  })

  it("an idle return due then is skipped like the regular path: no compaction runs, none fails, the circuit stays closed", async () => {
    // Session 5 listed this as a bug (the idle return's manual compaction would run, fail and count toward the
    // circuit breaker). It does not: the engine's decision for a manual compaction says fixed-overhead-exceeded
    // and compact: false, so the controller reports it as skipped. This pins that: 3 failures would open the circuit.
    const events: Array<ContextEvent> = []
    const controller = ContextController.make({
      engine: TieredSummaryEngine.makeAsync(),
      policy: { ...smallPolicy(2_000), keepRecentTokens: 200 },
      // Every request comes 10 minutes after the previous one: past the 5-minute prompt cache (Anthropic's TTL).
      now: () => new Date(Date.now() + 10 * 60_000),
      idleReturn: { thresholdTokens: 100 },
      onEvent: (event) => events.push(event)
    })
    const model = { provider: "anthropic.messages", modelId: "claude-test" }
    const messages: Array<ModelMessage> = [{ role: "system", content: system }]
    for (let turn = 0; turn < 5; turn++) {
      messages.push({ role: "user", content: `Question ${turn} about the rules.` })
      await controller.prepare(model, [...messages], [])
      messages.push({ role: "assistant", content: `Answer ${turn}.` })
    }
    const compactionEvents = events.filter((event) => event.type !== "request")
    expect(compactionEvents.map((event) => event.type)).toEqual(Array(5).fill("compaction-skipped"))
    for (const event of compactionEvents) {
      if (event.type !== "compaction-skipped") throw new Error("unreachable")
      expect(event.error?._tag).toBe("FixedOverheadExceedsBudget")
    }
  })
})
