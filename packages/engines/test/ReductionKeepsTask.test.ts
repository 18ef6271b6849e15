/**
 * When no checkpoint can be written, the reduction's sliding window keeps the
 * user's latest task-setting ask as long as the request fits its budget with
 * it. A long pasted task followed by a short "go on" lost the task: the
 * cheap stages brought the request to 428 of 800 tokens (it fit), the
 * checkpoint was rejected (it would not shrink what it replaced), and the
 * window, aiming at the low-water mark, dropped every turn before "go on" —
 * the task with them, with no summary standing in for it.
 */
import { type Message, PolicyRegistry } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { messageEntry } from "./support.ts"

const task = Array.from(
  { length: 80 },
  (_, line) =>
    `Line ${line}: the pixel data handler must keep reading the integer case while the float case skips attribute ${line}.`
).join("\n")

const conversation = (latestAsk: string): Array<Message.Message> => [
  { role: "user", content: "hi, please help me with the handler" },
  { role: "assistant", content: "Sure, what do you need?" },
  { role: "user", content: task },
  { role: "assistant", content: "Understood." },
  { role: "user", content: latestAsk },
  { role: "assistant", content: "Done." }
]

const policy = PolicyRegistry.resolveSync({
  model: "reduction-task-test",
  contextWindowTokens: 2_000,
  maxOutputTokens: 1_000,
  reserveTokens: 1_000,
  keepRecentTokens: 400,
  tokenizer: "o200k_base"
})

const compact = (messages: ReadonlyArray<Message.Message>) =>
  TieredSummaryEngine.makeAsync({ memory: { extractor: null } }).compact({
    entries: messages.map((message, index) => messageEntry(`m${index}`, index === 0 ? null : `m${index - 1}`, message)),
    policy
  })

describe("the reduction keeps the latest task-setting ask when the request fits with it", () => {
  it("a long pasted task behind a short 'go on': the task stays (clamped), the request fits, no checkpoint", async () => {
    const result = await compact(conversation("go on"))
    expect(result.checkpoint).toBeUndefined()
    expect(result.stages.some((stage) => stage.stage === "reduce:slidingWindow")).toBe(true)
    expect(result.fits).toBe(true)
    const ids = result.view.items.map((item) => item.entryId)
    expect(ids).toContain("m2")
    expect(ids).toContain("m4")
    expect(ids).not.toContain("m0")
  })
})
