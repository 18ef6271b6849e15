/**
 * Generated conversations through every engine, checking the DESIGN.md
 * invariants and issue #12 req 3/4: typed result or typed error, input
 * unchanged; checkpoints reference real entries; ids unique across repeated
 * compaction; the view rebuilt from `entries + entriesToAppend` equals the
 * returned view; tool pairing; no empty or reasoning-only assistant message.
 *
 * Conversations include hostile shapes: tool calls left without results
 * (interrupted), tool-call ids reused by a later call, reasoning-only
 * assistant turns and empty text parts.
 *
 * `FUZZ_RUNS` sets the runs per engine (default 60 here, so CI runs a few
 * hundred in all); `FUZZ_RUNS=10000 pnpm fuzz` runs the heavy version.
 */
import type { ContextEngine, Entry, Message } from "@context-engine/core"
import { ContextEngine as ContextEngineModule, MessageParts, RequestShape } from "@context-engine/core"
import { Cases, deepFreeze } from "@context-engine/core/testing"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ProviderNativeEngine from "../src/ProviderNativeEngine.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { conversation, entriesOf } from "./support.ts"

const RUNS = Number(process.env.FUZZ_RUNS ?? 60)
const TYPED = new Set([
  "BudgetExceeded",
  "SummarizerFailed",
  "ValidationFailed",
  "FixedOverheadExceedsBudget",
  "InvalidInput",
  "PluginFailed"
])

const system: Message.Message = { role: "system", content: "You are a coding agent working in /work/app." }

type Mutation = "drop-result" | "reuse-call-id" | "reasoning-only" | "empty-text" | "prefill" | "empty-ask"

/** Applies hostile mutations at the given positions (modulo the length). */
const mutate = (
  messages: ReadonlyArray<Message.Message>,
  mutations: ReadonlyArray<{ readonly kind: Mutation; readonly at: number }>
): Array<Message.Message> => {
  const out = [...messages]
  for (const { kind, at } of mutations) {
    const index = 1 + (at % Math.max(1, out.length - 1))
    const message = out[index]
    if (message === undefined) continue
    if (kind === "prefill") out.push({ role: "assistant", content: [{ type: "text", text: '{"answer": "' }] })
    else if (kind === "empty-ask" && message.role === "user") out[index] = { role: "user", content: "  " }
    else if (kind === "drop-result" && message.role === "tool" && index < out.length - 1) out.splice(index, 1)
    else if (kind === "reasoning-only" && index < out.length - 1)
      out.splice(index, 0, { role: "assistant", content: [{ type: "reasoning", text: "thinking…" }] })
    else if (kind === "empty-text" && message.role === "assistant")
      out[index] = { role: "assistant", content: [{ type: "text", text: "" }] }
    else if (kind === "reuse-call-id" && message.role === "assistant" && typeof message.content !== "string") {
      // A later call reuses the first call id of the conversation (providers reject duplicates).
      const first = out
        .flatMap((m) => (typeof m.content === "string" ? [] : (m.content as ReadonlyArray<Message.ContentPart>)))
        .find((part) => part.type === "tool-call")
      if (first?.type !== "tool-call") continue
      out[index] = {
        role: "assistant",
        content: (message.content as ReadonlyArray<Message.ContentPart>).map((part) =>
          part.type === "tool-call" && part.toolCallId !== first.toolCallId
            ? { ...part, toolCallId: first.toolCallId }
            : part
        )
      } as Message.Message
    }
  }
  return out
}

const hostileConversation = fc
  .tuple(
    conversation,
    fc.array(
      fc.record({
        kind: fc.constantFrom<Mutation>(
          "drop-result",
          "reuse-call-id",
          "reasoning-only",
          "empty-text",
          "prefill",
          "empty-ask"
        ),
        at: fc.nat()
      }),
      { maxLength: 4 }
    )
  )
  .map(([items, mutations]) => mutate([system, ...items.map((item) => item.message)], mutations))

const engines: Record<string, () => ContextEngine.AsyncContextEngine> = {
  "sliding-window": () => SlidingWindowEngine.makeAsync(),
  "tiered-summary": () => TieredSummaryEngine.makeAsync(),
  "provider-native": () =>
    ContextEngineModule.toAsync(ProviderNativeEngine.make({ fallback: TieredSummaryEngine.make() }))
}

const partsOf = (message: Message.Message): ReadonlyArray<Message.ContentPart> =>
  typeof message.content === "string" ? [] : (message.content as ReadonlyArray<Message.ContentPart>)

