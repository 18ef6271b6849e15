/**
 * A small window and a long latest ask (a text-action agent's task message:
 * SWE-agent's issue text plus its instructions, ~1,100 tokens in
 * pydicom-1458): the ask stays in the request verbatim (pinned), so the
 * kept tail's room under the low-water mark must hold it too. When it did
 * not, the kept tail filled the whole room, the ask came on top, no summary
 * fitted beside them (`next-request-fits` failed twice) and the reduction
 * dropped every older turn with no summary standing in for them (new-user
 * trial s7: `compact pydicom-1458.traj --context-window 8k`).
 */
import { type Entry, type Message, PolicyRegistry } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { calls, results, user } from "./support.ts"

const words = (label: string, count: number): string =>
  Array.from({ length: count }, (_, index) => `${label}${index % 10}`).join(" ")

/** A system prompt, one long task, then `steps` tool steps of ~300 tokens each: one turn in progress. */
const session = (askWords: number, steps: number): Array<Entry.Entry> => {
  const messages: Array<Message.Message> = [
    { role: "system", content: `You are a coding agent. ${words("rule", 300)}` },
    user(`Fix the bug in src/decoder.ts described here: ${words("issue", askWords)}`)
  ]
  for (let step = 0; step < steps; step++) {
    messages.push(calls({ id: `c${step}`, name: "bash", input: { command: `sed -n ${step}p src/decoder.ts` } }))
    messages.push(results({ id: `c${step}`, name: "bash", text: `line ${step}: ${words("out", 150)}` }))
  }
  return messages.map((message, index) => ({
    id: `m${index}`,
    parentId: index === 0 ? null : `m${index - 1}`,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))
}

const policy = PolicyRegistry.resolveSync({
  model: "pinned-ask-test",
  contextWindowTokens: 8_000,
  maxOutputTokens: 4_000,
  reserveTokens: 4_000,
  keepRecentTokens: 1_600,
  toolLoopReserveTokens: 0,
  safetyMarginTokens: 0,
  tokenizer: "o200k_base"
})

describe("the kept tail's room holds the pinned latest ask", () => {
  it("a long ask in a small window: a checkpoint is written beside the ask and the turn's last step, no turn is dropped unsummarized", async () => {
    const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: null } })
    const entries = session(1_300, 14)
    const input = { entries, policy }
    const decision = await engine.shouldCompact(input)
    expect(decision.compact).toBe(true)
    const result = await engine.compact(input)
    expect(result.fits).toBe(true)
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("applied")
    expect(result.stages.some((stage) => stage.stage.startsWith("reduce:"))).toBe(false)
    expect(result.checkpoint).toBeDefined()
    // The ask is kept verbatim; the checkpoint covers every step before the kept tail.
    const ids = result.view.items.map((item) => item.entryId)
    expect(ids.slice(0, 2)).toEqual(["m0", result.checkpoint!.id])
    expect(ids[2]).toBe("m1")
    const firstTail = Number(ids[3]!.slice(1))
    expect(result.checkpoint!.coveredRange.toEntryId).toBe(`m${firstTail - 1}`)
    expect(result.after.inputTokens).toBeLessThanOrEqual(decision.budget.inputBudgetTokens)
  })
})
