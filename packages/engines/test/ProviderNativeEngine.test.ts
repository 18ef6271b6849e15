import {
  Budget,
  type ContextEngine,
  ContextView,
  type Entry,
  Measurer,
  type Message,
  type ModelPolicy,
  Tokenizers
} from "@context-engine/core"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as OverflowRecovery from "../src/OverflowRecovery.ts"
import * as ProviderNativeEngine from "../src/ProviderNativeEngine.ts"

const none = { anthropicContextEditing: false, anthropicCompaction: false, openaiResponsesCompaction: false }

const policy = (overrides: Partial<ModelPolicy.ModelPolicy> = {}): ModelPolicy.ModelPolicy => ({
  model: "claude-sonnet-4-5",
  contextWindowTokens: 200_000,
  maxOutputTokens: 64_000,
  reserveTokens: 20_000,
  keepRecentTokens: 20_000,
  toolLoopReserveTokens: 10_000,
  safetyMarginTokens: 10_000,
  reasoning: false,
  tokenizer: "o200k_base",
  promptCacheTtlMs: 300_000,
  nativeCompaction: none,
  ...overrides
})

const anthropicPolicy = (overrides: Partial<ModelPolicy.ModelPolicy> = {}) =>
  policy({ nativeCompaction: { ...none, anthropicContextEditing: true, anthropicCompaction: true }, ...overrides })

/** A pass-through fallback: measures with o200k, never compacts by itself, assembles the entries' messages. */
const passThrough = (): ContextEngine.ContextEngine & { seen: Array<ReadonlyArray<Entry.Entry>> } => {
  const seen: Array<ReadonlyArray<Entry.Entry>> = []
  const measurer = Measurer.make(Tokenizers.get("o200k_base"))
  const measure = (input: ContextEngine.EngineInput) => {
    seen.push(input.entries)
    const view = ContextView.fromEntries(input.entries)
    const budget = Budget.make(input.policy, { systemTokens: 0, toolSchemaTokens: 0 })
    return { view, budget, measurement: measurer.measure(view, { budget }) }
  }
  return {
    specificationVersion: "v1",
    name: "pass-through",
    seen,
    measure: (input) => Effect.sync(() => measure(input).measurement),
    shouldCompact: (input) =>
      Effect.sync(() => {
        const { measurement, budget } = measure(input)
        const compact = measurement.inputTokens > budget.inputBudgetTokens * 0.5
        return { compact, reasons: compact ? ["threshold"] : [], measurement, budget }
      }),
    plan: () => Effect.succeed({ reasons: ["threshold"], targetTokens: 0, stages: [] }),
    compact: () => Effect.die("not used"),
    validate: () => Effect.succeed({ ok: true, checks: [], identifierRetention: 1, missing: [] }),
    assembleContext: (input) =>
      Effect.sync(() => {
        const { view, measurement } = measure(input)
        return { messages: ContextView.toMessages(view), view, measurement }
      }),
    recordOutcome: () => Effect.void
  }
}

let counter = 0
const message = (message: Message.Message): Entry.Entry => ({
  id: `e${++counter}`,
  parentId: null,
  timestamp: "2026-01-01T00:00:00.000Z",
  schemaVersion: 1,
  kind: "message",
  message
})

const anthropicCompactionMessage: Message.Message = {
  role: "assistant",
  content: [
    {
      type: "text",
      text: "Summary: read 40 files; next: fix src/a.ts",
      providerOptions: { anthropic: { type: "compaction" } }
    },
    { type: "text", text: "Continuing." }
  ]
}

const openaiCompactionMessage: Message.Message = {
  role: "assistant",
  content: [
    {
      type: "custom",
      kind: "openai.compaction",
      providerOptions: { openai: { itemId: "cmp_1", encryptedContent: "enc" } }
    },
    { type: "text", text: "Continuing." }
  ]
}

const conversation = (native: Message.Message): ReadonlyArray<Entry.Entry> => [
  message({ role: "system", content: "You are a coding agent." }),
  message({ role: "user", content: "Fix the bug." }),
  message({
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a.ts" } }]
  }),
  message({
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "x".repeat(2000) } }
    ]
  }),
  message(native),
  message({ role: "user", content: "Go on." })
]

