/**
 * Overflow recovery never learns a collapsed window: numbers that contradict
 * the measured request are not used, and the learned window keeps fixed
 * overhead + reserve + MIN_CONVERSATION_TOKENS.
 */
import { type Entry, Errors, type ModelPolicy, PolicyLimits, PolicyRegistry } from "@context-engine/core"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as OverflowRecovery from "../src/OverflowRecovery.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"

const policy: ModelPolicy.ModelPolicy = PolicyRegistry.lookupSync("claude-sonnet-4-5")
const overflow = (fields: { limitTokens?: number; requestedTokens?: number }) =>
  new Errors.ContextOverflow({ provider: "test", providerMessage: "prompt is too long", ...fields })

const message = (id: string, role: "system" | "user", text: string, parentId: string | null): Entry.Entry =>
  ({
    id,
    parentId,
    timestamp: "2025-01-01T00:00:00.000Z",
    schemaVersion: 1,
    kind: "message",
    message: role === "system" ? { role, content: text } : { role, content: [{ type: "text", text }] }
  }) as Entry.Entry

describe("OverflowRecovery.effectiveWindow", () => {
  it('ignores a provider count that contradicts the request ("60000 > 20000" for a 3K prompt)', () => {
    const window = OverflowRecovery.effectiveWindow(
      policy,
      overflow({ limitTokens: 20_000, requestedTokens: 60_000 }),
      { measuredInputTokens: 3_000, fixedOverheadTokens: 500 }
    )
    // Before: 20,000 × 3,000 / 60,000 = 1,000. Now the limit is used as is, above the floor.
    expect(window).toBe(Math.max(20_000, OverflowRecovery.minimumWindow(policy, 500)))
    expect(window).toBeGreaterThanOrEqual(500 + policy.reserveTokens + OverflowRecovery.MIN_CONVERSATION_TOKENS)
  })

  it("still scales by a believable undercount (≤ MAX_UNDERCOUNT_RATIO)", () => {
    expect(
      OverflowRecovery.effectiveWindow(policy, overflow({ limitTokens: 100_000, requestedTokens: 120_000 }), {
        measuredInputTokens: 100_000
      })
    ).toBe(Math.floor((100_000 * 100_000) / 120_000))
  })

  it("never learns less than fixed overhead + reserve + minimum conversation room", () => {
    const floor = OverflowRecovery.minimumWindow(policy, 2_000)
    expect(floor).toBe(2_000 + policy.reserveTokens + OverflowRecovery.MIN_CONVERSATION_TOKENS)
    for (const [error, request] of [
      [overflow({ limitTokens: 1 }), { measuredInputTokens: 3_000 }],
      [overflow({ limitTokens: 0 }), { measuredInputTokens: 3_000 }],
      [overflow({ limitTokens: Number.NaN }), { measuredInputTokens: 3_000 }],
      [overflow({}), { measuredInputTokens: 3_000, excessTokens: 2_999 }],
      [overflow({}), { measuredInputTokens: 3_000, excessTokens: 50_000 }],
      [overflow({}), { measuredInputTokens: 10 }]
    ] as const)
      expect(
        OverflowRecovery.effectiveWindow(policy, error, { ...request, fixedOverheadTokens: 2_000 })
      ).toBeGreaterThanOrEqual(floor)
  })

  it("property: the learned window stays within [floor, window] and the recovery policy is valid", () => {
    fc.assert(
      fc.property(
        fc.option(fc.integer({ min: -10, max: 3_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: -10, max: 3_000_000 }), { nil: undefined }),
        fc.option(fc.integer({ min: -10, max: 3_000_000 }), { nil: undefined }),
        fc.integer({ min: 0, max: 400_000 }),
        fc.integer({ min: 0, max: 20_000 }),
        (limitTokens, requestedTokens, excessTokens, measuredInputTokens, fixedOverheadTokens) => {
          const error = overflow({
            ...(limitTokens !== undefined ? { limitTokens } : {}),
            ...(requestedTokens !== undefined ? { requestedTokens } : {})
          })
          const request = {
            measuredInputTokens,
            fixedOverheadTokens,
            ...(excessTokens !== undefined ? { excessTokens } : {})
          }
          const window = OverflowRecovery.effectiveWindow(policy, error, request)
          expect(window).toBeGreaterThanOrEqual(OverflowRecovery.minimumWindow(policy, fixedOverheadTokens))
          expect(window).toBeLessThanOrEqual(policy.contextWindowTokens)
          expect(PolicyLimits.check(OverflowRecovery.recoveryPolicy(policy, error, request))).toBeUndefined()
        }
      )
    )
  })
})

