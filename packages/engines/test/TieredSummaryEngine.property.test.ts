import { type Message, Turns } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { conversation, entriesOf } from "./support.ts"

const TYPED = new Set(["BudgetExceeded", "SummarizerFailed", "ValidationFailed", "FixedOverheadExceedsBudget"])

const system: Message.Message = { role: "system", content: "You are a coding agent working in /work/app." }

const isEmpty = (message: Message.Message): boolean =>
  typeof message.content === "string" ? message.content.length === 0 : message.content.length === 0

describe("TieredSummaryEngine invariants (DESIGN.md, property-tested)", () => {
  const seen = { checkpoint: 0, reduced: 0, error: 0 }

  it("never mutates input; keeps pairing, system and latest user verbatim; checkpoint before the latest user; no empty messages", async () => {
    await fc.assert(
      fc.asyncProperty(
        conversation,
        fc.integer({ min: 6_000, max: 20_000 }),
        fc.integer({ min: 500, max: 4_000 }),
        fc.boolean(),
        fc.boolean(),
        async (items, window, keepRecentTokens, manual, cheap) => {
          const messages = [system, ...items.map((item) => item.message)]
          const entries = entriesOf(messages)
          const snapshot = JSON.stringify(entries)
          const policy = Cases.policySync({
            contextWindow: window,
            maxOutputTokens: 1_000,
            keepRecentTokens
          })
          const engine = TieredSummaryEngine.makeAsync(cheap ? {} : { replaceBuiltInStrategies: () => [] })
          const outcome = await engine
            .compact({ entries, policy, manual })
            .then((result) => ({ result }))
            .catch((error: unknown) => ({ error: error as { _tag?: string } }))
          expect(JSON.stringify(entries)).toBe(snapshot)
          seen["error" in outcome ? "error" : outcome.result.checkpoint ? "checkpoint" : "reduced"]++
          if ("error" in outcome) {
            expect(TYPED.has(outcome.error._tag ?? "")).toBe(true)
            return
          }
          const view = outcome.result.view.items
          const out = view.map((item) => item.message)
          // pairing: every result has an earlier call, every call has a result
          const calls = new Set<string>()
          const answered = new Set<string>()
          for (const message of out) {
            if (typeof message.content === "string") continue
            for (const part of message.content) {
              if (part.type === "tool-call") calls.add(part.toolCallId)
              if (part.type === "tool-result") {
                expect(calls.has(part.toolCallId)).toBe(true)
                answered.add(part.toolCallId)
              }
            }
          }
          for (const id of calls) expect(answered.has(id)).toBe(true)
          expect(out[0]).toBe(system)
          // The latest user message the engine must keep verbatim is the user's latest words (a later command
          // record or pasted log is data, shared case C21), as Turns.latestUserIndex defines it.
          const latestUser = messages[Turns.latestUserIndex(messages.map((message) => ({ message })))]
          const latestAt = out.indexOf(latestUser!)
          expect(latestAt).toBeGreaterThanOrEqual(0)
          const checkpointAt = view.findIndex((item) => item.source === "checkpoint")
          if (checkpointAt >= 0) expect(checkpointAt).toBeLessThan(latestAt)
          for (const message of out) expect(isEmpty(message)).toBe(false)
          if (outcome.result.checkpoint) {
            expect(outcome.result.checkpoint.validation?.ok).toBe(true)
            expect(outcome.result.fits).toBe(true)
          }
        }
      ),
      { numRuns: 60 }
    )
    // the generator reaches the checkpoint path (about half the runs), not only the cheap one
    expect(seen.checkpoint).toBeGreaterThan(0)
  }, 60_000)
})
