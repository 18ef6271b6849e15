import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider"
import { Checkpoint, type Entry, Errors, type Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { MockLanguageModelV4 } from "ai/test"
import { Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as HandoffPrompt from "../src/HandoffPrompt.ts"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import * as ModelSpec from "../src/ModelSpec.ts"

const usage = (inputTokens: number, outputTokens: number): LanguageModelV4GenerateResult["usage"] => ({
  inputTokens: { total: inputTokens, noCache: inputTokens, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: outputTokens, text: outputTokens, reasoning: 0 }
})

const promptText = (params: LanguageModelV4CallOptions): string =>
  params.prompt
    .flatMap((message) =>
      typeof message.content === "string"
        ? [message.content]
        : message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
    )
    .join("\n")

/** A model answering with `answer(prompt)` as JSON, recording every prompt. */
const scripted = (answer: (prompt: string, call: number) => Checkpoint.CheckpointContent) => {
  const prompts: Array<string> = []
  const model = new MockLanguageModelV4({
    modelId: "mock-summarizer",
    doGenerate: async (params) => {
      const prompt = promptText(params)
      prompts.push(prompt)
      return {
        content: [{ type: "text", text: JSON.stringify(answer(prompt, prompts.length - 1)) }],
        finishReason: { unified: "stop", raw: undefined },
        usage: usage(1000, 200),
        warnings: []
      }
    }
  })
  return { model, prompts }
}

const summary = (goal: string, extra: Partial<Checkpoint.CheckpointContent> = {}): Checkpoint.CheckpointContent => ({
  ...Checkpoint.emptyContent(),
  goal,
  progress: { done: ["read the config"], inProgress: [], blocked: [] },
  nextSteps: ["continue"],
  ...extra
})

const item = (entryId: string, message: Message.Message) => ({ entryId, message })
const covered = [
  item("e0", { role: "user", content: "Check config/service.yaml for the port" }),
  item("e1", {
    role: "assistant",
    content: [
      { type: "reasoning", text: "SECRET-THOUGHTS" },
      { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "config/service.yaml" } }
    ]
  }),
  item("e2", {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "c1",
        toolName: "read",
        output: { type: "text", value: `port: 8080\n${"z".repeat(5000)}` }
      }
    ]
  }),
  item("e3", { role: "assistant", content: "The service listens on port 8080." })
]
const count = (text: string) => Math.ceil(text.length / 4)

