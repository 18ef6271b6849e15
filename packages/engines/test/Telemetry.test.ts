import { type Entry, type Message, PolicyRegistry, Telemetry } from "@context-engine/core"
import { trace } from "@opentelemetry/api"
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace-base"
import { beforeEach, describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, entriesOf, results, user } from "./support.ts"

const exporter = new InMemorySpanExporter()
trace.setGlobalTracerProvider(new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }))
beforeEach(() => exporter.reset())

const SECRET = "sk-ant-api03-abcdefghijklmnopqrstuvwxyz0123456789"

/** A session of 12 turns, each reading a large file, with a secret pasted in the first ask. */
const session = (): Array<Entry.Entry> => {
  const messages: Array<Message.Message> = [user(`Fix the login bug in src/auth/login.ts; my key is ${SECRET}`)]
  for (let turn = 0; turn < 12; turn++) {
    messages.push(calls({ id: `c${turn}`, name: "read_file", input: { path: `src/module${turn}.ts` } }))
    messages.push(results({ id: `c${turn}`, name: "read_file", text: `export const v${turn} = 1\n`.repeat(400) }))
    messages.push(assistant(`Read src/module${turn}.ts; next I will check module ${turn + 1}.`))
    messages.push(user(`Continue with step ${turn + 1}.`))
  }
  return entriesOf(messages)
}

const policy = PolicyRegistry.resolveSync({ model: "test-model", contextWindowTokens: 24_000, maxOutputTokens: 2_000 })

describe("Telemetry", () => {
  it("emits compact, stage, summarize and validate spans whose attributes match the result", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = { entries: session(), policy, manual: true }
    const result = await engine.compact(input)
    const spans = exporter.getFinishedSpans()
    const compact = spans.find((span) => span.name === "context_engine.compact")!
    expect(compact).toBeDefined()
    const attributes = compact.attributes
    expect(attributes["gen_ai.request.model"]).toBe("test-model")
    expect(attributes["context_engine.tokens.before.input"]).toBe(result.before.inputTokens)
    expect(attributes["context_engine.tokens.after.input"]).toBe(result.after.inputTokens)
    expect(attributes["context_engine.tokens.before.toolResults"]).toBe(result.before.byCategory.toolResults)
    // Framing is its own category: 3 tokens per message + 3 priming the reply (OpenAI cookbook).
    expect(attributes["context_engine.tokens.after.framing"]).toBe(3 * result.view.items.length + 3)
    expect(attributes["context_engine.tokens.before.framing"]).toBe(3 * input.entries.length + 3)
    expect(attributes["context_engine.checkpoint.generation"]).toBe(result.checkpoint!.generation)
    const keptIds = new Set(result.view.items.map((item) => item.entryId))
    const discarded = input.entries.filter((entry) => !keptIds.has(entry.id)).length
    expect(discarded).toBeGreaterThan(0)
    expect(attributes["context_engine.discarded_entries"]).toBe(discarded)

    const children = spans.filter((span) => span.parentSpanContext?.spanId === compact.spanContext().spanId)
    const stageNames = children
      .filter((span) => span.name === "context_engine.stage")
      .map((span) => span.attributes["context_engine.stage"])
    expect(stageNames).toEqual(result.stages.map((stage) => stage.stage))
    expect(children.map((span) => span.name)).toContain("context_engine.summarize")
    const validate = children.find((span) => span.name === "context_engine.validate")!
    expect(validate.attributes["context_engine.validation.ok"]).toBe(result.checkpoint!.validation!.ok)

    const checkpointEvent = compact.events.find((event) => event.name === "context_engine.checkpoint")!
    const text = String(checkpointEvent.attributes!["context_engine.checkpoint.text"])
    expect(new TextEncoder().encode(text).length).toBeLessThanOrEqual(Telemetry.MAX_EVENT_TEXT_BYTES)
    expect(text.length).toBeGreaterThan(0)
    const dropped = compact.events.find((event) => event.name === "context_engine.dropped")!
    expect(dropped.attributes!["context_engine.entry_count"]).toBe(discarded)
    const everything = JSON.stringify(spans.map((span) => [span.attributes, span.events]))
    expect(everything).not.toContain(SECRET)
  })

  it("emits a measure span with the request's tokens", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const measurement = await engine.measure({ entries: session(), policy })
    const span = exporter.getFinishedSpans().find((candidate) => candidate.name === "context_engine.measure")!
    expect(span.attributes["context_engine.tokens.request.input"]).toBe(measurement.inputTokens)
    expect(span.attributes["context_engine.budget_tokens"]).toBe(measurement.budgetTokens)
  })

  it("redacts secret shapes and caps text at 4 KB on a character boundary", () => {
    const redacted = Telemetry.redact(`key ${SECRET} and Bearer abcdefghijklmnop1234 and password=hunter2hunter2`)
    expect(redacted.text).not.toContain(SECRET)
    expect(redacted.text).not.toContain("hunter2hunter2")
    expect(redacted.text).not.toContain("abcdefghijklmnop1234")
    expect(redacted.text).toContain("[REDACTED]")
    const long = Telemetry.redact("é".repeat(5_000))
    expect(long.truncated).toBe(true)
    expect(new TextEncoder().encode(long.text).length).toBeLessThanOrEqual(4_096)
    expect(long.text).toBe("é".repeat(2_048))
  })
})
