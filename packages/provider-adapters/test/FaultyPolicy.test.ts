/**
 * A policy function is a plug-in (DESIGN.md invariants): when it throws,
 * rejects or answers with an impossible policy, the agent's request still
 * goes out — as the application sent it, since nothing can be measured
 * without a policy — and the app is told with a typed `compaction-skipped`
 * event (`PluginFailed` of kind "policy"). A plain policy object with an
 * impossible number is bad input: `PolicyInvalid` when the middleware or
 * `prepareStep` is made, with the number as given.
 */
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider"
import { Errors, PluginGuard } from "@context-engine/core"
import { TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import type { ContextEvent, PolicyOption } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { contextEnginePrepareStep } from "../src/PrepareStep.ts"
import { usage } from "./support/MockProvider.ts"

const mockModel = () => {
  const prompts: Array<LanguageModelV4CallOptions["prompt"]> = []
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      prompts.push(options.prompt)
      return {
        content: [{ type: "text", text: "ok" }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: usage(10),
        warnings: []
      }
    }
  })
  return { model, prompts }
}

const messages: Array<ModelMessage> = [
  { role: "user", content: "Fix the failing test in src/parser.ts." },
  { role: "assistant", content: "Reading src/parser.ts." },
  { role: "user", content: "Go on." }
]

/** The prompt the model gets for `messages` without any middleware. */
const plainPrompt = async () => {
  const { model, prompts } = mockModel()
  await generateText({ model, messages })
  return prompts[0]
}

const faultyPolicies: Record<
  string,
  { readonly policy: PolicyOption; readonly failure: string; readonly detail: RegExp }
> = {
  throws: {
    policy: () => {
      throw new Error("policy boom")
    },
    failure: "threw",
    detail: /policy boom/
  },
  rejects: {
    policy: async () => Promise.reject(new Error("policy lookup failed")),
    failure: "threw",
    detail: /policy lookup failed/
  },
  "returns an impossible policy": {
    policy: () => ({ contextWindowTokens: Number.NaN }),
    failure: "malformed",
    detail: /contextWindowTokens = NaN is invalid/
  },
  "resolves an impossible policy": {
    policy: async () => ({ contextWindowTokens: 4_000, reserveTokens: 9_000 }),
    failure: "malformed",
    detail: /reserveTokens = 9000 is invalid/
  },
  "returns no object": { policy: (() => undefined) as never, failure: "malformed", detail: /returned undefined/ }
}

const policySkips = (events: ReadonlyArray<ContextEvent>) =>
  events.flatMap((event) =>
    event.type === "compaction-skipped" && event.error instanceof PluginGuard.PluginFailed ? [event] : []
  )

describe("a failing policy function never stops the agent", () => {
  for (const [name, { policy, failure, detail }] of Object.entries(faultyPolicies)) {
    it(`middleware: a policy function that ${name} — the request goes out unchanged and a typed ${failure} failure is reported`, async () => {
      const events: Array<ContextEvent> = []
      const { model, prompts } = mockModel()
      const middleware = contextEngineMiddleware({
        engine: TieredSummaryEngine.makeAsync(),
        policy,
        onEvent: (event) => events.push(event)
      })
      const result = await generateText({ model: wrapLanguageModel({ model, middleware }), messages })
      expect(result.text).toBe("ok")
      expect(prompts).toEqual([await plainPrompt()])
      const skipped = policySkips(events)
      expect(skipped).toHaveLength(1)
      expect(skipped[0]!.error).toMatchObject({ _tag: "PluginFailed", kind: "policy", failure })
      expect((skipped[0]!.error as PluginGuard.PluginFailed).detail).toMatch(detail)
      expect(skipped[0]!.reason).toMatch(/^The policy function for mock-provider:mock-model-id /)
      expect(skipped[0]!.reason).toMatch(detail)
    })

    it(`prepareStep: a policy function that ${name} — the step goes out unchanged and the failure is reported`, async () => {
      const events: Array<ContextEvent> = []
      const { model, prompts } = mockModel()
      const prepareStep = contextEnginePrepareStep({
        engine: TieredSummaryEngine.makeAsync(),
        policy,
        onEvent: (event) => events.push(event)
      })
      const result = await generateText({ model, messages, prepareStep })
      expect(result.text).toBe("ok")
      expect(prompts).toEqual([await plainPrompt()])
      expect(policySkips(events).map((event) => (event.error as PluginGuard.PluginFailed).failure)).toEqual([failure])
    })
  }
})

describe("an impossible plain policy object is rejected when the adapter is made", () => {
  for (const [value, shown] of [
    [Number.NaN, "NaN"],
    [Number.POSITIVE_INFINITY, "Infinity"],
    [-5, "-5"]
  ] as const) {
    it(`contextWindowTokens: ${shown} throws PolicyInvalid naming ${shown}, from the middleware and prepareStep`, () => {
      const engine = TieredSummaryEngine.makeAsync()
      for (const make of [
        () => contextEngineMiddleware({ engine, policy: { contextWindowTokens: value } }),
        () => contextEnginePrepareStep({ engine, policy: { contextWindowTokens: value } })
      ]) {
        let thrown: unknown
        try {
          make()
        } catch (error) {
          thrown = error
        }
        expect(thrown).toBeInstanceOf(Errors.PolicyInvalid)
        expect((thrown as Errors.PolicyInvalid).message).toContain(`contextWindowTokens = ${shown} is invalid`)
      }
    })
  }

  it("fields that contradict each other for any model (reserve 9,000 in a 4,000-token window, no model named) throw PolicyInvalid when made", () => {
    const engine = TieredSummaryEngine.makeAsync()
    for (const policy of [
      { contextWindowTokens: 4_000, reserveTokens: 9_000 },
      { contextWindowTokens: 4_000, maxOutputTokens: 5_000 },
      { contextWindowTokens: 4_000, toolLoopReserveTokens: 2_000, safetyMarginTokens: 2_000 },
      { contextWindowTokens: 4_000, keepRecentTokens: 4_000 }
    ])
      expect(() => contextEngineMiddleware({ engine, policy })).toThrow(Errors.PolicyInvalid)
    // a window alone, or with fields that fit it, is resolved per model at the first request
    expect(() => contextEngineMiddleware({ engine, policy: { contextWindowTokens: 4_000 } })).not.toThrow()
    expect(() =>
      contextEngineMiddleware({ engine, policy: { contextWindowTokens: 4_000, reserveTokens: 1_000 } })
    ).not.toThrow()
  })
})
