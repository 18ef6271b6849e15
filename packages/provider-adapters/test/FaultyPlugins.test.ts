/**
 * Issue #12 req 2: a summarizer or hook that throws, hangs, ignores the
 * abort signal or returns a malformed result never stops the agent. Through
 * the middleware the request still goes out (and fits), a typed failure is
 * reported, and a route whose compactions keep failing stops retrying after
 * three in a row.
 */
import { Errors } from "@context-engine/core"
import { type Summarizer, TieredSummaryEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, wrapLanguageModel } from "ai"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import type { ContextEvent } from "../src/ContextController.ts"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import { contextEnginePrepareStep } from "../src/PrepareStep.ts"
import { longHistory, pairingIntact, smallPolicy, windowedModel } from "./support/MockProvider.ts"
import * as TestEngine from "./support/TestEngine.ts"

const policy = smallPolicy()

const summarizer = (summarize: Summarizer.Summarizer["summarize"]): Summarizer.Summarizer => ({
  name: "faulty",
  summarize
})

const faultySummarizers: Record<string, Summarizer.Summarizer> = {
  "throws inside Effect.sync": summarizer(() =>
    Effect.sync(() => {
      throw new TypeError("cannot read properties of undefined")
    })
  ),
  "throws before returning an Effect": summarizer(() => {
    throw new Error("synchronous throw")
  }),
  "fails with a typed error": summarizer(() =>
    Effect.fail(new Errors.SummarizerFailed({ summarizer: "faulty", reason: "HTTP 500" }))
  ),
  "never resolves": summarizer(() => Effect.never),
  "ignores the abort signal": summarizer(() => Effect.promise(() => new Promise<never>(() => {}))),
  "returns a malformed result": summarizer(() => Effect.succeed({ content: null } as never)),
  "returns no summarizer info and half a content": summarizer(() =>
    Effect.succeed({ content: { goal: 42, progress: {} } } as never)
  )
}

const faultyHooks: Record<string, () => unknown> = {
  throws: () => {
    throw new Error("hook exploded")
  },
  rejects: () => Promise.reject(new Error("hook rejected")),
  "never resolves": () => new Promise(() => {}),
  "returns a malformed result": () => ({ summary: "not an object" }),
  "returns something else": () => 42
}

const run = async (engine: Parameters<typeof contextEngineMiddleware>[0]["engine"], abortAfterMs?: number) => {
  const events: Array<ContextEvent> = []
  const { model, calls } = windowedModel({
    windowTokens: 8_000,
    maxOutputTokens: 1_000,
    replies: () => ({ text: "ok" })
  })
  const middleware = contextEngineMiddleware({ engine, policy, onEvent: (event) => events.push(event) })
  const messages = longHistory(12) as Array<ModelMessage>
  const abortSignal = abortAfterMs === undefined ? undefined : AbortSignal.timeout(abortAfterMs)
  const result = generateText({
    model: wrapLanguageModel({ model, middleware }),
    messages,
    ...(abortSignal ? { abortSignal } : {})
  })
  return { result, calls, events }
}

describe("a faulty plug-in never stops the agent (through the middleware)", () => {
  for (const [name, faulty] of Object.entries(faultySummarizers)) {
    it(`summarizer ${name}: the request goes out, fits, and the failure is reported`, async () => {
      const engine = TieredSummaryEngine.make({ summarizer: faulty, fallbackSummarizer: null, pluginTimeoutMs: 200 })
      const { result, calls, events } = await run(engine)
      expect((await result).text).toBe("ok")
      expect(calls).toHaveLength(1)
      expect(calls[0]!.rejected).toBe(false)
      expect(pairingIntact(calls[0]!.params)).toBe(true)
      const compaction = events.find((event) => event.type === "compaction")
      expect(
        compaction?.type === "compaction" &&
          compaction.stages.some((stage) => stage.stage === "checkpoint" && stage.status === "skipped")
      ).toBe(true)
      // the event itself says what failed (QA session 6: it was only inside the checkpoint stage's note)
      expect(
        compaction?.type === "compaction" ? (compaction.failures ?? []).map((failure) => failure._tag) : []
      ).toEqual([expect.stringMatching(/^(SummarizerFailed|PluginFailed|ValidationFailed)$/)])
    }, 60_000)
  }

  for (const [name, hook] of Object.entries(faultyHooks)) {
    it(`beforeCompact hook ${name}: the request goes out and fits`, async () => {
      const engine = TieredSummaryEngine.make({
        hooks: { beforeCompact: [hook as never] },
        pluginTimeoutMs: 200
      })
      const { result, calls } = await run(engine)
      expect((await result).text).toBe("ok")
      expect(calls).toHaveLength(1)
      expect(calls[0]!.rejected).toBe(false)
    }, 60_000)
  }

  it("the caller's abort ends a hung summarizer promptly and the model is not called", async () => {
    const engine = TieredSummaryEngine.make({
      summarizer: faultySummarizers["ignores the abort signal"]!,
      fallbackSummarizer: null,
      pluginTimeoutMs: 600_000
    })
    const { result, calls } = await run(engine, 200)
    await expect(result).rejects.toThrow()
    expect(calls).toHaveLength(0)
  }, 60_000)
})

