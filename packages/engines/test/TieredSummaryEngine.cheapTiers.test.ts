/**
 * Cheap tiers first (issue #13 req 4, #11 req 7): a threshold compaction runs
 * the lossless stages as deep as they go before a checkpoint is considered;
 * when that reaches the low-water mark no checkpoint is written and the
 * summarizer is never called; when it cannot, a checkpoint follows.
 */
import type { Entry, Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Tiers, ToolTrim } from "@context-engine/strategies"
import { describe, expect, it } from "vitest"
import * as Engine from "../src/Engine.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import type { Summarizer } from "../src/Summarizer.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, results, user } from "./support.ts"

const toEntries = (messages: ReadonlyArray<Message.Message>, prefix: string): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `${prefix}${index}`,
    parentId: null,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))

/** A coding step: a write with a whole file as its argument, its result, a short note. */
const codingStep = (index: number): Array<Message.Message> => [
  calls({
    id: `w${index}`,
    name: "write",
    input: {
      path: `src/file_${index}.ts`,
      content: `// file ${index}\n${"const value = compute(input);\n".repeat(60)}`
    }
  }),
  results({ id: `w${index}`, name: "write", text: `wrote src/file_${index}.ts\n${"ok ".repeat(300)}` }),
  assistant(`Wrote src/file_${index}.ts.`)
]

/** A chat step: only conversation text, nothing a lossless stage may clear. */
const chatStep = (index: number): Array<Message.Message> => [
  user(`Question ${index}: ${"why ".repeat(80)}`),
  assistant(`Answer ${index}: ${"because ".repeat(80)}`)
]

/** Counts summarizer calls, answering with the offline summarizer. */
const spy = () => {
  const extractive = ExtractiveSummarizer.make()
  const counter = { calls: 0 }
  const summarizer: Summarizer = {
    name: "spy",
    summarize: (request) => {
      counter.calls++
      return extractive.summarize(request)
    }
  }
  return { summarizer, counter }
}

const policy = Cases.policySync({ contextWindow: 24_000, maxOutputTokens: 2_000, keepRecentTokens: 3_000 })

/** Grows a session step by step until the engine asks to compact (a threshold, as the middleware sees it). */
const growUntilThreshold = async (
  engine: ReturnType<typeof TieredSummaryEngine.makeAsync>,
  step: (index: number) => Array<Message.Message>
) => {
  let messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }, user("Build it.")]
  for (let index = 0; ; index++) {
    const entries = toEntries(messages, "m")
    const decision = await engine.shouldCompact({ entries, policy })
    if (decision.compact) return { entries, decision }
    messages = [...messages, ...step(index)]
  }
}

const lowWaterOf = (budget: { fixedOverheadTokens: number; availableTokens: number }) =>
  budget.fixedOverheadTokens + Math.floor(budget.availableTokens * Engine.DEFAULT_LOW_WATER_SHARE)

