/**
 * The spans the README says an application collects through the middleware
 * are the spans the middleware emits: the README listed a
 * `context_engine.measure` span that only the engine's Promise face made
 * (session-4 new-user trial, F8 side note). Every request the controller
 * assembles now has one, with the tokens the request event reports.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "@context-engine/core/test-support"
import { TieredSummaryEngine } from "@context-engine/engines"
import { trace } from "@opentelemetry/api"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { longHistory, smallPolicy, windowedModel } from "./support/MockProvider.ts"

const exporter = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))

const policy = smallPolicy()

describe("telemetry through the middleware", () => {
  it("every span the README lists is emitted, and each request sent has a measure span with its tokens", async () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const section = readme.slice(readme.indexOf("### Rollout and telemetry"))
    const listed = section
      .slice(section.indexOf("to collect"), section.indexOf(" spans ("))
      .match(/context_engine\.\w+/g)
    expect(listed).toContain("context_engine.measure")

    const events: Array<ContextEvent> = []
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    const middleware = contextEngineMiddleware({
      engine: TieredSummaryEngine.make(),
      policy,
      onEvent: (event) => events.push(event)
    })
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages = longHistory(12) as Array<ModelMessage>
    await generateText({ model: wrapped, messages })
    await generateText({ model: wrapped, messages: [...messages, { role: "user", content: "And the tests?" }] })
    expect(calls).toHaveLength(2)
    expect(events.some((event) => event.type === "compaction")).toBe(true)

    const spans = exporter.getFinishedSpans()
    expect(new Set(spans.map((span) => span.name))).toEqual(new Set(listed))
    const measures = spans.filter((span) => span.name === "context_engine.measure")
    const requests = events.flatMap((event) => (event.type === "request" ? [event] : []))
    expect(measures.map((span) => span.attributes["context_engine.tokens.request.input"])).toEqual(
      requests.map((request) => request.inputTokens)
    )
    expect(measures.map((span) => span.attributes["context_engine.budget_tokens"])).toEqual(
      requests.map((request) => request.budgetTokens)
    )
    expect(measures[0]!.attributes["context_engine.engine"]).toBe("tiered-summary")
  })
})
