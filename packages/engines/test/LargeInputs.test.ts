/**
 * #12 req 1 and 4 at scale and at the edges: 200,000 messages and a single
 * 50 MiB message measure and compact with typed results (the engines used
 * to throw a raw `RangeError` around 130,000 messages); the request never
 * carries an empty or reasoning-only message, and an empty latest user
 * message is a typed `InvalidInput`, not sent. No timing is asserted; the
 * test timeouts are hang guards only.
 */
import type { ContextEngine, Entry, Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const entriesOf = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: "2026-01-01T00:00:00.000Z",
    schemaVersion: 1,
    kind: "message",
    message
  }))

const policy = Cases.policySync({ contextWindow: 200_000, maxOutputTokens: 16_000 }, "large-inputs")
const engines = () => [SlidingWindowEngine.make(), TieredSummaryEngine.make({ memory: { extractor: null } })]

/** Runs measure, shouldCompact, compact and assembleContext; returns the exits (never throws). */
const runAll = (engine: ContextEngine.ContextEngine, input: ContextEngine.EngineInput) => {
  const measure = Effect.runSyncExit(engine.measure(input))
  const decision = Effect.runSyncExit(engine.shouldCompact(input))
  const compact = Effect.runSyncExit(engine.compact(input))
  const next = Exit.isSuccess(compact)
    ? { ...input, entries: [...input.entries, ...compact.value.entriesToAppend] }
    : input
  const assembled = Effect.runSyncExit(engine.assembleContext(next))
  return { measure, decision, compact, assembled }
}

const typedFailure = (exit: Exit.Exit<unknown, unknown>): boolean =>
  Exit.isSuccess(exit) ||
  exit.cause.reasons.every(
    (reason) => reason._tag === "Fail" && typeof (reason.error as { _tag?: unknown })._tag === "string"
  )

describe("large inputs", () => {
  it("200,000 messages: measured, compacted to fit, and assembled by every engine", () => {
    const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
    for (let index = 0; messages.length < 200_000; index++)
      messages.push(
        index % 2 === 0
          ? { role: "user", content: `step ${index}: run the tests in packages/p${index % 97}` }
          : {
              role: "assistant",
              content: [{ type: "text", text: `ran packages/p${index % 97}: ${index % 13} failures` }]
            }
      )
    const input = { entries: entriesOf(messages), policy }
    for (const engine of engines()) {
      const { measure, decision, compact, assembled } = runAll(engine, input)
      expect(Exit.isSuccess(measure), engine.name).toBe(true)
      expect(Exit.isSuccess(decision) && decision.value.compact, engine.name).toBe(true)
      expect(Exit.isSuccess(compact) && compact.value.fits, engine.name).toBe(true)
      expect(Exit.isSuccess(assembled), engine.name).toBe(true)
      if (Exit.isSuccess(assembled)) {
        expect(assembled.value.measurement.inputTokens).toBeLessThanOrEqual(assembled.value.measurement.budgetTokens)
        expect(assembled.value.messages.at(-1)).toEqual(messages.at(-1))
      }
    }
  }, 600_000)

  it("one 50 MiB tool result: clamped so the request fits; a 50 MiB latest user message: a typed BudgetExceeded", () => {
    const huge = "QUJD".repeat((50 * 1024 * 1024) / 4)
    const toolTurn: Array<Message.Message> = [
      { role: "user", content: "Dump the log." },
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "cat log" } }]
      },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: huge } }]
      },
      { role: "user", content: "What failed?" }
    ]
    for (const engine of engines()) {
      const { measure, compact, assembled } = runAll(engine, { entries: entriesOf(toolTurn), policy })
      expect(Exit.isSuccess(measure), engine.name).toBe(true)
      expect(Exit.isSuccess(compact) && compact.value.fits, engine.name).toBe(true)
      expect(Exit.isSuccess(assembled), engine.name).toBe(true)
    }
    const userTurn: Array<Message.Message> = [{ role: "user", content: huge }]
    for (const engine of engines()) {
      const { measure, decision, compact, assembled } = runAll(engine, { entries: entriesOf(userTurn), policy })
      expect(Exit.isSuccess(measure) && Exit.isSuccess(decision), engine.name).toBe(true)
      expect(typedFailure(compact), engine.name).toBe(true)
      if (Exit.isFailure(compact))
        expect(String(Exit.isFailure(compact) && compact.cause)).toMatch(/BudgetExceeded|InvalidInput/)
      expect(typedFailure(assembled), engine.name).toBe(true)
    }
  }, 600_000)

  it("an empty latest user message is a typed InvalidInput naming it; empty and reasoning-only messages are never sent", () => {
    const messages: Array<Message.Message> = [
      { role: "user", content: "Fix the bug." },
      { role: "assistant", content: [{ type: "reasoning", text: "thinking" }] },
      { role: "assistant", content: [{ type: "text", text: "" }] },
      { role: "assistant", content: [{ type: "text", text: "Done." }] },
      { role: "user", content: "Thanks, and now the docs." }
    ]
    for (const engine of engines()) {
      const assembled = Effect.runSyncExit(engine.assembleContext({ entries: entriesOf(messages), policy }))
      expect(Exit.isSuccess(assembled), engine.name).toBe(true)
      if (Exit.isSuccess(assembled)) {
        for (const message of assembled.value.messages) {
          const parts =
            typeof message.content === "string" ? [] : (message.content as Array<{ type: string; text?: string }>)
          if (typeof message.content === "string") expect(message.content.length).toBeGreaterThan(0)
          else {
            expect(parts.length, engine.name).toBeGreaterThan(0)
            expect(
              parts.every((part) => part.type === "reasoning"),
              engine.name
            ).toBe(false)
            expect(
              parts.some((part) => part.type !== "text" || (part.text ?? "").length > 0),
              engine.name
            ).toBe(true)
          }
        }
      }
      const empty = Effect.runSyncExit(
        engine.assembleContext({
          entries: entriesOf([...messages.slice(0, 4), { role: "user", content: [{ type: "text", text: "" }] }]),
          policy
        })
      )
      expect(Exit.isFailure(empty), engine.name).toBe(true)
      if (Exit.isFailure(empty))
        expect(empty.cause.reasons[0]).toMatchObject({
          _tag: "Fail",
          error: { _tag: "InvalidInput", path: "entries[4].message.content" }
        })
    }
  })
})
