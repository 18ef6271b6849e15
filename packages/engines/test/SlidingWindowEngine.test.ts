import type { ContextEngine, Message } from "@context-engine/core"
import { ContextView, Decode, Entry, Errors, Measurer, Tokenizers, ToolPairing } from "@context-engine/core"
import { Cases, deepFreeze, FakeMeasurer } from "@context-engine/core/testing"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { filler } from "../../strategies/test/support/views.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"

const measurer = FakeMeasurer.make()
const exact = Measurer.make(Tokenizers.get("o200k_base"))
const policy = Cases.policySync({ contextWindow: 20_000, maxOutputTokens: 2_000 }, "unit")
const engineOf = (options: SlidingWindowEngine.Options = {}) =>
  SlidingWindowEngine.make({ measurer: () => measurer, ...options })

const entry = (index: number, message: Message.Message): Entry.Entry => ({
  id: `e${index}`,
  parentId: index === 0 ? null : `e${index - 1}`,
  timestamp: `2026-03-01T00:00:${String(index % 60).padStart(2, "0")}.000Z`,
  schemaVersion: 1,
  kind: "message",
  message
})

/** `turns` turns of a user ask, a read call and a result of `chars` characters. */
const session = (turns: number, chars: number): Array<Entry.Entry> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let index = 0; index < turns; index++) {
    messages.push(
      { role: "user", content: `task ${index}` },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: `c${index}`, toolName: "bash", input: { n: index } }]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `c${index}`,
            toolName: "bash",
            output: { type: "text", value: filler(chars, index + 1) }
          }
        ]
      },
      { role: "assistant", content: `done ${index}` }
    )
  }
  return messages.map((message, index) => entry(index, message))
}

const ok = <A, E>(effect: Effect.Effect<A, E>): A => Effect.runSync(effect)

