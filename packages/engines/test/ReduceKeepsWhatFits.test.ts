/**
 * When no checkpoint can be written, the tiered engine's reduction drops turns only as far as the request needs
 * (`Reduce.reductionStrategies`): the lossless stages aim at the low-water mark, the sliding window at the request's
 * own target.
 */
import type { Entry, Message } from "@context-engine/core"
import { Measurer, PolicyRegistry } from "@context-engine/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const entriesOf = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `m${index}`,
    parentId: index === 0 ? null : `m${index - 1}`,
    timestamp: `2026-03-01T00:00:${String(index).padStart(2, "0")}.000Z`,
    schemaVersion: 1,
    kind: "message",
    message
  }))

describe("a reduction drops turns only as far as the request needs", () => {
  it("keeps a long pasted ask (clamped) when the request is under its budget after the clamp", async () => {
    // A replay at 8K: the pasted ask (≈3,400 tokens) was clamped to 1,720, 37 tokens above the low-water mark. The
    // only turn the checkpoint could cover was 21 tokens (no summary is smaller), so the engine reduced, and the
    // window, aiming at the low-water mark, dropped the ask too: the request went out as "go on" alone.
    const pasted = Array.from(
      { length: 149 },
      (_, line) =>
        `Line ${line}: the pixel data handler must keep reading the integer case while the float case skips attribute ${line}.`
    ).join("\n")
    const entries = entriesOf([
      { role: "user", content: "hi, please help me with the handler" },
      { role: "assistant", content: "Sure, what do you need?" },
      { role: "user", content: pasted },
      { role: "assistant", content: "Understood." },
      { role: "user", content: "go on" }
    ])
    const policy = PolicyRegistry.resolveSync({ model: "gpt-4o", contextWindowTokens: 8_000 })
    const engine = TieredSummaryEngine.make()
    const result = await Effect.runPromise(engine.compact({ entries, policy }))
    expect(result.checkpoint).toBeUndefined()
    const kept = result.view.items.map((item) => item.entryId)
    expect(kept).toContain("m2")
    expect(kept).toContain("m4")
    const sent = Measurer.forPolicy(policy).measure(result.view)
    expect(sent.inputTokens).toBeLessThanOrEqual(8_000 - policy.reserveTokens)
    expect(result.fits).toBe(true)
  })
})
