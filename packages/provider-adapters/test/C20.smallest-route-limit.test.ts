/**
 * Shared case C20 (../shared/cases): the effective limit of a route is the
 * smallest of the window budget, the provider's input cap, its server-side
 * compaction point and the request-body byte cap. Each scenario of the case
 * asserts `expectCompaction`, the limit the decision names, and that the
 * request sent after compaction fits every limit of the scenario at once
 * (tokens by our measure, bytes of the JSON body counted here with
 * `Buffer.byteLength`, independent of the engine's own byte count). The
 * summarization request respects the same limits (no base64 sent to the
 * summarizer).
 */
import { createHash } from "node:crypto"
import { APICallError, type LanguageModelV4CallOptions } from "@ai-sdk/provider"
import {
  Budget,
  type ContextEngine,
  type Entry,
  type Message,
  type ModelPolicy,
  Tokenizers
} from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { ByteCap, TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import * as OverflowClassifier from "../src/OverflowClassifier.ts"
import { toEntries } from "./support/CaseModel.ts"
import { usage } from "./support/MockProvider.ts"

type LimitName = "maxInputTokens" | "serverCompactionAtTokens" | "maxRequestBodyBytes"
interface C20 {
  readonly policy: Cases.CasePolicy
  readonly routeLimits: Record<LimitName, number>
  readonly scenarios: ReadonlyArray<{
    readonly id: string
    readonly limits: ReadonlyArray<LimitName>
    readonly gatewayEnforces?: ReadonlyArray<LimitName>
    readonly expectCompaction: boolean
  }>
  readonly blobs: Record<string, Cases.Blob & { readonly sha256: string }>
  readonly providerErrors: {
    readonly gateway413: { readonly status: number; readonly headers: Record<string, string>; readonly body: string }
  }
  readonly messages: Array<Message.Message>
}

const c20 = loadCase<C20>("C20")
const messages = Cases.expandBlobs(c20.messages, c20.blobs)
const base = Cases.policySync(c20.policy, "c20-route")
const BLOB = "iVBORw0KGgoAAAANSUhEUgAABaAAAAOECAIAAADYLwGF"

const policyFor = (limits: ReadonlyArray<LimitName>): ModelPolicy.ModelPolicy => ({
  ...base,
  ...Object.fromEntries(limits.map((limit) => [limit, c20.routeLimits[limit]]))
})

/** UTF-8 bytes of the JSON body of the messages sent. */
const bodyBytes = (sent: ReadonlyArray<Message.Message>): number =>
  Buffer.byteLength(JSON.stringify({ messages: sent }))

/** A model summarizer whose requests are recorded (bytes and text). */
const recordingSummarizer = () => {
  const prompts: Array<LanguageModelV4CallOptions> = []
  const model = new MockLanguageModelV4({
    doGenerate: async (params) => {
      prompts.push(params)
      return {
        content: [
          {
            type: "text",
            text: [
              "## Goal",
              "Fix the staging header (nav hidden below 1280px) and the PriceBadge hydration error, then retake the four 1440x900 screenshots.",
              "## Latest ask",
              "OK. Fix the breakpoint and the PriceBadge hydration error, then take the four screenshots again so I can compare.",
              "## Next step",
              "Edit src/components/header/Header.module.css (breakpoint 1024px) and src/components/price/PriceBadge.tsx."
            ].join("\n")
          }
        ],
        finishReason: { unified: "stop", raw: undefined },
        usage: usage(1000, 200),
        warnings: []
      }
    }
  })
  return { summarizer: LanguageModelSummarizer.make({ model }), prompts }
}

const boundOf = (limits: ReadonlyArray<LimitName>): Budget.BindingLimit =>
  limits.includes("serverCompactionAtTokens")
    ? "server-compaction"
    : limits.includes("maxInputTokens")
      ? "max-input-tokens"
      : "context-window"

const appended = (entries: ReadonlyArray<Entry.Entry>, result: ContextEngine.CompactionResult) => [
  ...entries,
  ...result.entriesToAppend
]

describe("C20: the effective limit is the smallest limit of the route", () => {
  it("C20 blobs: the generated screenshots and log match the case's sha256 and make a body over 4 MiB", () => {
    for (const [name, blob] of Object.entries(c20.blobs))
      expect(createHash("sha256").update(Cases.blobText(blob)).digest("hex"), name).toBe(blob.sha256)
    expect(bodyBytes(messages)).toBeGreaterThan(c20.routeLimits.maxRequestBodyBytes)
  })

  for (const scenario of c20.scenarios.filter((s) => s.gatewayEnforces === undefined))
    it(`C20 ${scenario.id}: compaction ${scenario.expectCompaction ? "fires before sending, naming the bound" : "not needed"}; the request then fits ${scenario.limits.join(" + ") || "the window"}`, async () => {
      const policy = policyFor(scenario.limits)
      const { summarizer, prompts } = recordingSummarizer()
      const engine = TieredSummaryEngine.makeAsync({ summarizer, memory: { extractor: null } })
      const entries = toEntries(messages)
      const input = { entries, policy }
      const decision = await engine.shouldCompact(input)
      expect(decision.compact).toBe(scenario.expectCompaction)
      // The decision names the limit that bound: a token limit through the budget, the byte cap as its own reason.
      expect(decision.budget.bindingLimit).toBe(boundOf(scenario.limits))
      const tokenBound = scenario.limits.some((limit) => limit !== "maxRequestBodyBytes")
      if (tokenBound) expect(decision.reasons).toContain("threshold")
      if (scenario.limits.includes("maxRequestBodyBytes")) expect(decision.reasons).toContain("request-bytes")
      if (!scenario.expectCompaction) {
        expect(decision.reasons).toEqual([])
        return
      }
      const result = await engine.compact(input)
      const assembled = await engine.assembleContext({ entries: appended(entries, result), policy })
      const sent = assembled.messages
      // Every limit of the scenario holds at once.
      const tokens = assembled.measurement.inputTokens
      expect(tokens).toBeLessThanOrEqual(
        Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 }).inputBudgetTokens
      )
      expect(tokens).toBeLessThanOrEqual(c20.policy.contextWindow - c20.policy.maxOutputTokens)
      if (policy.maxInputTokens !== undefined) expect(tokens).toBeLessThan(policy.maxInputTokens)
      if (policy.serverCompactionAtTokens !== undefined) expect(tokens).toBeLessThan(policy.serverCompactionAtTokens)
      if (policy.maxRequestBodyBytes !== undefined) expect(bodyBytes(sent)).toBeLessThan(policy.maxRequestBodyBytes)
      // The latest user message is kept verbatim (C08).
      expect(sent.at(-1)).toEqual(messages.at(-1))
      // The summarization requests respect the route's limits too: no base64, under the byte cap and input cap.
      for (const prompt of prompts) {
        const body = JSON.stringify(prompt.prompt)
        expect(body).not.toContain(BLOB)
        expect(Buffer.byteLength(body)).toBeLessThan(c20.routeLimits.maxRequestBodyBytes)
        // Its prompt (counted as JSON text, an upper bound) is under the input cap too.
        expect(Tokenizers.forPolicy(policy).count(body)).toBeLessThan(c20.routeLimits.maxInputTokens)
      }
      expect(prompts.length).toBeGreaterThan(0)
      // Under the byte cap, bytes are reduced (screenshots replaced by references), not only tokens.
      if (scenario.limits.includes("maxRequestBodyBytes")) {
        expect(result.stages.find((stage) => stage.stage === ByteCap.STAGE)?.status).toBe("applied")
        expect(JSON.stringify(sent).split(BLOB).length - 1).toBeLessThan(4)
      }
    })
})