describe("TieredSummaryEngine: cheap tiers first", () => {
  it("resolves a threshold compaction without a checkpoint when the lossless stages reach the low-water mark, never calling the summarizer", async () => {
    const { summarizer, counter } = spy()
    const engine = TieredSummaryEngine.makeAsync({ summarizer })
    const { entries, decision } = await growUntilThreshold(engine, codingStep)
    expect(decision.reasons).toEqual(["threshold"])
    const result = await engine.compact({ entries, policy })
    expect(result.checkpoint).toBeUndefined()
    expect(counter.calls).toBe(0)
    expect(result.after.inputTokens).toBeLessThanOrEqual(lowWaterOf(decision.budget))
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("not-needed")
    // the old writes' file contents were cleared, their paths kept
    const applied = result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)
    expect(applied).toContain("toolTrim.clearInputs")
  })

  it("goes as deep as the lossless stages can, past the low-water mark: no old tool output is left to clear", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const { entries, decision } = await growUntilThreshold(engine, codingStep)
    const result = await engine.compact({ entries, policy })
    expect(result.checkpoint).toBeUndefined()
    expect(ToolTrim.candidates(result.view)).toEqual([])
    const oldWrites = ToolTrim.oldParts(result.view, {}, "tool-call")
    expect(oldWrites.length).toBeGreaterThan(0)
    for (const old of oldWrites) {
      const input = old.part.input as { path: string; content: string }
      expect(input.path).toMatch(/^src\/file_\d+\.ts$/)
      expect(input.content).toContain(`full input in transcript entry ${old.entryId}`)
    }
    // well below the mark: the next compaction is further away than a stop at the mark would put it
    expect(result.after.inputTokens).toBeLessThan(lowWaterOf(decision.budget) - decision.budget.availableTokens * 0.2)
    // and the session keeps going: the next steps do not trigger another compaction at once
    let grown = [...entries, ...result.entriesToAppend]
    for (let index = 1000; index < 1005; index++) grown = [...grown, ...toEntries(codingStep(index), `n${index}-`)]
    expect((await engine.shouldCompact({ entries: grown, policy })).compact).toBe(false)
  })

  it("writes a checkpoint when the lossless stages cannot reach the low-water mark", async () => {
    const { summarizer, counter } = spy()
    const engine = TieredSummaryEngine.makeAsync({ summarizer })
    const { entries, decision } = await growUntilThreshold(engine, chatStep)
    expect(decision.reasons).toEqual(["threshold"])
    const result = await engine.compact({ entries, policy })
    expect(counter.calls).toBeGreaterThan(0)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(lowWaterOf(decision.budget))
  })

  it("a threshold compaction's lossless stages are not held back by the per-stage prompt-cache guard: what soft trim leaves is cleared too", async () => {
    // Long old results: soft trim keeps 3,000 of each 24,000 characters and frees most of the request; what it
    // leaves (a few hundred tokens per result) is less than the guard, which used to skip the hard clear.
    const longStep = (index: number): Array<Message.Message> => [
      calls({ id: `r${index}`, name: "read", input: { path: `src/file_${index}.ts` } }),
      results({ id: `r${index}`, name: "read", text: `line ${index}: ${"let value = compute(input);\n".repeat(900)}` }),
      assistant(`Read src/file_${index}.ts.`)
    ]
    // A provider with a prompt cache (5 minutes, Anthropic's default TTL): the guard is on.
    const wide = { ...Cases.policySync({ contextWindow: 64_000, maxOutputTokens: 4_000 }), promptCacheTtlMs: 300_000 }
    const engine = TieredSummaryEngine.makeAsync()
    let messages: Array<Message.Message> = [user("Read every file.")]
    let decision = await engine.shouldCompact({ entries: toEntries(messages, "m"), policy: wide })
    for (let index = 0; !decision.compact; index++) {
      messages = [...messages, ...longStep(index)]
      decision = await engine.shouldCompact({ entries: toEntries(messages, "m"), policy: wide })
    }
    const result = await engine.compact({ entries: toEntries(messages, "m"), policy: wide })
    const stage = (name: string) => result.stages.find((report) => report.stage === name)!
    const guard = Tiers.cacheGuardTokens(wide, decision.budget)
    // the scenario exercises the guard: the hard clear frees less than it, after the soft trim
    expect(stage(ToolTrim.SOFT).status).toBe("applied")
    expect(stage(ToolTrim.CLEAR).status).toBe("applied")
    expect(stage(ToolTrim.CLEAR).tokensBefore - stage(ToolTrim.CLEAR).tokensAfter).toBeGreaterThan(0)
    expect(stage(ToolTrim.CLEAR).tokensBefore - stage(ToolTrim.CLEAR).tokensAfter).toBeLessThan(guard)
    // every unprotected result is cleared, none left soft-trimmed; the three newest stay whole
    expect(result.checkpoint).toBeUndefined()
    expect(ToolTrim.candidates(result.view)).toEqual([])
    const outputs = result.view.items.flatMap((item) =>
      typeof item.message.content === "string"
        ? []
        : item.message.content.flatMap((part) => (part.type === "tool-result" ? [JSON.stringify(part.output)] : []))
    )
    expect(outputs.slice(0, -3).every((output) => output.includes("[Old tool result content cleared"))).toBe(true)
    expect(outputs.slice(-3).every((output) => output.includes("let value = compute(input);"))).toBe(true)
    expect(outputs.slice(-3).some((output) => output.includes("trimmed"))).toBe(false)
  })

  it("a manual compaction's lossless stages stop at its target and a checkpoint is written", async () => {
    const { summarizer, counter } = spy()
    const engine = TieredSummaryEngine.makeAsync({ summarizer })
    const { entries } = await growUntilThreshold(engine, codingStep)
    const result = await engine.compact({ entries, policy, manual: true })
    expect(counter.calls).toBeGreaterThan(0)
    expect(result.checkpoint).toBeDefined()
  })
})