const event = (provider: string, model: string): Entry.Entry => ({
  id: `ev${++counter}`,
  parentId: null,
  timestamp: "2026-01-01T00:00:00.000Z",
  schemaVersion: 1,
  kind: "event",
  event: { name: ProviderNativeEngine.EVENT_COMPACTION, data: { provider, model } }
})

const textOf = (messages: ReadonlyArray<Message.Message>): string => JSON.stringify(messages)

describe("ProviderNativeEngine option building", () => {
  it("builds Anthropic contextManagement edits from the policy (clear_thinking first, only for reasoning models)", () => {
    const budget = 200_000 - 20_000 - 10_000 - 10_000
    expect(ProviderNativeEngine.anthropicContextManagement(anthropicPolicy())).toEqual({
      edits: [
        {
          type: "clear_tool_uses_20250919",
          trigger: { type: "input_tokens", value: Math.floor(budget * 0.6) },
          keep: { type: "tool_uses", value: 3 }
        },
        { type: "compact_20260112", trigger: { type: "input_tokens", value: Math.floor(budget * 0.8) } }
      ]
    })
    const reasoning = ProviderNativeEngine.anthropicContextManagement(anthropicPolicy({ reasoning: true }), {
      clearThinking: { keepThinkingTurns: 2 },
      clearToolUses: {
        triggerInputTokens: 30_000,
        keepToolUses: 5,
        clearAtLeastInputTokens: 5_000,
        excludeTools: ["memory"]
      },
      compaction: { triggerInputTokens: 10_000, instructions: "Keep file paths.", pauseAfterCompaction: true }
    })
    expect(reasoning?.edits[0]).toEqual({ type: "clear_thinking_20251015", keep: { type: "thinking_turns", value: 2 } })
    expect(reasoning?.edits[1]).toEqual({
      type: "clear_tool_uses_20250919",
      trigger: { type: "input_tokens", value: 30_000 },
      keep: { type: "tool_uses", value: 5 },
      clearAtLeast: { type: "input_tokens", value: 5_000 },
      excludeTools: ["memory"]
    })
    // The compaction trigger never goes below the API minimum.
    expect(reasoning?.edits[2]).toEqual({
      type: "compact_20260112",
      trigger: { type: "input_tokens", value: ProviderNativeEngine.ANTHROPIC_MIN_COMPACTION_TRIGGER_TOKENS },
      pauseAfterCompaction: true,
      instructions: "Keep file paths."
    })
  })

  it("builds nothing for policies without native support, and respects `false`", () => {
    expect(ProviderNativeEngine.anthropicContextManagement(policy())).toBeUndefined()
    expect(
      ProviderNativeEngine.anthropicContextManagement(anthropicPolicy(), { clearToolUses: false, compaction: false })
    ).toBeUndefined()
    expect(ProviderNativeEngine.openaiContextManagement(policy())).toBeUndefined()
  })

  it("builds the OpenAI Responses compaction option", () => {
    const openai = policy({ model: "gpt-5", nativeCompaction: { ...none, openaiResponsesCompaction: true } })
    expect(ProviderNativeEngine.openaiContextManagement(openai)).toEqual([
      { type: "compaction", compactThreshold: Math.floor(160_000 * 0.8) }
    ])
    const engine = ProviderNativeEngine.make({
      fallback: passThrough(),
      openai: { compaction: { compactThresholdTokens: 90_000 } }
    })
    expect(engine.providerOptions({ entries: [], policy: openai })).toEqual({
      openai: { contextManagement: [{ type: "compaction", compactThreshold: 90_000 }] }
    })
  })
})

