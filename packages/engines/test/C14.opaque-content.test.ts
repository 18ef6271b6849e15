/**
 * C14 (../shared/cases): opaque content — a 2 MiB encrypted compaction item,
 * a 6 MiB base64 PDF and a 6 MiB base64 PNG returned as text — never makes
 * measurement or compaction throw (the estimator's regex overflowed the
 * stack on such runs), with the generic and Anthropic estimators.
 */
import { createHash } from "node:crypto"
import type { ContextEngine, Entry, Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

interface Case {
  readonly policy: Cases.CasePolicy
  readonly blobs: Record<string, Cases.Blob & { readonly sha256: string }>
  readonly messages: ReadonlyArray<Message.Message>
}

describe("C14 opaque content", () => {
  const c14 = loadCase<Case>("C14")
  const blobs = Object.fromEntries(Object.entries(c14.blobs).map(([name, blob]) => [name, Cases.blobText(blob)]))
  const messages = Cases.expandBlobs(c14.messages, c14.blobs)
  const entries: Array<Entry.Entry> = messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, index)).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))

  it("the blob rule reproduces every blob's sha256", () => {
    for (const [name, blob] of Object.entries(c14.blobs)) {
      expect(createHash("sha256").update(blobs[name]!).digest("hex"), name).toBe(blob.sha256)
    }
  })

  for (const tokenizer of ["estimate:generic", "estimate:anthropic"] as const) {
    it(`${tokenizer}: measure, shouldCompact, compact and assembleContext return typed results, and the request fits`, () => {
      const policy = { ...Cases.policySync(c14.policy, "C14"), tokenizer }
      const input: ContextEngine.EngineInput = { entries, policy }
      for (const engine of [SlidingWindowEngine.make(), TieredSummaryEngine.make()]) {
        for (const method of ["measure", "shouldCompact", "assembleContext"] as const) {
          const exit = Effect.runSyncExit(engine[method](input) as Effect.Effect<unknown, unknown>)
          expect(
            Exit.isSuccess(exit),
            `${engine.name}.${method}: ${Exit.isFailure(exit) ? String(exit.cause).slice(0, 200) : ""}`
          ).toBe(true)
        }
        const compacted = Effect.runSyncExit(engine.compact({ ...input, manual: true }))
        expect(Exit.isSuccess(compacted), Exit.isFailure(compacted) ? String(compacted.cause).slice(0, 300) : "").toBe(
          true
        )
        if (Exit.isSuccess(compacted)) expect(compacted.value.fits).toBe(true)
      }
    }, 600_000)
  }
})