describe("OverflowRecovery.applyLearnedWindow", () => {
  it("does not apply a collapsed learned window (e.g. 1 token persisted by an older build)", () => {
    const applied = OverflowRecovery.applyLearnedWindow(policy, 1)
    expect(applied.contextWindowTokens).toBe(OverflowRecovery.minimumWindow(policy))
    expect(PolicyLimits.check(applied)).toBeUndefined()
    expect(OverflowRecovery.applyLearnedWindow(policy, Number.NaN)).toBe(policy)
    expect(OverflowRecovery.applyLearnedWindow(policy, -3)).toBe(policy)
    expect(OverflowRecovery.applyLearnedWindow(policy, 150_000).contextWindowTokens).toBe(150_000)
  })
})

describe("OverflowRecovery.recover", () => {
  it("learns a window that keeps the measured fixed overhead when the error's numbers contradict the request", async () => {
    const system = "You are a careful engineer. ".repeat(400)
    const entries = [message("s", "system", system, null), message("u", "user", "Fix the build please.", "s")]
    const engine = SlidingWindowEngine.make()
    const input = { entries, policy }
    const measured = await Effect.runPromise(engine.measure(input))
    const recovery = await Effect.runPromise(
      OverflowRecovery.recover(
        engine,
        input,
        overflow({ limitTokens: 20_000, requestedTokens: 60_000 }),
        { measuredInputTokens: measured.inputTokens },
        { eventId: "overflow-1", timestamp: "2025-01-01T00:00:01.000Z" }
      )
    )
    const overhead = measured.byCategory.system + measured.byCategory.toolSchemas
    expect(overhead).toBeGreaterThan(1_000)
    expect(recovery.policy.contextWindowTokens).toBeGreaterThanOrEqual(
      overhead + policy.reserveTokens + OverflowRecovery.MIN_CONVERSATION_TOKENS
    )
    const event = recovery.entriesToAppend.at(-1)!
    expect(event.kind === "event" && (event.event.data as { learnedWindowTokens: number }).learnedWindowTokens).toBe(
      recovery.policy.contextWindowTokens
    )
    expect(PolicyLimits.check(recovery.policy)).toBeUndefined()
  })
})

describe("OverflowRecovery.recover runs its compaction guarded", () => {
  const entries = [
    message("s", "system", "You are a coding agent.", null),
    message("u1", "user", "Fix the failing test in src/app.ts", "s")
  ]
  const faulty: Record<string, { readonly compact: () => Effect.Effect<never>; readonly failure: string }> = {
    "never answers": { compact: () => Effect.never, failure: "timeout" },
    "throws inside Effect.sync": {
      compact: () =>
        Effect.sync(() => {
          throw new TypeError("cannot read properties of undefined")
        }),
      failure: "threw"
    },
    "throws before returning an Effect": {
      compact: () => {
        throw new Error("synchronous throw")
      },
      failure: "threw"
    }
  }
  for (const [name, { compact, failure }] of Object.entries(faulty)) {
    it(`a compaction that ${name} is a typed ${failure} failure and the retry is still assembled`, async () => {
      const engine = { ...SlidingWindowEngine.make(), compact } as ReturnType<typeof SlidingWindowEngine.make>
      const recovery = await Effect.runPromise(
        OverflowRecovery.recover(
          engine,
          { entries, policy },
          overflow({ limitTokens: 150_000 }),
          { measuredInputTokens: 2_000 },
          { eventId: "overflow-1", timestamp: "2025-01-01T00:00:01.000Z", compactionTimeoutMs: 100 }
        )
      )
      expect(recovery.compaction).toBeUndefined()
      expect(recovery.compactionError).toMatchObject({ _tag: "PluginFailed", failure })
      expect(recovery.assembled.messages.at(-1)).toEqual(entries[1]!.kind === "message" && entries[1]!.message)
      expect(recovery.entriesToAppend.at(-1)?.kind).toBe("event")
    })
  }
})
