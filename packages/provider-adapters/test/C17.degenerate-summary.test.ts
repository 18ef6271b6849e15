/**
 * Shared case C17 (../shared/cases): a model summarizer's degenerate reply —
 * empty, whitespace, one line repeated, a tool call, a stub — never commits,
 * in its free-text and its structured form; the refusal says why; at most one
 * repair retry; the previous checkpoint stays and the request still fits.
 */
import { type Checkpoint, type Entry, Errors, type Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import { type CaseReply, checkpointEntry, replyModel, toEntries } from "./support/CaseModel.ts"

interface C17 {
  readonly policy: Cases.CasePolicy
  readonly messages: Array<Message.Message>
  readonly previousCheckpoint: { generation: number; content: Checkpoint.CheckpointContent; text: string }
  readonly summarizerReplies: Array<CaseReply & { readonly id: string }>
}

const c17 = loadCase<C17>("C17")

/**
 * The case's messages after the previous checkpoint (generation 1): as in a
 * transcript, the checkpoint entry follows its first kept entry (the user's
 * first message here) and the conversation continues from it.
 */
const entries = (): Array<Entry.Entry> => {
  const [system, first, ...rest] = toEntries(c17.messages)
  const previous = checkpointEntry("cp1", first!.id, {
    generation: c17.previousCheckpoint.generation,
    coveredRange: { fromEntryId: null, toEntryId: system!.id },
    firstKeptEntryId: first!.id,
    content: c17.previousCheckpoint.content,
    text: c17.previousCheckpoint.text
  })
  return [
    system!,
    first!,
    previous,
    ...rest.map((entry, index) => (index === 0 ? { ...entry, parentId: "cp1" } : entry))
  ]
}

/** Why a reply is refused, in the words the typed failure must carry. */
const WHY: Record<string, RegExp> = {
  empty: /empty/,
  whitespace: /empty/,
  "repeated-line": /repe/,
  "tool-call": /tool.call/,
  stub: /stub|placeholder/
}

describe("C17: degenerate model summaries never commit", () => {
  const policy = Cases.policySync(c17.policy, "C17")
  for (const reply of c17.summarizerReplies)
    for (const form of ["text", "object"] as const) {
      if (form === "object" && (reply.object === null || reply.object === undefined)) continue
      it(`C17 ${reply.id} (${form} form): refused with its reason, no checkpoint, the previous one stays, the request fits`, async () => {
        // The mock answers the same reply to the first call and to the repair retry.
        const { model, prompts } = replyModel([reply, reply], form)
        const engine = TieredSummaryEngine.makeAsync({
          summarizer: LanguageModelSummarizer.make({ model }),
          fallbackSummarizer: null,
          memory: { extractor: null }
        })
        const input = { entries: entries(), policy }
        const before = JSON.stringify(input.entries)
        expect((await engine.shouldCompact(input)).reasons).toContain("threshold")
        const result = await engine.compact(input)
        expect(result.checkpoint).toBeUndefined()
        expect(result.entriesToAppend.filter((entry) => entry.kind === "checkpoint")).toEqual([])
        expect(JSON.stringify(input.entries)).toBe(before)
        expect(prompts.length).toBeLessThanOrEqual(2)
        const reasons = (result.failures ?? []).map((failure) =>
          failure._tag === "ValidationFailed"
            ? `${failure.failedChecks.join(",")} ${failure.missing.join(",")}`
            : (failure as Errors.SummarizerFailed).reason
        )
        expect(reasons.length).toBeGreaterThan(0)
        expect(reasons.join("\n")).toMatch(WHY[reply.id]!)
        expect(
          result.failures?.every((f) => f instanceof Errors.ValidationFailed || f instanceof Errors.SummarizerFailed)
        ).toBe(true)
        expect(result.fits).toBe(true)
        const checkpoints = result.view.items.filter((item) => item.source === "checkpoint")
        expect(checkpoints.map((item) => item.entryId)).toEqual(["cp1"])
        // No message of the transcript was installed as a summary in place of the refused reply.
        expect(result.entriesToAppend.every((entry) => entry.kind !== "checkpoint")).toBe(true)
      })
    }

  it("C17 with the default fallback: a refused reply is replaced by the offline summary, never committed itself", async () => {
    const reply = c17.summarizerReplies.find((r) => r.id === "stub")!
    const { model } = replyModel([reply, reply])
    const engine = TieredSummaryEngine.makeAsync({
      summarizer: LanguageModelSummarizer.make({ model }),
      memory: { extractor: null }
    })
    const result = await engine.compact({ entries: entries(), policy: Cases.policySync(c17.policy, "C17") })
    expect(result.fits).toBe(true)
    if (result.checkpoint) {
      expect(result.checkpoint.summarizer.kind).toBe("extractive")
      expect(result.checkpoint.generation).toBe(2)
      expect(JSON.stringify(result.checkpoint.content)).not.toContain("Summary unavailable")
    }
  })
})