describe("C20 bodyBytes-reactive: a gateway 413 is a byte-limit overflow, handled once and remembered", () => {
  const scenario = c20.scenarios.find((s) => s.id === "bodyBytes-reactive")!
  const { gateway413 } = c20.providerErrors
  const gatewayError = () =>
    new APICallError({
      message: "Request Entity Too Large",
      url: "https://llm-gateway.corp.example.com/openai/v1/responses",
      requestBodyValues: {},
      statusCode: gateway413.status,
      responseHeaders: gateway413.headers,
      responseBody: gateway413.body,
      isRetryable: false
    })

  it("C20 bodyBytes-reactive: classified as 'request body too large' (not a token overflow)", () => {
    expect(OverflowClassifier.classify(gatewayError())).toBeUndefined()
    expect(OverflowClassifier.classifyBodyTooLarge(gatewayError())).toMatchObject({ status: 413, rule: "status-413" })
    // Anthropic's own 413 (C06's negative) is the same kind.
    expect(
      OverflowClassifier.classifyBodyTooLarge({
        status: 413,
        message: "request_too_large: Request exceeds the maximum allowed number of bytes."
      })
    ).toBeDefined()
    // A token overflow and a rate limit are not.
    expect(OverflowClassifier.classifyBodyTooLarge({ status: 429, message: "Rate limit reached" })).toBeUndefined()
    expect(
      OverflowClassifier.classifyBodyTooLarge({
        status: 400,
        message: "prompt is too long: 213462 tokens > 200000 maximum"
      })
    ).toBeUndefined()
  })

  it("C20 bodyBytes-reactive: the engine reduces bytes and retries once; later requests on the route use the learned cap", async () => {
    expect(scenario.expectCompaction).toBe(true)
    const cap = c20.routeLimits[scenario.gatewayEnforces![0]!]
    const calls: Array<{ readonly bytes: number; readonly refused: boolean }> = []
    const inner = new MockLanguageModelV4({
      provider: "gateway.responses",
      modelId: "c20-route",
      doGenerate: async (params) => {
        const bytes = Buffer.byteLength(JSON.stringify({ messages: params.prompt, tools: params.tools ?? [] }))
        calls.push({ bytes, refused: bytes > cap })
        if (bytes > cap) throw gatewayError()
        return {
          content: [{ type: "text", text: "Editing Header.module.css." }],
          finishReason: { unified: "stop", raw: undefined },
          usage: usage(9_000, 20),
          warnings: []
        }
      }
    })
    const events: Array<ContextEvent> = []
    const model = wrapLanguageModel({
      model: inner,
      middleware: contextEngineMiddleware({
        engine: TieredSummaryEngine.make({ memory: { extractor: null } }),
        policy: base,
        onEvent: (event) => events.push(event)
      })
    })
    const [system, ...conversation] = messages as Array<ModelMessage>
    const first = await generateText({
      model,
      system: system!.content as string,
      messages: conversation,
      maxRetries: 0
    })
    expect(first.text).toBe("Editing Header.module.css.")
    // Refused once, then the same request with fewer bytes went out: one retry.
    expect(calls.map((call) => call.refused)).toEqual([true, false])
    expect(calls[1]!.bytes).toBeLessThan(cap)
    const learned = events.find((event) => event.type === "body-too-large")
    expect(learned).toMatchObject({ learnedCapBytes: cap })
    expect(events.some((event) => event.type === "overflow")).toBe(false)
    // The next request of the route is kept under the learned cap before it is sent: no second 413.
    await generateText({
      model,
      system: system!.content as string,
      messages: [...conversation, ...first.response.messages, { role: "user", content: "Also check the cart page." }],
      maxRetries: 0
    })
    expect(calls.map((call) => call.refused)).toEqual([true, false, false])
    expect(calls[2]!.bytes).toBeLessThan(cap)
  })
})