/** Request-validity checks on a list of messages about to be sent. */
const checkRequest = (messages: ReadonlyArray<Message.Message>): void => {
  const called = new Set<string>()
  const answered = new Set<string>()
  for (const message of messages) {
    if (typeof message.content === "string") {
      expect(message.content.length, `empty ${message.role} message`).toBeGreaterThan(0)
      continue
    }
    expect(message.content.length, `empty ${message.role} message`).toBeGreaterThan(0)
    if (message.role === "assistant" && message !== messages.at(-1)) {
      const substantive = partsOf(message).some((part) => part.type !== "reasoning")
      expect(substantive, "reasoning-only assistant message").toBe(true)
    }
    for (const part of partsOf(message)) {
      if (part.type === "tool-call") {
        expect(called.has(part.toolCallId), `duplicate tool-call id ${part.toolCallId}`).toBe(false)
        called.add(part.toolCallId)
      }
      if (part.type === "tool-result") {
        expect(called.has(part.toolCallId), `result ${part.toolCallId} without a call`).toBe(true)
        expect(answered.has(part.toolCallId), `second result for ${part.toolCallId}`).toBe(false)
        answered.add(part.toolCallId)
      }
    }
  }
  for (const id of called) expect(answered.has(id), `call ${id} without a result`).toBe(true)
}

const settle = <A>(promise: Promise<A>) =>
  promise.then(
    (value) => ({ value }) as const,
    (error: unknown) => ({ error: error as { readonly _tag?: string } }) as const
  )

describe("fuzz: generated hostile conversations through every engine", () => {
  for (const [name, makeEngine] of Object.entries(engines)) {
    it(
      `${name}: typed outcome, input unchanged, real checkpoint references, unique ids, rebuilt view = returned view, valid request`,
      async () => {
        const counts = { compacted: 0, checkpoints: 0, typedErrors: 0 }
        await fc.assert(
          fc.asyncProperty(
            hostileConversation,
            fc.integer({ min: 6_000, max: 20_000 }),
            fc.integer({ min: 500, max: 3_000 }),
            fc.boolean(),
            fc.boolean(),
            async (messages, window, keepRecentTokens, manual, assistantPrefill) => {
              const engine = makeEngine()
              const entries = deepFreeze(entriesOf(messages))
              const snapshot = JSON.stringify(entries)
              const policy = {
                ...Cases.policySync({ contextWindow: window, maxOutputTokens: 1_000, keepRecentTokens }),
                assistantPrefill
              }
              const input: ContextEngine.EngineInput = { entries, policy, manual }
              let known = new Set(entries.map((entry) => entry.id))
              let current: ReadonlyArray<Entry.Entry> = entries
              for (let round = 0; round < 2; round++) {
                const outcome = await settle(
                  engine.compact({ ...input, entries: current, manual: round > 0 || manual })
                )
                expect(JSON.stringify(entries)).toBe(snapshot)
                if ("error" in outcome) {
                  expect(TYPED.has(outcome.error._tag ?? ""), `untyped error: ${String(outcome.error)}`).toBe(true)
                  counts.typedErrors++
                  break
                }
                const result = outcome.value
                counts.compacted++
                for (const entry of result.entriesToAppend) {
                  expect(known.has(entry.id), `id ${entry.id} reused`).toBe(false)
                  known = new Set([...known, entry.id])
                }
                const checkpoint = result.checkpoint
                if (checkpoint) {
                  counts.checkpoints++
                  const ids = new Set(current.map((entry) => entry.id))
                  expect(
                    ids.has(checkpoint.coveredRange.toEntryId),
                    `covered range ends on ${checkpoint.coveredRange.toEntryId}`
                  ).toBe(true)
                  if (checkpoint.coveredRange.fromEntryId !== null)
                    expect(ids.has(checkpoint.coveredRange.fromEntryId)).toBe(true)
                  if (checkpoint.firstKeptEntryId !== null) expect(ids.has(checkpoint.firstKeptEntryId)).toBe(true)
                }
                checkRequest(result.view.items.map((item) => item.message))
                current = [...current, ...result.entriesToAppend]
                const rebuilt = await settle(engine.assembleContext({ ...input, entries: current }))
                if ("error" in rebuilt) {
                  expect(TYPED.has(rebuilt.error._tag ?? "")).toBe(true)
                  break
                }
                // The request is the returned view less what only the provider's request shape drops (no prefill),
                // with recorded commands after the user's latest words marked as executed (C18 B).
                const shaped = new Set(
                  (rebuilt.value.repairs ?? []).flatMap((edit) =>
                    edit.strategy === "request-shape" && edit.op === "drop" ? [edit.entryId] : []
                  )
                )
                expect(rebuilt.value.messages).toEqual(
                  RequestShape.markExecutedCommands(result.view.items.filter((item) => !shaped.has(item.entryId))).map(
                    (item) => item.message
                  )
                )
                const sent = rebuilt.value.messages
                if (!assistantPrefill && sent.some((message) => message.role === "user" || message.role === "tool"))
                  expect(sent.at(-1)!.role, "request ends on an assistant message without prefill").not.toBe(
                    "assistant"
                  )
                const lastUser = sent.findLast((message) => message.role === "user")
                if (lastUser)
                  expect(MessageParts.isEmptyMessage(lastUser), "empty latest user message sent").toBe(false)
              }
            }
          ),
          { numRuns: RUNS }
        )
        // Each engine really compacted (the suite is not vacuous).
        expect(counts.compacted).toBeGreaterThan(0)
        console.info(`fuzz ${name}: ${RUNS} runs, ${JSON.stringify(counts)}`)
      },
      Math.max(600_000, RUNS * 400)
    ) // the heavy run (FUZZ_RUNS=10000) needs more than the default bound
  }
})
