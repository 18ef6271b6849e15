/**
 * Custom strategies are plug-ins: one that throws, returns a malformed
 * result, overruns its deadline or runs after the caller aborted yields a
 * typed `PluginFailed` in `failures`, its edits are not applied, and the
 * compaction still returns a request that fits (issue #12 req 2).
 */
import { type ContextEngine, type Entry, type Message, PluginGuard, type Strategy } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, entriesOf, results, user } from "./support.ts"

const session = (turns: number): Array<Entry.Entry> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++)
    messages.push(
      user(`Step ${turn}: inspect src/module_${turn}.ts`),
      calls({ id: `c${turn}`, name: "read", input: { path: `src/module_${turn}.ts` } }),
      results({ id: `c${turn}`, name: "read", text: `// module ${turn}\n${"x ".repeat(3_000)}` }),
      assistant(`module_${turn} exports handler${turn}.`)
    )
  return entriesOf(messages)
}

const strategy = (name: string, apply: () => unknown): Strategy.Strategy => ({
  name,
  apply: apply as Strategy.Strategy["apply"]
})

const busyFor = (ms: number) => {
  const end = performance.now() + ms
  while (performance.now() < end) {
    // a synchronous strategy that cannot be interrupted
  }
}

const faulty: Record<string, { readonly strategy: Strategy.Strategy; readonly failure: string }> = {
  throws: {
    strategy: strategy("boom", () => {
      throw new TypeError("cannot read properties of undefined")
    }),
    failure: "threw"
  },
  "returns undefined": { strategy: strategy("nothing", () => undefined), failure: "malformed" },
  "returns edits without an op": {
    strategy: strategy("bad-edits", () => ({ edits: [{ entryId: "m2" }] })),
    failure: "malformed"
  },
  "replaces without a message": {
    strategy: strategy("no-message", () => ({ edits: [{ op: "replace", entryId: "m3", strategy: "x", reason: "y" }] })),
    failure: "malformed"
  },
  "overruns its deadline": {
    strategy: strategy("slow", () => {
      busyFor(60)
      return { edits: [{ op: "drop", entryId: "m4", strategy: "slow", reason: "late" }] }
    }),
    failure: "timeout"
  }
}

// A 20 ms deadline only where the strategy overruns it by design (60 ms of busy work); the default elsewhere, so a
// loaded machine cannot turn another behaviour into a timeout.
const deadlineFor = (extra: Strategy.Strategy) => (extra.name === "slow" ? { strategyTimeoutMs: 20 } : {})
const engines: Record<string, (extra: Strategy.Strategy) => ContextEngine.AsyncContextEngine> = {
  "tiered-summary": (extra) =>
    TieredSummaryEngine.makeAsync({
      replaceBuiltInStrategies: () => [],
      extraStrategies: [extra],
      ...deadlineFor(extra)
    }),
  "sliding-window": (extra) =>
    SlidingWindowEngine.makeAsync({
      replaceBuiltInStrategies: () => [],
      extraStrategies: [extra],
      ...deadlineFor(extra)
    })
}

const policy = Cases.policySync({ contextWindow: 12_000, maxOutputTokens: 1_000, keepRecentTokens: 2_000 })

describe("custom strategies run guarded", () => {
  for (const [engineName, makeEngine] of Object.entries(engines)) {
    for (const [name, { strategy: extra, failure }] of Object.entries(faulty)) {
      it(`${engineName}: a strategy that ${name} is a typed ${failure} failure; its edits are not applied; the request fits`, async () => {
        const entries = session(8)
        const result = await makeEngine(extra).compact({ entries, policy })
        expect(result.failures).toContainEqual(
          expect.objectContaining({ _tag: "PluginFailed", kind: "strategy", plugin: extra.name, failure })
        )
        expect(result.failures?.find((error) => error instanceof PluginGuard.PluginFailed)).toBeInstanceOf(
          PluginGuard.PluginFailed
        )
        expect(result.edits.some((edit) => edit.strategy === extra.name)).toBe(false)
        expect(result.stages.find((stage) => stage.stage === extra.name)?.status).toBe("skipped")
        expect(result.fits).toBe(true)
      })
    }

    it(`${engineName}: an async apply is a malformed result that says it returned a Promise; its rejection is not left unhandled`, async () => {
      const unhandled: Array<unknown> = []
      const onUnhandled = (reason: unknown) => unhandled.push(reason)
      process.on("unhandledRejection", onUnhandled)
      try {
        const extra = strategy("async-drop", async () => {
          throw new Error("async strategy failed later")
        })
        const result = await makeEngine(extra).compact({ entries: session(8), policy })
        const failed = result.failures?.find((error) => error instanceof PluginGuard.PluginFailed)
        expect(failed).toMatchObject({ kind: "strategy", plugin: "async-drop", failure: "malformed" })
        expect((failed as PluginGuard.PluginFailed).detail).toMatch(/returned a Promise \(a thenable\)/)
        expect((failed as PluginGuard.PluginFailed).detail).toMatch(/synchronously/)
        await new Promise((resolve) => setTimeout(resolve, 20))
        expect(unhandled).toEqual([])
      } finally {
        process.off("unhandledRejection", onUnhandled)
      }
    })

    it(`${engineName}: an edit naming an entry id not in the view makes the result malformed (which id, which strategy); none of its edits apply`, async () => {
      const entries = session(8)
      const extra = strategy("stale-ids", () => ({
        edits: [
          { op: "drop", entryId: entries[3]!.id, strategy: "stale-ids", reason: "old read" },
          { op: "drop", entryId: "no-such-entry", strategy: "stale-ids", reason: "old read" }
        ]
      }))
      const result = await makeEngine(extra).compact({ entries, policy })
      const failed = result.failures?.find((error) => error instanceof PluginGuard.PluginFailed)
      expect(failed).toMatchObject({ kind: "strategy", plugin: "stale-ids", failure: "malformed" })
      expect((failed as PluginGuard.PluginFailed).detail).toContain('edit 1 (drop) names entry id "no-such-entry"')
      expect((failed as PluginGuard.PluginFailed).message).toContain("stale-ids")
      expect(result.edits.some((edit) => edit.strategy === "stale-ids")).toBe(false)
      expect(result.stages.find((stage) => stage.stage === "stale-ids")?.status).toBe("skipped")
    })

    it(`${engineName}: after the caller's signal fired, no custom strategy runs (aborted failure)`, async () => {
      let ran = false
      const extra = strategy("late", () => {
        ran = true
        return { edits: [] }
      })
      const controller = new AbortController()
      controller.abort(new Error("user pressed stop"))
      const result = await makeEngine(extra).compact({ entries: session(8), policy, signal: controller.signal })
      expect(ran).toBe(false)
      expect(result.failures).toContainEqual(expect.objectContaining({ kind: "strategy", failure: "aborted" }))
    })
  }
})
