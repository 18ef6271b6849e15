/**
 * One ask, then a long loop of edit steps: the turn in progress alone grows
 * over the budget. The trims cut old results to placeholders, but the edit
 * inputs and the steps themselves stayed, and the window never drops the
 * turn in progress: requests went out over the model's context window (new-
 * user trial 2: 35 of 70 requests over the 5,200-token budget at an 8K
 * window, the largest 10,314 tokens). The last resort now drops the turn's
 * oldest steps (its ask and latest step stay).
 */
import type { Message } from "@context-engine/core"
import { SlidingWindowEngine, TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as ContextController from "../src/ContextController.ts"

const model = { provider: "test", modelId: "test-model" }
const messagesAsk = [{ type: "text" as const, text: "Refactor the whole theme module, file by file." }]
const policy = { model: "test-model", contextWindowTokens: 8_000, maxOutputTokens: 2_000 }

const loop = async (engine: "sliding-window" | "tiered", steps: number) => {
  const events: Array<ContextController.ContextEvent> = []
  const controller = ContextController.make({
    engine: engine === "tiered" ? TieredSummaryEngine.makeAsync() : SlidingWindowEngine.makeAsync(),
    policy,
    onEvent: (event) => events.push(event)
  })
  const messages: Array<Message.Message> = [{ role: "user", content: messagesAsk }]
  const sent: Array<ReadonlyArray<Message.Message>> = []
  for (let step = 0; step < steps; step++) {
    messages.push({
      role: "assistant",
      content: [
        { type: "text", text: `Now editing file ${step}.` },
        {
          type: "tool-call",
          toolCallId: `c${step}`,
          toolName: "edit",
          input: {
            path: `src/theme/f${step}.ts`,
            oldText: `${"x".repeat(200)}${step}`,
            newText: `${"y".repeat(200)}${step}`
          }
        }
      ]
    })
    messages.push({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: `c${step}`,
          toolName: "edit",
          output: { type: "text", value: `edited src/theme/f${step}.ts\n${"diff line\n".repeat(30)}` }
        }
      ]
    })
    sent.push((await controller.prepare(model, messages, [])).messages)
  }
  const requests = events.flatMap((event) => (event.type === "request" ? [event] : []))
  return { requests, sent, compactions: events.filter((event) => event.type === "compaction").length }
}

describe("a long tool loop in one turn stays under the budget", () => {
  for (const engine of ["sliding-window", "tiered"] as const)
    it(`${engine}: 70 edit steps at an 8K window — every request fits, the ask and the latest step are sent, few compactions`, async () => {
      const { requests, sent, compactions } = await loop(engine, 70)
      expect(requests).toHaveLength(70)
      for (const request of requests) expect(request.inputTokens).toBeLessThanOrEqual(request.budgetTokens)
      const last = sent.at(-1)!
      // The ask is sent word for word, as a message of its own (after the checkpoint, when the tiered engine wrote one).
      const texts = last.map((message) => JSON.stringify(message.content))
      expect(texts.some((text) => text === JSON.stringify(messagesAsk))).toBe(true)
      expect(JSON.stringify(last.at(-1))).toContain("c69")
      // The turn's steps go down to the low-water mark like the window's turns: not a compaction (a prompt-cache
      // rewrite) at every step or every other one (aimed at the budget: 40 compactions in 70 steps).
      expect(compactions).toBeLessThan(70 / 4)
    })
})