describe("ProviderNativeEngine views", () => {
  it("while native items are usable, the view starts at the latest compaction item (system kept, user bridge for Anthropic)", async () => {
    const engine = ProviderNativeEngine.make({ fallback: passThrough() })
    const entries = [...conversation(anthropicCompactionMessage), event("anthropic", "claude-sonnet-4-5")]
    const assembled = await Effect.runPromise(engine.assembleContext({ entries, policy: anthropicPolicy() }))
    expect(assembled.messages.map((m) => m.role)).toEqual(["system", "user", "assistant", "user"])
    expect(assembled.messages[2]).toBe(anthropicCompactionMessage)
    expect(textOf(assembled.messages)).not.toContain("tool-call")
  })

  it("the Anthropic bridge's id is free against the transcript's ids (Entry.freshId)", () => {
    // `<first kept id>:native-bridge` was used as is: an imported transcript holding that id gave the view two
    // entries with one id.
    const engine = ProviderNativeEngine.make({ fallback: passThrough() })
    const entries = [...conversation(anthropicCompactionMessage), event("anthropic", "claude-sonnet-4-5")]
    const native = entries[4]!
    const taken = { ...entries[1]!, id: `${native.id}:native-bridge` } as Entry.Entry
    const withTaken = [entries[0]!, taken, ...entries.slice(2)]
    const view = engine.viewEntries({ entries: withTaken, policy: anthropicPolicy() })
    expect(view.map((entry) => entry.kind === "message" && entry.message.role)).toEqual([
      "system",
      "user",
      "assistant",
      "user",
      false
    ])
    const bridge = view[1]!
    expect(bridge.id).not.toBe(taken.id)
    expect(withTaken.map((entry) => entry.id)).not.toContain(bridge.id)
  })

  it("when the model changes, native items are stripped and the fallback sees the full history", async () => {
    for (const [native, origin] of [
      [anthropicCompactionMessage, event("anthropic", "claude-sonnet-4-5")],
      [openaiCompactionMessage, event("openai", "gpt-5")]
    ] as const) {
      const engine = ProviderNativeEngine.make({ fallback: passThrough() })
      const entries = [...conversation(native), origin]
      for (const target of [
        policy({ model: "gpt-4o" }),
        policy({ model: "claude-opus-4-5", nativeCompaction: { ...none, anthropicContextEditing: true } }),
        policy({ model: "gpt-5.1", nativeCompaction: { ...none, openaiResponsesCompaction: true } })
      ]) {
        const assembled = await Effect.runPromise(engine.assembleContext({ entries, policy: target }))
        const sent = textOf(assembled.messages)
        expect(sent).not.toContain("openai.compaction")
        expect(sent).not.toContain('"compaction"')
        // Full history: the tool call before the compaction item is back for the local engine.
        expect(sent).toContain("tool-call")
        expect(assembled.messages.at(-1)).toEqual({ role: "user", content: "Go on." })
      }
    }
  })

  it("same-provider portability keeps native items across models of that provider", async () => {
    const engine = ProviderNativeEngine.make({ fallback: passThrough(), portability: "same-provider" })
    const entries = [...conversation(anthropicCompactionMessage), event("anthropic", "claude-sonnet-4-5")]
    const assembled = await Effect.runPromise(
      engine.assembleContext({ entries, policy: anthropicPolicy({ model: "claude-opus-4-5" }) })
    )
    expect(assembled.messages).toContain(anthropicCompactionMessage)
  })

  it("leaves the provider to compact at its trigger; compacts locally only past the hard limit", async () => {
    const fallback = passThrough()
    const engine = ProviderNativeEngine.make({ fallback })
    const entries = conversation({ role: "user", content: "y ".repeat(6_000) })
    // Engines validate their policy: output limit and keep-recent tail must fit the small window.
    const small = anthropicPolicy({
      contextWindowTokens: 10_000,
      maxOutputTokens: 1_000,
      keepRecentTokens: 1_000,
      reserveTokens: 1_000,
      toolLoopReserveTokens: 0,
      safetyMarginTokens: 0
    })
    // The fallback wants to compact (over half the budget) but the request still fits: the provider handles it.
    expect((await Effect.runPromise(fallback.shouldCompact({ entries, policy: small }))).compact).toBe(true)
    expect((await Effect.runPromise(engine.shouldCompact({ entries, policy: small }))).compact).toBe(false)
    const tiny = { ...small, contextWindowTokens: 3_000 }
    expect((await Effect.runPromise(engine.shouldCompact({ entries, policy: tiny }))).compact).toBe(true)
    // Without native support the fallback decides alone.
    expect(
      (await Effect.runPromise(engine.shouldCompact({ entries, policy: { ...small, nativeCompaction: none } }))).compact
    ).toBe(true)
  })
})