describe("prepareStep", () => {
  it("passes the caller's abort signal: a hung summarizer ends promptly and the model is not called", async () => {
    const engine = TieredSummaryEngine.make({
      summarizer: faultySummarizers["ignores the abort signal"]!,
      fallbackSummarizer: null,
      pluginTimeoutMs: 600_000
    })
    const { model, calls } = windowedModel({
      windowTokens: 8_000,
      maxOutputTokens: 1_000,
      replies: () => ({ text: "ok" })
    })
    const abortSignal = AbortSignal.timeout(200)
    const prepareStep = contextEnginePrepareStep({ engine, policy, abortSignal })
    const result = generateText({ model, messages: longHistory(12) as Array<ModelMessage>, prepareStep, abortSignal })
    await expect(result).rejects.toThrow()
    expect(abortSignal.aborted).toBe(true)
    expect(calls).toHaveLength(0)
  }, 60_000)
})

describe("circuit breaker", () => {
  it("after 3 consecutive failed compactions on a route, automatic compaction is skipped and says so; requests still go out", async () => {
    const engine = TestEngine.make({ failCompaction: true })
    const events: Array<ContextEvent> = []
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    const middleware = contextEngineMiddleware({
      engine,
      policy: { ...policy, contextWindowTokens: 100_000 },
      onEvent: (event) => events.push(event)
    })
    const wrapped = wrapLanguageModel({ model, middleware })
    // Over 90% of the budget: the test engine asks to compact on every step, and fails.
    const messages = longHistory(40, 8_000) as Array<ModelMessage>
    for (let step = 0; step < 5; step++) expect((await generateText({ model: wrapped, messages })).text).toBe("ok")
    expect(calls).toHaveLength(5)
    const failed = events.filter((event) => event.type === "compaction-failed")
    expect(failed.map((event) => event.type === "compaction-failed" && event.consecutiveFailures)).toEqual([1, 2, 3])
    expect(failed.at(-1)?.type === "compaction-failed" && failed.at(-1)).toMatchObject({ circuitOpen: true })
    const skipped = events.filter((event) => event.type === "compaction-skipped")
    expect(skipped).toHaveLength(2)
    expect(skipped[0]?.type === "compaction-skipped" && skipped[0].reason).toContain("3 consecutive failures")
    // The open circuit still tried the deterministic reduction (this engine fails that too) and says so.
    expect(skipped[0]?.type === "compaction-skipped" && skipped[0].reason).toMatch(
      /the deterministic reduction failed too: .*configured to fail$/
    )
    expect(engine.compactions).toHaveLength(5)
  }, 120_000)

  it("while the circuit is open, a request over its budget gets the deterministic reduction (no summarizer call) and goes out within budget", async () => {
    let summaries = 0
    const hung = summarizer(() => {
      summaries++
      return Effect.never
    })
    const engine = TieredSummaryEngine.make({ summarizer: hung, fallbackSummarizer: null, pluginTimeoutMs: 600_000 })
    const events: Array<ContextEvent> = []
    // The model accepts up to 100K tokens; the policy's 8K window is what the engine must keep to.
    const { model, calls } = windowedModel({ windowTokens: 100_000, replies: () => ({ text: "ok" }) })
    const middleware = contextEngineMiddleware({
      engine,
      policy,
      compactionTimeoutMs: 100,
      onEvent: (event) => events.push(event)
    })
    const wrapped = wrapLanguageModel({ model, middleware })
    const messages = longHistory(12) as Array<ModelMessage>
    for (let step = 0; step < 4; step++) expect((await generateText({ model: wrapped, messages })).text).toBe("ok")
    const failed = events.filter((event) => event.type === "compaction-failed")
    expect(failed.map((event) => event.type === "compaction-failed" && event.circuitOpen)).toEqual([false, false, true])
    // Steps 0–2: the summarizer hung past the compaction deadline, the request went out uncompacted.
    const requests = events.flatMap((event) => (event.type === "request" ? [event] : []))
    for (const request of requests.slice(0, 3)) expect(request.inputTokens).toBeGreaterThan(request.budgetTokens)
    // Step 3: circuit open — reduced without asking the summarizer, and the request fits.
    expect(summaries).toBe(3)
    expect(events.filter((event) => event.type === "compaction-skipped")).toEqual([])
    const compaction = events.find((event) => event.type === "compaction")
    expect(compaction?.type === "compaction" && compaction.checkpointId).toBeUndefined()
    const checkpointStage =
      compaction?.type === "compaction" ? compaction.stages.find((stage) => stage.stage === "checkpoint") : undefined
    expect(checkpointStage).toMatchObject({ status: "skipped" })
    expect(checkpointStage?.note).toContain("open circuit")
    expect(requests[3]!.inputTokens).toBeLessThanOrEqual(requests[3]!.budgetTokens)
    expect(calls[3]!.tokens).toBeLessThan(calls[0]!.tokens / 2)
    expect(pairingIntact(calls[3]!.params)).toBe(true)
  }, 120_000)
})