describe("LanguageModelSummarizer", () => {
  it("serializes the range as labelled text, omits thinking, truncates tool results with a stated limit", () => {
    const text = LanguageModelSummarizer.serialize(covered.map((entry) => entry.message))
    expect(text).toContain("[User]:\n  Check config/service.yaml for the port")
    expect(text).toContain('[Assistant tool calls]:\n  read({"path":"config/service.yaml"})')
    expect(text).toContain("[Tool result read]:\n  port: 8080")
    expect(text).toContain("more characters truncated]")
    expect(text).not.toContain("SECRET-THOUGHTS")
    expect(text.length).toBeLessThan(5000)
  })

  it("returns the model's answer as it is (no identifier dump appended), records model and usage", async () => {
    const answer = summary("Find the service port")
    const { model, prompts } = scripted(() => answer)
    const result = await Effect.runPromise(
      LanguageModelSummarizer.make({ model }).summarize({ covered, maxTokens: 2000, countTokens: count })
    )
    expect(prompts).toHaveLength(1)
    // The range names config/service.yaml and port 8080; the model listed neither, and nothing adds them.
    expect(result.content).toEqual(Schema.decodeUnknownSync(Checkpoint.CheckpointContent)(answer))
    expect(result.content.filesRead).toEqual([])
    expect(result.content.identifiers.paths).toEqual([])
    expect(result.summarizer).toEqual({
      kind: "language-model",
      model: "mock-summarizer",
      promptVersion: LanguageModelSummarizer.PROMPT_VERSION
    })
    expect(result.usage).toEqual({ inputTokens: 1000, outputTokens: 200 })
  })

  it("asks for structured output through generateText (no deprecated generateObject warning), as JSON with the schema", async () => {
    const { model } = scripted(() => summary("Find the service port"))
    const formats: Array<LanguageModelV4CallOptions["responseFormat"]> = []
    const doGenerate = model.doGenerate.bind(model)
    model.doGenerate = async (params) => {
      formats.push(params.responseFormat)
      return doGenerate(params)
    }
    // The AI SDK hands every warning to a function in `AI_SDK_LOG_WARNINGS` (its default logger emits each deprecation once per process).
    const warnings: Array<unknown> = []
    const global = globalThis as { AI_SDK_LOG_WARNINGS?: unknown }
    const original = global.AI_SDK_LOG_WARNINGS
    global.AI_SDK_LOG_WARNINGS = (options: { warnings: ReadonlyArray<unknown> }) => warnings.push(...options.warnings)
    try {
      const result = await Effect.runPromise(
        LanguageModelSummarizer.make({ model }).summarize({ covered, maxTokens: 2000, countTokens: count })
      )
      expect(result.content.goal).toBe("Find the service port")
    } finally {
      global.AI_SDK_LOG_WARNINGS = original
    }
    expect(warnings.filter((warning) => (warning as { type?: string }).type === "deprecated")).toEqual([])
    expect(formats).toHaveLength(1)
    expect(formats[0]?.type).toBe("json")
    expect(formats[0]?.type === "json" ? formats[0].schema : undefined).toMatchObject({ type: "object" })
  })

  it("gives the previous checkpoint and only the new range, and names what a repair must add", async () => {
    const { model, prompts } = scripted(() => summary("g"))
    const previous: Checkpoint.Checkpoint = {
      id: "cp1",
      generation: 1,
      coveredRange: { fromEntryId: null, toEntryId: "old9" },
      firstKeptEntryId: "e0",
      tokensBefore: 1,
      tokensAfter: 1,
      summarizer: { kind: "imported", promptVersion: "pi" },
      text: "## Goal\nOLD-GOAL-MARKER",
      createdAt: new Date(0).toISOString()
    }
    await Effect.runPromise(
      LanguageModelSummarizer.make({ model }).summarize({
        previous,
        covered,
        maxTokens: 2000,
        countTokens: count,
        repair: {
          attempt: summary("g"),
          failedChecks: ["identifier-retention"],
          missing: ["identifier:localhost:9999"]
        }
      })
    )
    expect(prompts[0]).toContain("<previous-checkpoint>")
    expect(prompts[0]).toContain("OLD-GOAL-MARKER")
    expect(prompts[0]).toContain("- identifier-retention: failed")
    expect(prompts[0]).toContain("- keep verbatim: localhost:9999")
  })

  it("stages a range larger than its window and updates stage by stage", async () => {
    const { model, prompts } = scripted((_prompt, call) => summary(`stage ${call}`))
    const many = Array.from({ length: 12 }, (_, index) =>
      item(`m${index}`, { role: "user", content: `message ${index} ${"w".repeat(1600)}` })
    )
    const result = await Effect.runPromise(
      LanguageModelSummarizer.make({ model, contextWindowTokens: 2_000 }).summarize({
        covered: many,
        maxTokens: 500,
        countTokens: count
      })
    )
    expect(prompts.length).toBeGreaterThan(1)
    expect(prompts[1]).toContain("<previous-checkpoint>")
    expect(prompts[1]).toContain("stage 0")
    expect(result.content.goal).toBe(`stage ${prompts.length - 1}`)
  })

  it("passes a split turn's prefix in its own block with the range, in one call", async () => {
    const { model, prompts } = scripted(() => summary("history", { pendingUserAsks: ["Refactor src/"] }))
    const result = await Effect.runPromise(
      LanguageModelSummarizer.make({ model }).summarize({
        covered: covered.slice(0, 2),
        turnPrefix: [item("p0", { role: "user", content: "Refactor src/ into modules" })],
        maxTokens: 2000,
        countTokens: count
      })
    )
    expect(prompts).toHaveLength(1)
    const prefix = /<turn-prefix>\n([\s\S]*?)\n<\/turn-prefix>/.exec(prompts[0]!)?.[1]
    expect(prefix).toBe("[User]:\n  Refactor src/ into modules")
    expect(prompts[0]).toContain(HandoffPrompt.TURN_PREFIX_RULES)
    expect(/<transcript>[\s\S]*Check config\/service.yaml[\s\S]*<\/transcript>/.test(prompts[0]!)).toBe(true)
    expect(result.content.pendingUserAsks).toEqual(["Refactor src/"])
  })

  it("turns a thrown model error into a typed SummarizerFailed", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error("fetch failed: ECONNRESET")
      }
    })
    const exit = await Effect.runPromiseExit(
      LanguageModelSummarizer.make({ model }).summarize({ covered, maxTokens: 2000, countTokens: count })
    )
    expect(exit._tag).toBe("Failure")
    const error =
      exit._tag === "Failure" ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error : undefined
    expect(error).toBeInstanceOf(Errors.SummarizerFailed)
    expect((error as Errors.SummarizerFailed).reason).toContain("ECONNRESET")
  })

  it("C05 through the engine: a throwing model commits no checkpoint and the request still fits", async () => {
    const testCase = loadCase<{ messages: Array<Message.Message>; policy: Cases.CasePolicy }>("C05")
    const entries: Array<Entry.Entry> = testCase.messages.map((message, index) => ({
      id: `m${index}`,
      parentId: index === 0 ? null : `m${index - 1}`,
      timestamp: new Date(0).toISOString(),
      schemaVersion: 1,
      kind: "message",
      message
    }))
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error("The operation was aborted due to timeout")
      }
    })
    const engine = TieredSummaryEngine.makeAsync({
      summarizer: LanguageModelSummarizer.make({ model }),
      replaceBuiltInStrategies: () => []
    })
    const result = await engine.compact({ entries, policy: Cases.policySync(testCase.policy) })
    expect(result.checkpoint).toBeUndefined()
    expect(result.entriesToAppend.filter((entry) => entry.kind === "checkpoint")).toEqual([])
    expect(result.failures?.[0]).toBeInstanceOf(Errors.SummarizerFailed)
    expect(result.fits).toBe(true)
  })

  it("a model spec without an API key fails fast with a typed, readable error", async () => {
    for (const spec of ["anthropic:claude-haiku-4-5", "openai:gpt-5-mini", "anthropic/claude-haiku-4.5"]) {
      const exit = await Effect.runPromiseExit(ModelSpec.resolve(spec, {}))
      const error =
        exit._tag === "Failure" ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error : undefined
      expect(error).toBeInstanceOf(Errors.SummarizerFailed)
      expect((error as Errors.SummarizerFailed).message).toMatch(
        /no API key: set (ANTHROPIC|OPENAI|AI_GATEWAY)_API_KEY/
      )
    }
  })

  it("a provider package that is not installed fails with an error naming the package to install", async () => {
    const notInstalled: ModelSpec.LoadPackage = (name) =>
      Promise.reject(Object.assign(new Error(`Cannot find package '${name}'`), { code: "ERR_MODULE_NOT_FOUND" }))
    for (const [spec, name] of [
      ["anthropic:claude-haiku-4-5", "@ai-sdk/anthropic"],
      ["openai:gpt-5-mini", "@ai-sdk/openai"]
    ] as const) {
      const env = { ANTHROPIC_API_KEY: "key", OPENAI_API_KEY: "key" }
      const exit = await Effect.runPromiseExit(ModelSpec.resolve(spec, env, notInstalled))
      const error =
        exit._tag === "Failure" ? exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error : undefined
      expect(error).toBeInstanceOf(Errors.SummarizerFailed)
      expect((error as Errors.SummarizerFailed).message).toContain(`install it (npm install ${name})`)
    }
  })

  it("an installed provider package resolves the spec to its model", async () => {
    const exit = await Effect.runPromiseExit(
      ModelSpec.resolve("anthropic:claude-haiku-4-5", { ANTHROPIC_API_KEY: "k" })
    )
    expect(exit._tag).toBe("Success")
    const model = exit._tag === "Success" ? (exit.value as { modelId: string; provider: string }) : undefined
    expect(model?.modelId).toBe("claude-haiku-4-5")
    expect(model?.provider).toMatch(/anthropic/)
  })
})
