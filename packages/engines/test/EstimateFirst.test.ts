/**
 * Estimate-first compaction of a cold view (issue #13 req 2): the old part
 * is estimated (chars / 4), the result is always measured exactly, and when
 * the estimate was too low the pipeline runs again with exact counts — so a
 * content the estimator gets badly wrong still never overshoots.
 */
import type { ContextEngine, Entry as EntryType, Message, ModelPolicy } from "@context-engine/core"
import { ContextView, Entry, Measurer, Tokenizers, ToolPairing } from "@context-engine/core"
import { Cases, deepFreeze } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as EstimateFirst from "../src/EstimateFirst.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import { calls, results, user } from "./support.ts"

const tokenizer = Tokenizers.get("o200k_base")

/** `turns` turns of a user ask, one tool call and its result of `text`. */
const session = (
  turns: number,
  text: (turn: number) => string,
  ask: (turn: number) => string = (turn) => `Step ${turn}: read the next file.`
): Array<EntryType.Entry> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++)
    messages.push(
      user(ask(turn)),
      calls({ id: `c${turn}`, name: "read", input: { path: `src/file${turn}.ts` } }),
      results({ id: `c${turn}`, name: "read", text: text(turn) })
    )
  messages.push(user("Continue with the next step."))
  return deepFreeze(
    messages.map((message, index) => ({
      id: `e${index}`,
      parentId: index === 0 ? null : `e${index - 1}`,
      timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
      schemaVersion: Entry.CURRENT_SCHEMA_VERSION,
      kind: "message" as const,
      message
    }))
  )
}

const policy: ModelPolicy.ModelPolicy = {
  ...Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000 }, "estimate-first"),
  tokenizer: "o200k_base"
}

const compactCold = (entries: ReadonlyArray<EntryType.Entry>): ContextEngine.CompactionResult => {
  const engine = SlidingWindowEngine.make({ measurer: () => Measurer.make(tokenizer) })
  return Effect.runSync(engine.compact({ entries, policy }))
}

const compactWarm = (entries: ReadonlyArray<EntryType.Entry>): ContextEngine.CompactionResult => {
  const engine = SlidingWindowEngine.make({ measurer: () => Measurer.make(tokenizer) })
  expect(Effect.runSync(engine.shouldCompact({ entries, policy })).compact).toBe(true)
  return Effect.runSync(engine.compact({ entries, policy }))
}

describe("estimate-first compaction of a cold view", () => {
  it("ideographs (≈1 token per character, 4× what chars/4 says): the exact pass still makes it fit", () => {
    const cjk = "上下文窗口管理器在长时间运行的代理中保持模型的上下文。"
    // The asks stay after the tool results are cleared; chars / 4 counts them at a third of their tokens.
    const entries = session(
      60,
      (turn) => `${turn} ${cjk.repeat(60)}`,
      (turn) => `${turn} ${cjk.repeat(6)}`
    )
    const result = compactCold(entries)
    expect(result.before.method).toBe("estimate")
    // The first pass believed it fit; the exact measurement said no; the second pass, exact, finished the job.
    expect(result.stages.some((stage) => stage.note?.includes("exact pass"))).toBe(true)
    expect(result.after.method).toBe("exact")
    expect(Measurer.make(tokenizer).measure(result.view).inputTokens).toBe(result.after.inputTokens)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    expect(ToolPairing.analyze(result.view.items).problems).toEqual([])
    // Replaying the appended entries reproduces the view (both passes' edits, in order).
    const engine = SlidingWindowEngine.make({ measurer: () => Measurer.make(tokenizer) })
    expect(Effect.runSync(engine.validate({ entries, policy }, result)).ok).toBe(true)
  })

  it("ordinary text: one pass, exact result, about what the all-exact engine keeps", () => {
    const entries = session(60, (turn) =>
      `export const value${turn} = compute(${turn}) // reads the configuration and returns it\n`.repeat(40)
    )
    const cold = compactCold(entries)
    const warm = compactWarm(entries)
    expect(cold.before.method).toBe("estimate")
    expect(warm.before.method).toBe("exact")
    expect(Measurer.make(tokenizer).measure(cold.view).inputTokens).toBe(cold.after.inputTokens)
    expect(cold.after.inputTokens).toBeLessThanOrEqual(cold.after.budgetTokens)
    expect(cold.after.inputTokens).toBeGreaterThanOrEqual(0.9 * warm.after.inputTokens)
  })

  it("a view not far over the target is counted exactly (no estimate)", () => {
    const entries = session(6, (turn) => `line ${turn}\n`.repeat(400))
    const result = compactCold(entries)
    expect(result.before.method).toBe("exact")
  })

  it("exactSuffix: the system prompt and the recent suffix of EXACT_SUFFIX_FACTOR × target are counted exactly", () => {
    const view = ContextView.fromMessages([
      { role: "system", content: "sys" },
      ...Array.from({ length: 10 }, (_, index) => user(`${index} ${"x".repeat(396)}`))
    ])
    const rough = Measurer.make(EstimateFirst.estimator)
    const tokens = rough.messageTokens(view.items[1]!.message)
    const exact = EstimateFirst.exactSuffix(view, rough, 2 * tokens)!
    const kept = view.items.filter((item) => exact.has(item.message)).map((item) => item.message)
    // System + the last ⌈1.5 × 2⌉ = 3 messages.
    expect(kept).toEqual([view.items[0]!.message, ...view.items.slice(-3).map((item) => item.message)])
    expect(EstimateFirst.exactSuffix(view, rough, 10 * tokens)).toBeUndefined()
  })
})
