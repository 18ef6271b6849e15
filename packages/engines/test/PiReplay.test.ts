/**
 * Issue #13 requirement 4, asserted on the replay `node bench/run.ts replay`
 * prints (`piReplay.ts`): in the 128K replay of the pi session, at least
 * 60 % of the compaction events are resolved without writing a checkpoint,
 * the prompt cache is rewritten no more often than pi's 4 compactions (the
 * issue's figure; the bench runs pi's rule on the same requests beside it),
 * never outside a compaction, and no request goes over its budget.
 */
import { describe, expect, it } from "vitest"
import { replay } from "./piReplay.ts"

describe("the pi session replayed in a 128K window (issue #13 req 4)", { timeout: 300_000 }, () => {
  it("resolves ≥ 60 % of compactions without a checkpoint, rewrites the cache ≤ 4 times, stays under the budget", async () => {
    const run = await replay()
    expect(run.calls).toBe(484)
    expect(run.failures).toBe(0)
    expect(run.events).toBeGreaterThan(0)
    expect(run.withoutCheckpoint / run.events).toBeGreaterThanOrEqual(0.6)
    expect(run.rewrites).toBeLessThanOrEqual(4)
    expect(run.rewritesOutsideEvents).toBe(0)
    expect(run.peakTokens).toBeLessThanOrEqual(run.peakBudgetTokens)
  })
})
