/**
 * A manual compaction (`/compact`, `compact --force`) at a small window must
 * land its kept tail, kept user messages and summary under the input budget
 * like a threshold compaction does. It kept `keepRecentTokens` of tail and as
 * much again of covered user messages, so every summary failed
 * `next-request-fits` and the reduction dropped every older turn with no
 * summary standing in for them (new-user trial: `compact
 * pi/large-session.jsonl --context-window 16k --force`: "next request 6835 of
 * 6400 tokens", 824 messages dropped, exit 0).
 */
import { type Entry, type Message, PolicyRegistry } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, messageEntry, results, user } from "./support.ts"

const words = (label: string, count: number): string =>
  Array.from({ length: count }, (_, index) => `${label}${index % 10}`).join(" ")

/** `turns` turns: a ~100-token ask, a tool step of ~200 tokens and a short answer. */
const session = (turns: number): Array<Entry.Entry> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++) {
    messages.push(user(`Task ${turn}: update src/module${turn}.ts so that ${words("needs", 50)}`))
    messages.push(calls({ id: `c${turn}`, name: "read", input: { path: `src/module${turn}.ts` } }))
    messages.push(results({ id: `c${turn}`, name: "read", text: words(`body${turn}x`, 80) }))
    messages.push(assistant(`Updated src/module${turn}.ts.`))
  }
  return messages.map((message, index) => messageEntry(`m${index}`, index === 0 ? null : `m${index - 1}`, message))
}

const policy = PolicyRegistry.resolveSync({
  model: "manual-room-test",
  contextWindowTokens: 10_000,
  maxOutputTokens: 5_000,
  reserveTokens: 5_000,
  keepRecentTokens: 2_400,
  toolLoopReserveTokens: 0,
  safetyMarginTokens: 0,
  tokenizer: "o200k_base"
})

describe("a manual compaction lands under the input budget", () => {
  it("over the budget: the checkpoint is written (no reduction drops turns unsummarized) and the request fits", async () => {
    const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: null } })
    const input = { entries: session(40), policy, manual: true }
    const decision = await engine.shouldCompact(input)
    expect(decision.budget.inputBudgetTokens).toBe(5_000)
    const result = await engine.compact(input)
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("applied")
    expect(result.stages.some((stage) => stage.stage.startsWith("reduce:"))).toBe(false)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(5_000)
  })

  it("under the budget (forced only by the user): a checkpoint is written and the request shrinks", async () => {
    const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: null } })
    const input = { entries: session(8), policy, manual: true }
    const decision = await engine.shouldCompact(input)
    expect(decision.measurement.inputTokens).toBeLessThan(5_000)
    const result = await engine.compact(input)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    expect(result.after.inputTokens).toBeLessThan(result.before.inputTokens)
  })
})
