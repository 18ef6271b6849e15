/**
 * The sliding-window engine on the real pi transcript with its two imported
 * pi compactions (../shared/transcripts/pi/before-compaction.jsonl): the view
 * starts from pi's latest checkpoint and measures the active context, not
 * the whole ~500K-token history; compaction keeps the checkpoint and never
 * brings back messages it covered. The importer lives in transcripts;
 * it is used here only as a test fixture loader.
 */
import { ContextView, type Entry, Measurer, type ModelPolicy, Tokenizers } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Import from "../../transcripts/src/importers/Import.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"

const imported = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
const entries: ReadonlyArray<Entry.Entry> = imported.transcript.entries
const checkpoints = entries.filter((entry): entry is Entry.CheckpointEntry => entry.kind === "checkpoint")
const latest = checkpoints.at(-1)!
const firstKeptAt = entries.findIndex((entry) => entry.id === latest.checkpoint.firstKeptEntryId)
/** Non-system messages the latest checkpoint covered (before its first kept entry). */
const covered = new Set(
  entries
    .slice(0, firstKeptAt)
    .filter((entry) => entry.kind === "message" && entry.message.role !== "system")
    .map((entry) => entry.id)
)
const latestUserId = entries.findLast((entry) => entry.kind === "message" && entry.message.role === "user")!.id

const tokenizer = Tokenizers.get("o200k_base")
const measurer = Measurer.make(tokenizer)
const policy: ModelPolicy.ModelPolicy = {
  ...Cases.policySync({ contextWindow: 200_000, maxOutputTokens: 32_000 }, "pi-200000"),
  tokenizer: "o200k_base"
}
const input = { entries, policy }

describe("SlidingWindowEngine on pi/before-compaction.jsonl (2 imported pi compactions)", () => {
  it("has the checkpoints this test is about", () => {
    expect(checkpoints).toHaveLength(2)
    expect(latest.checkpoint.summarizer.kind).toBe("imported")
    expect(firstKeptAt).toBeGreaterThan(0)
    expect(covered.size).toBeGreaterThan(100)
  })

  it("builds its view from pi's latest checkpoint and measures the active context, not the whole history", () => {
    const view = SlidingWindowEngine.viewOf(input)
    const firstConversation = view.items.findIndex((item) => item.message.role !== "system")
    expect(view.items[firstConversation]).toMatchObject({ source: "checkpoint", entryId: latest.id })
    expect(view.items.filter((item) => item.source === "checkpoint")).toHaveLength(1)
    const coveredInView = view.items.filter((item) => covered.has(item.entryId) && item.entryId !== latestUserId)
    expect(coveredInView).toEqual([])

    const engine = SlidingWindowEngine.make({ measurer: () => measurer })
    const measured = Effect.runSync(engine.measure(input))
    const wholeHistory = measurer.measure(
      ContextView.fromEntries(entries.filter((entry) => entry.kind === "message"))
    ).inputTokens
    expect(wholeHistory).toBeGreaterThan(400_000)
    // What is sent: the view with pairing repaired (pi's interrupted calls get synthesized results).
    const sent = Effect.runSync(engine.assembleContext(input)).view
    expect(measured.inputTokens).toBe(measurer.measure(sent, {}).inputTokens)
    expect(measured.inputTokens).toBeGreaterThan(measurer.measure(view, {}).inputTokens)
    expect(measured.inputTokens).toBeLessThan(wholeHistory / 2)
    expect(measured.byCategory.checkpoint).toBeGreaterThan(0)
  }, 30_000)

  it("compaction keeps pi's checkpoint, never brings back covered messages, and replays from its entries", () => {
    const engine = SlidingWindowEngine.make({ measurer: () => measurer })
    const result = Effect.runSync(engine.compact({ ...input, manual: true }))
    expect(result.view.items.filter((item) => item.source === "checkpoint").map((item) => item.entryId)).toEqual([
      latest.id
    ])
    expect(result.view.items.some((item) => covered.has(item.entryId) && item.entryId !== latestUserId)).toBe(false)
    expect(result.edits.some((edit) => "entryId" in edit && edit.entryId === latest.id)).toBe(false)
    expect(result.after.inputTokens).toBe(measurer.measure(result.view, {}).inputTokens)
    expect(Effect.runSync(engine.validate(input, result)).ok).toBe(true)
    const next = { ...input, entries: [...entries, ...result.entriesToAppend] }
    expect(ContextView.toMessages(SlidingWindowEngine.viewOf(next))).toEqual(ContextView.toMessages(result.view))
  })
})