describe("SlidingWindowEngine", () => {
  it("does nothing when the request fits", () => {
    const input = deepFreeze({ entries: session(3, 400), policy })
    const decision = ok(engineOf().shouldCompact(input))
    expect(decision.compact).toBe(false)
    expect(decision.reasons).toEqual([])
  })

  it("compacts to the target with deterministic, schema-valid edit entries that reproduce the view", () => {
    const entries = session(40, 4_000)
    const input = deepFreeze({ entries, policy })
    const engine = engineOf()
    const decision = ok(engine.shouldCompact(input))
    expect(decision.compact).toBe(true)
    expect(decision.reasons).toEqual(["threshold"])
    const planned = ok(engine.plan(input))
    expect(planned.stages).toEqual([
      "normalize",
      "clamp",
      "dedupe",
      "toolTrim.soft",
      "toolTrim.clear",
      "toolTrim.clearInputs",
      "media",
      "slidingWindow",
      "lastResort:toolTrim.soft",
      "lastResort:toolTrim.clear",
      "lastResort:toolTrim.clearInputs",
      "lastResort:slidingWindow.steps",
      "lastResort:clamp.fit"
    ])
    const result = ok(engine.compact(input, planned))
    expect(result.after.inputTokens).toBeLessThanOrEqual(planned.targetTokens)
    expect(result.fits).toBe(true)
    expect(result.entriesToAppend).toHaveLength(result.edits.length)
    const decode = Decode.decodeUnknownSync(Entry.Entry, "entry")
    for (const [index, appended] of result.entriesToAppend.entries()) {
      expect(decode(appended)).toEqual(appended)
      expect(appended.id).toBe(SlidingWindowEngine.editEntryId("e160", index))
      expect(appended.parentId).toBe(index === 0 ? "e160" : SlidingWindowEngine.editEntryId("e160", index - 1))
    }
    // Same input, same entries.
    expect(ok(engineOf().compact(input, planned)).entriesToAppend).toEqual(result.entriesToAppend)
    const next = { ...input, entries: [...entries, ...result.entriesToAppend] }
    expect(ContextView.toMessages(SlidingWindowEngine.viewOf(next))).toEqual(ContextView.toMessages(result.view))
    expect(ok(engine.shouldCompact(next)).compact).toBe(false)
    expect(ok(engine.validate(input, result)).ok).toBe(true)
  })

  it("uses the provider's reported usage as an anchor for later measurements", () => {
    const entries = session(3, 400)
    const input = { entries, policy }
    const engine = SlidingWindowEngine.make({ measurer: () => exact })
    const counted = ok(engine.measure(input)).inputTokens
    ok(engine.recordOutcome(input, { inputTokens: counted + 5_000, lastEntryId: "e12" }))
    const anchored = ok(engine.measure(input))
    expect(anchored.method).toBe("anchored")
    expect(anchored.inputTokens).toBe(counted + 5_000)
  })

  it("after a provider overflow, compacts once below the reported limit and then clears the flag", () => {
    const input = { entries: session(12, 4_000), policy }
    const engine = engineOf()
    expect(ok(engine.shouldCompact(input)).compact).toBe(false)
    ok(
      engine.recordOutcome(input, {
        overflow: new Errors.ContextOverflow({
          provider: "test",
          limitTokens: 12_000,
          providerMessage: "prompt is too long"
        })
      })
    )
    const decision = ok(engine.shouldCompact(input))
    expect(decision.reasons).toContain("overflow")
    const result = ok(engine.compact(input))
    expect(result.after.inputTokens).toBeLessThan(12_000 - policy.reserveTokens - policy.toolLoopReserveTokens)
    expect(ok(engine.shouldCompact(input)).reasons).not.toContain("overflow")
  })

  it("keeps the lossless tier only when the window is off, and fails typed when that is not enough", () => {
    const chat: Array<Message.Message> = []
    for (let index = 0; index < 100; index++)
      chat.push({ role: "user", content: filler(800, index) }, { role: "assistant", content: filler(800, index + 7) })
    const input = { entries: chat.map((message, index) => entry(index, message)), policy }
    const exit = Effect.runSyncExit(engineOf({ window: false }).compact(input))
    expect(Exit.isFailure(exit)).toBe(true)
    if (Exit.isFailure(exit)) expect(String(exit.cause)).toContain("BudgetExceeded")
    expect(ok(engineOf().compact(input)).fits).toBe(true)
    const planned = ok(engineOf({ window: false }).plan(input))
    expect(planned.stages).not.toContain("slidingWindow")
  })

  describe("a tool loop whose newest results are over the budget alone", () => {
    const toolPolicy = Cases.policySync({ contextWindow: 16_000, maxOutputTokens: 2_000 }, "tool-loop")
    /** One ask, then `steps` bash calls whose results have `chars` characters each. */
    const loop = (steps: number, chars: number): Array<Entry.Entry> => {
      const messages: Array<Message.Message> = [
        { role: "system", content: "You are a coding agent." },
        { role: "user", content: "fix the build" }
      ]
      for (let index = 0; index < steps; index++)
        messages.push(
          {
            role: "assistant",
            content: [{ type: "tool-call", toolCallId: `c${index}`, toolName: "bash", input: { n: index } }]
          },
          {
            role: "tool",
            content: [
              {
                type: "tool-result",
                toolCallId: `c${index}`,
                toolName: "bash",
                output: { type: "text", value: filler(chars, index + 1) }
              }
            ]
          }
        )
      return messages.map((message, index) => entry(index, message))
    }
    const resultText = (view: ContextView.ContextView, entryId: string): string => {
      const item = view.items.find((candidate) => candidate.entryId === entryId)!
      const part = (item.message.content as ReadonlyArray<Message.ContentPart>)[0] as Message.ToolResultPart
      return part.output.type === "text" ? part.output.value : ""
    }

    it("fits by trimming the loop's older results to markers; the latest step stays whole (was BudgetExceeded)", () => {
      // Three results of ~6,000 o200k tokens each: every one is protected by the ladder's trims
      // (keepRecentToolResults 3), so the window alone left 17,911 tokens against a 12,400-token budget.
      const entries = loop(3, 24_000)
      const input = deepFreeze({ entries, policy: toolPolicy })
      const engine = SlidingWindowEngine.make({ measurer: () => exact })
      const decision = ok(engine.shouldCompact(input))
      expect(decision.measurement.inputTokens).toBeGreaterThan(decision.budget.inputBudgetTokens)
      const result = ok(engine.compact(input))
      expect(result.fits).toBe(true)
      // Measured afresh on what is sent, not on the engine's own report.
      const sent = ok(engine.assembleContext({ ...input, entries: [...entries, ...result.entriesToAppend] }))
      expect(exact.measure(sent.view).inputTokens).toBeLessThanOrEqual(decision.budget.inputBudgetTokens)
      expect(ToolPairing.analyze(sent.view.items).problems).toEqual([])
      // The latest step (call c2, result e7) is what the agent acts on: verbatim. The ask too.
      expect(resultText(sent.view, "e7")).toBe(filler(24_000, 3))
      expect(sent.messages[1]).toEqual({ role: "user", content: "fix the build" })
      // Older results keep a marker naming their transcript entry.
      expect(resultText(sent.view, "e3")).toContain("e3")
      expect(resultText(sent.view, "e3").length).toBeLessThan(24_000)
      expect(result.stages.map((stage) => stage.stage)).toContain("lastResort:toolTrim.soft")
      expect(result.edits.map((edit) => [edit.strategy, "entryId" in edit ? edit.entryId : ""])).toEqual([
        ["lastResort:toolTrim.soft", "e3"]
      ])
    })

    it("keeps the ladder's protections whenever the budget allows them", () => {
      // Six results: the ladder clears the three oldest and fits; the three newest stay verbatim.
      const entries = loop(6, 16_000)
      const result = ok(SlidingWindowEngine.make({ measurer: () => exact }).compact({ entries, policy: toolPolicy }))
      expect(result.fits).toBe(true)
      for (const [entryId, seed] of [
        ["e9", 4],
        ["e11", 5],
        ["e13", 6]
      ] as const)
        expect(resultText(result.view, entryId)).toBe(filler(16_000, seed))
      expect(result.edits.some((edit) => edit.strategy.startsWith("lastResort:"))).toBe(false)
    })

    it("still fails typed with the window off", () => {
      const exit = Effect.runSyncExit(
        SlidingWindowEngine.make({ measurer: () => exact, window: false }).compact({
          entries: loop(3, 24_000),
          policy: toolPolicy
        })
      )
      expect(Exit.isFailure(exit)).toBe(true)
      if (Exit.isFailure(exit)) {
        expect(String(exit.cause)).toContain("BudgetExceeded")
        // What needs the room, largest first (new-user trial: the message named only the system prompt and the
        // user's message, a few dozen tokens, while tool results needed the rest).
        expect(String(exit.cause)).toMatch(/still need \d+ tokens \(tool results \d{1,3}(,\d{3})*, /)
      }
    })
  })

  it("repairs pairing in assembleContext without any edit entry", () => {
    const entries = [
      entry(0, { role: "user", content: "run" }),
      entry(1, { role: "assistant", content: [{ type: "tool-call", toolCallId: "x", toolName: "bash", input: {} }] }),
      entry(2, { role: "user", content: "it died" })
    ]
    const assembled = ok(engineOf().assembleContext({ entries, policy }))
    expect(ToolPairing.analyze(assembled.view.items).problems).toEqual([])
    expect(assembled.messages.map((message) => message.role)).toEqual(["user", "assistant", "tool", "user"])
  })

  it("has a Promise face whose failures reject with the typed error", async () => {
    const engine = SlidingWindowEngine.makeAsync({ measurer: () => measurer })
    const tiny = Cases.policySync({ contextWindow: 2_000, maxOutputTokens: 500 }, "tiny")
    const input: ContextEngine.EngineInput = {
      entries: [entry(0, { role: "user", content: filler(40_000) })],
      policy: tiny
    }
    await expect(engine.compact(input)).rejects.toBeInstanceOf(Errors.BudgetExceeded)
    expect((await engine.shouldCompact(input)).compact).toBe(true)
  })
})

describe("SlidingWindowEngine anchoring after a compaction", () => {
  it("does not measure a compacted view with usage reported for the uncompacted one", async () => {
    const engine = SlidingWindowEngine.make({ measurer: () => exact })
    const entries = session(12, 6_000)
    const input = { entries, policy }
    const counted = (await Effect.runPromise(engine.measure(input))).inputTokens
    const lastEntryId = entries.at(-1)!.id
    // the provider reports a little more than we count (framing we do not see)
    await Effect.runPromise(engine.recordOutcome(input, { inputTokens: counted + 300, lastEntryId }))
    expect((await Effect.runPromise(engine.measure(input))).method).toBe("anchored")
    const result = await Effect.runPromise(engine.compact(input))
    expect(result.entriesToAppend.length).toBeGreaterThan(0)
    const compactedInput = { entries: [...entries, ...result.entriesToAppend], policy }
    const measured = await Effect.runPromise(engine.measure(compactedInput))
    const assembled = await Effect.runPromise(engine.assembleContext(compactedInput))
    expect(measured.method).not.toBe("anchored")
    // On the provider's scale (UsageScale): the local count times the usage / count ratio it showed.
    const ratio = (counted + 300) / counted
    expect(measured.inputTokens).toBeCloseTo(exact.measure(assembled.view).inputTokens * ratio, -1)
    expect(measured.notes?.join(" ")).toContain("local count ×")
    expect(measured.inputTokens).toBeLessThan(counted)
  })
})
