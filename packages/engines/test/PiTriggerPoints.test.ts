/**
 * The tiered engine lands where it says (issue #11 requirement 7), on the
 * real pi session (../shared/transcripts/pi/before-compaction.jsonl):
 *
 * - at pi's two recorded trigger points (the entries just before pi's two
 *   `compaction` records) a threshold compaction with the engine's own plan
 *   passed in — as the CLI and the middleware call it — brings the request
 *   down to the documented low-water mark (`fixedOverheadTokens +
 *   DEFAULT_LOW_WATER_SHARE × availableTokens`), not just under the
 *   threshold; the cheap tiers (old tool output and tool-call arguments
 *   cleared) get there without a checkpoint (issue #13 req 4), and a manual
 *   compaction at the same point writes a validated checkpoint;
 * - the whole session fits a 32K window: the final ~27K-token `!find .` shell
 *   output is clamped like a tool result instead of being kept verbatim as
 *   "the latest user message".
 */
import { type Entry, type Message, PolicyRegistry } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../transcripts/src/importers/Import.ts"
import * as Engine from "../src/Engine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const imported = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
const entries: ReadonlyArray<Entry.Entry> = imported.transcript.entries
const compactions = entries.filter((entry) => entry.kind === "checkpoint")

interface PiUsage {
  readonly input: number
  readonly cacheRead: number
  readonly cacheWrite: number
}

/** The input tokens pi's provider reported for the last assistant message, anchored on the message before it. */
const lastUsage = (slice: ReadonlyArray<Entry.Entry>) => {
  const messages = slice.filter((entry): entry is Entry.MessageEntry => entry.kind === "message")
  for (let index = messages.length - 1; index > 0; index--) {
    const usage = (messages[index]!.meta as { usage?: PiUsage } | undefined)?.usage
    if (messages[index]!.message.role === "assistant" && usage)
      return { inputTokens: usage.input + usage.cacheRead + usage.cacheWrite, lastEntryId: messages[index - 1]!.id }
  }
  throw new Error("no recorded usage")
}

// Generous timeouts: the session is 2.4 MB and the machine is shared; nothing asserts a duration.
describe("pi/before-compaction.jsonl: compact at pi's recorded trigger points", { timeout: 180_000 }, () => {
  it("the session holds pi's two compaction records", () => {
    expect(compactions).toHaveLength(2)
  })

  for (const [index, label] of [
    [0, "first"],
    [1, "second"]
  ] as const) {
    it(`${label} trigger point: threshold fires, compact(input, plan) lands at the low-water mark by the cheap tiers, a manual compaction writes a valid checkpoint`, async () => {
      const at = entries.indexOf(compactions[index]!)
      const input = { entries: entries.slice(0, at), policy: PolicyRegistry.lookupSync("claude-sonnet-4-5") }
      const engine = TieredSummaryEngine.makeAsync()
      // pi's trigger was the provider's usage of the last response before the record: anchor on it.
      const anchor = lastUsage(input.entries)
      await engine.recordOutcome(input, anchor)
      const decision = await engine.shouldCompact(input)
      expect(decision.reasons).toEqual(["threshold"])
      const plan = await engine.plan(input)
      const result = await engine.compact(input, plan)
      const { budget } = decision
      const lowWaterTokens =
        budget.fixedOverheadTokens + Math.floor(budget.availableTokens * Engine.DEFAULT_LOW_WATER_SHARE)
      expect(result.fits).toBe(true)
      expect(result.after.inputTokens).toBeLessThanOrEqual(lowWaterTokens)
      expect(result.checkpoint).toBeUndefined()
      expect(result.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("not-needed")
      const manual = await TieredSummaryEngine.makeAsync().compact({ ...input, manual: true })
      expect(manual.checkpoint?.validation?.ok).toBe(true)
      expect(manual.after.inputTokens).toBeLessThan(manual.before.inputTokens)
      // At the second point the previous checkpoint is pi's own first compaction: this one is generation 2.
      expect(manual.checkpoint?.generation).toBe(index + 1)
    })
  }
})

const textOf = (message: Message.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

describe("pi/before-compaction.jsonl in a 32K window", { timeout: 180_000 }, () => {
  it("compacts and fits: the final `find .` output (~27K tokens) is clamped like a tool result, the typed ask stays", async () => {
    const policy = PolicyRegistry.lookupSync("mistral-7b")
    expect(policy.contextWindowTokens).toBeLessThanOrEqual(32_768)
    const input = { entries, policy }
    const engine = TieredSummaryEngine.makeAsync()
    const result = await engine.compact(input, await engine.plan(input))
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    const messages = entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
    const find = messages.findLast((message) => message.role === "user" && textOf(message).startsWith("Ran `find .`"))!
    expect(textOf(find).length).toBeGreaterThan(50_000)
    const viewFind = result.view.items.find((item) => textOf(item.message).startsWith("Ran `find .`"))
    expect(viewFind).toBeDefined()
    expect(textOf(viewFind!.message).length).toBeLessThan(textOf(find).length / 2)
    // The shell output (user-role data) is not the latest user message: it was clamped, not pinned whole; the
    // latest message the user typed ("ok") is kept verbatim after the checkpoint.
    expect(result.checkpoint?.validation?.ok).toBe(true)
    const typed = messages.findLast((message) => message.role === "user" && !textOf(message).startsWith("Ran `"))!
    const at = result.view.items.findIndex(
      (item) => item.message.role === "user" && textOf(item.message) === textOf(typed)
    )
    expect(at).toBeGreaterThan(result.view.items.findIndex((item) => item.source === "checkpoint"))
  })
})