describe("ProviderNativeEngine.readResponse", () => {
  const ids = () => {
    let n = 0
    return { nextId: () => `n${++n}`, timestamp: "2026-01-01T00:00:00.000Z" }
  }

  it("records Anthropic applied edits and compaction blocks as event entries", () => {
    const engine = ProviderNativeEngine.make({ fallback: passThrough() })
    const entries = engine.readResponse(
      { entries: [], policy: anthropicPolicy() },
      {
        providerMetadata: {
          anthropic: {
            contextManagement: {
              appliedEdits: [{ type: "clear_tool_uses_20250919", clearedToolUses: 4, clearedInputTokens: 12_000 }]
            }
          }
        },
        content: [
          { type: "text", text: "Summary", providerMetadata: { anthropic: { type: "compaction", signature: "s" } } },
          { type: "text", text: "Answer" }
        ]
      },
      ids()
    )
    expect(entries.map((entry) => (entry.kind === "event" ? entry.event : undefined))).toEqual([
      {
        name: ProviderNativeEngine.EVENT_EDITS,
        data: {
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          appliedEdits: [{ type: "clear_tool_uses_20250919", clearedToolUses: 4, clearedInputTokens: 12_000 }]
        }
      },
      {
        name: ProviderNativeEngine.EVENT_COMPACTION,
        data: { provider: "anthropic", model: "claude-sonnet-4-5", summary: "Summary", signed: true }
      }
    ])
    expect(entries[1]!.parentId).toBe(entries[0]!.id)
  })

  it("records OpenAI compaction items; reads nothing for non-native policies", () => {
    const engine = ProviderNativeEngine.make({ fallback: passThrough() })
    const response = {
      content: [
        {
          type: "custom",
          kind: "openai.compaction",
          providerMetadata: { openai: { type: "compaction", itemId: "cmp_9" } }
        }
      ]
    }
    const openai = policy({ model: "gpt-5", nativeCompaction: { ...none, openaiResponsesCompaction: true } })
    const entries = engine.readResponse({ entries: [], policy: openai }, response, ids())
    expect(entries).toHaveLength(1)
    expect(entries[0]).toMatchObject({
      kind: "event",
      event: { data: { provider: "openai", itemId: "cmp_9", encrypted: true } }
    })
    expect(engine.readResponse({ entries: [], policy: policy() }, response, ids())).toEqual([])
  })
})

describe("OverflowRecovery window arithmetic", () => {
  const base = policy({ contextWindowTokens: 128_000, reserveTokens: 4_000, keepRecentTokens: 30_000 })
  const overflow = (fields: { limitTokens?: number; requestedTokens?: number }) =>
    ({ provider: "test", providerMessage: "", ...fields }) as never

  it("uses the reported limit, scaled by our undercount", () => {
    expect(
      OverflowRecovery.effectiveWindow(base, overflow({ limitTokens: 24_000 }), { measuredInputTokens: 30_000 })
    ).toBe(24_000)
    expect(
      OverflowRecovery.effectiveWindow(base, overflow({ limitTokens: 24_000, requestedTokens: 40_000 }), {
        measuredInputTokens: 30_000
      })
    ).toBe(18_000)
  })

  it("uses the excess when only that is reported, and shrinks blindly otherwise", () => {
    expect(
      OverflowRecovery.effectiveWindow(base, overflow({}), { measuredInputTokens: 10_000, excessTokens: 1_843 })
    ).toBe(8_157)
    expect(OverflowRecovery.effectiveWindow(base, overflow({}), { measuredInputTokens: 10_000 })).toBe(
      Math.floor(14_000 * OverflowRecovery.BLIND_SHRINK_RATIO)
    )
  })

  it("property: the recovery policy always leaves a positive budget below the rejected size", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1_000, max: 1_000_000 }),
        fc.integer({ min: 100, max: 2_000_000 }),
        fc.option(fc.integer({ min: 1, max: 2_000_000 }), { nil: undefined }),
        (window, measured, limit) => {
          const start = policy({
            contextWindowTokens: window,
            reserveTokens: Math.floor(window / 8),
            toolLoopReserveTokens: Math.floor(window / 20),
            safetyMarginTokens: Math.floor(window / 50)
          })
          const shrunk = OverflowRecovery.recoveryPolicy(
            start,
            overflow(limit === undefined ? {} : { limitTokens: limit }),
            { measuredInputTokens: measured }
          )
          expect(shrunk.contextWindowTokens).toBeLessThanOrEqual(window)
          const available =
            shrunk.contextWindowTokens - shrunk.reserveTokens - shrunk.toolLoopReserveTokens - shrunk.safetyMarginTokens
          expect(available).toBeGreaterThanOrEqual(0)
          expect(shrunk.keepRecentTokens).toBeLessThanOrEqual(Math.max(0, available))
        }
      )
    )
  })
})
