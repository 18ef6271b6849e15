import { Effect, Layer } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import type { Budget } from "../src/Budget.ts"
import * as ContextView from "../src/ContextView.ts"
import { categories } from "../src/Measurement.ts"
import * as Measurer from "../src/Measurer.ts"
import type { Message } from "../src/Message.ts"
import * as MessageSeal from "../src/MessageSeal.ts"
import * as MessageTokens from "../src/MessageTokens.ts"
import * as ReasoningTokens from "../src/ReasoningTokens.ts"
import type { Tokenizer } from "../src/Tokenizer.ts"
import * as Tokenizers from "../src/Tokenizers.ts"
import * as ViewPrefix from "../src/ViewPrefix.ts"
import { piMessages } from "./support/piTranscript.ts"
import { loadCase } from "./support/shared.ts"

const o200k = Tokenizers.get("o200k_base")

/** Wraps a tokenizer and counts how many texts it was asked to tokenize. */
const counting = (inner: Tokenizer): Tokenizer & { calls: number } => {
  const wrapper = {
    name: inner.name,
    method: inner.method,
    calls: 0,
    count: (text: string) => {
      wrapper.calls++
      return inner.count(text)
    }
  }
  return wrapper
}

// --- arbitraries ------------------------------------------------------------

const text = fc.string({ maxLength: 80, unit: "grapheme" })
const jsonValue = fc.jsonValue({ maxDepth: 2 })
const id = fc.stringMatching(/^call_[a-zA-Z0-9]{4,12}$/)
const messageArb: fc.Arbitrary<Message> = fc.oneof(
  text.map((content): Message => ({ role: "system", content })),
  text.map((content): Message => ({ role: "user", content })),
  fc
    .array(
      fc.oneof(
        text.map((t) => ({ type: "text" as const, text: t })),
        fc.tuple(text, fc.base64String({ maxLength: 60 })).map(([t, signature]) => ({
          type: "reasoning" as const,
          text: t,
          providerOptions: { anthropic: { signature } }
        })),
        fc.tuple(id, text, jsonValue).map(([toolCallId, toolName, input]) => ({
          type: "tool-call" as const,
          toolCallId,
          toolName,
          input
        }))
      ),
      { maxLength: 4 }
    )
    .map((content): Message => ({ role: "assistant", content })),
  fc
    .tuple(
      id,
      text,
      fc.oneof(
        text.map((value) => ({ type: "text" as const, value })),
        jsonValue.map((value) => ({ type: "json" as const, value }))
      )
    )
    .map(
      ([toolCallId, toolName, output]): Message => ({
        role: "tool",
        content: [{ type: "tool-result", toolCallId, toolName, output }]
      })
    )
)
const sourceArb = fc.constantFrom("transcript", "checkpoint", "memory", "synthetic" as const)
const toolArb = fc.record(
  { name: fc.stringMatching(/^[a-z_]{1,12}$/), description: text, inputSchema: jsonValue },
  { requiredKeys: ["name", "inputSchema"] }
)
const viewArb = fc
  .tuple(fc.array(fc.tuple(messageArb, sourceArb), { maxLength: 12 }), fc.array(toolArb, { maxLength: 3 }))
  .map(
    ([items, tools]): ContextView.ContextView => ({
      items: items.map(([message, source], index) => ({ entryId: `e${index}`, message, source, editedBy: [] })),
      tools
    })
  )

const budget: Budget = {
  contextWindowTokens: 200_000,
  reservedOutputTokens: 16_000,
  toolLoopReserveTokens: 4_000,
  safetyMarginTokens: 2_000,
  fixedOverheadTokens: 0,
  inputBudgetTokens: 178_000,
  bindingLimit: "context-window",
  availableTokens: 178_000
}

// --- tests ------------------------------------------------------------------

describe("Measurer", () => {
  it("C10: the tool-call category counts name and full JSON arguments of every call in a parallel batch", () => {
    const c10 = loadCase<{ messages: ReadonlyArray<Message> }>("C10")
    const calls = c10.messages.flatMap((message) =>
      typeof message.content === "string" ? [] : message.content.filter((part) => part.type === "tool-call")
    )
    expect(calls).toHaveLength(5)
    const serialized = calls.reduce(
      (sum, call) =>
        sum + (call.type === "tool-call" ? o200k.count(call.toolName) + o200k.count(JSON.stringify(call.input)) : 0),
      0
    )
    const measurement = Measurer.make(o200k).measure(ContextView.fromMessages(c10.messages))
    expect(Math.abs(measurement.byCategory.toolCalls - serialized) / serialized).toBeLessThan(0.05)
    // Counting only the first call would be about a fifth of this.
    const firstOnly = calls[0]!.type === "tool-call" ? o200k.count(JSON.stringify(calls[0]!.input)) : 0
    expect(measurement.byCategory.toolCalls).toBeGreaterThan(4 * firstOnly)
  })

  it("puts each part in its category: reasoning (signature not counted), results in toolResults, source overrides", () => {
    const measurer = Measurer.make(o200k)
    const signature = "EoECCkYIChgCKkBpGVeD2BUjivcJv7p5XDKPKURww1QxYc6BB7u+fReY+mpPnqpPMAggZovuIfakcBA1ehx"
    const assistant: Message = {
      role: "assistant",
      content: [
        { type: "reasoning", text: "Think about the plan.", providerOptions: { anthropic: { signature } } },
        { type: "text", text: "Here is the plan." },
        { type: "tool-call", toolCallId: "call_1", toolName: "read", input: { path: "src/index.ts" } }
      ]
    }
    const counts = measurer.countMessage(assistant)
    // An Anthropic signature verifies the block; it is not text the model reads (ReasoningTokens).
    expect(counts.reasoning).toBe(o200k.count("Think about the plan."))
    expect(counts.assistantText).toBe(o200k.count("Here is the plan."))
    expect(counts.framing).toBe(MessageTokens.messageFramingTokens)
    expect(counts.toolCalls).toBeGreaterThanOrEqual(o200k.count("read") + o200k.count('{"path":"src/index.ts"}'))
    const result: Message = {
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "call_1",
          toolName: "read",
          output: { type: "text", value: "x".repeat(400) }
        }
      ]
    }
    expect(measurer.countMessage(result).toolResults).toBeGreaterThan(o200k.count("x".repeat(400)))
    const summary: Message = { role: "user", content: "Checkpoint: goals, decisions, next steps." }
    expect(Object.keys(measurer.countMessage(summary, "checkpoint"))).toEqual(["checkpoint", "framing"])
    expect(Object.keys(measurer.countMessage(summary, "memory"))).toEqual(["memory", "framing"])
  })

  it("reports framing as its own category: a view with no assistant message has 0 assistant text", () => {
    // OpenAI cookbook "How to count tokens with tiktoken": 3 tokens per message
    // (<|start|>{role}<|message|>…<|end|>) and 3 priming the reply, so a system
    // and a user message carry 3 + 3 + 3 = 9 framing tokens. "hello" is one
    // o200k_base token (id 24912), "You are terse." four (3575, 553, 28410, 13).
    const view = ContextView.fromMessages([
      { role: "system", content: "You are terse." },
      { role: "user", content: "hello" }
    ])
    const { byCategory, inputTokens } = Measurer.make(o200k).measure(view)
    expect(byCategory.assistantText).toBe(0)
    expect(byCategory.framing).toBe(9)
    expect(byCategory.userText).toBe(1)
    expect(byCategory.system).toBe(4)
    expect(inputTokens).toBe(14)
  })

  it("counts tool schemas as fixed overhead that grows with the schema", () => {
    const measurer = Measurer.make(o200k)
    const small = [{ name: "read", description: "Read a file", inputSchema: { type: "object" } }]
    const large = [
      ...small,
      {
        name: "edit",
        description: "Replace text in a file",
        inputSchema: { type: "object", properties: { path: { type: "string" }, oldText: { type: "string" } } }
      }
    ]
    expect(measurer.toolSchemaTokens([])).toBe(0)
    expect(measurer.toolSchemaTokens(small)).toBeGreaterThan(o200k.count("Read a file"))
    expect(measurer.toolSchemaTokens(large)).toBeGreaterThan(measurer.toolSchemaTokens(small))
    const view = ContextView.fromMessages([{ role: "user", content: "hi" }], large)
    expect(measurer.measure(view).byCategory.toolSchemas).toBe(measurer.toolSchemaTokens(large))
  })

  it("property: measurement is additive — Σ per-message counts + tool schemas + reply priming = input total", () => {
    // Additive when prior-turn reasoning counts (splitting a view moves the current tool loop otherwise).
    const measurer = Measurer.make(o200k, { reasoningRule: "all-turns" })
    // With the OpenAI rule, counting each message at its position adds up too.
    const positional = Measurer.make(o200k)
    fc.assert(
      fc.property(viewArb, (view) => {
        const loopStart = ReasoningTokens.currentLoopStart(view.items, (item) => item.message)
        const positionalSum = view.items.reduce(
          (sum, item, index) =>
            sum + positional.messageTokens(item.message, item.source, index < loopStart ? "prior" : "current"),
          0
        )
        expect(positional.measure(view).inputTokens).toBe(
          positionalSum + positional.toolSchemaTokens(view.tools) + MessageTokens.replyPrimingTokens
        )
        const measurement = measurer.measure(view, { budget })
        const perMessage = view.items.reduce((sum, item) => sum + measurer.messageTokens(item.message, item.source), 0)
        expect(measurement.inputTokens).toBe(
          perMessage + measurer.toolSchemaTokens(view.tools) + MessageTokens.replyPrimingTokens
        )
        const categorySum = categories
          .filter((category) => category !== "reservedOutput")
          .reduce((sum, category) => sum + measurement.byCategory[category], 0)
        expect(categorySum).toBe(measurement.inputTokens)
        expect(measurement.byCategory.reservedOutput).toBe(budget.reservedOutputTokens)
        expect(measurement.totalTokens).toBe(measurement.inputTokens + budget.reservedOutputTokens)
        expect(measurement.headroomTokens).toBe(budget.inputBudgetTokens - measurement.inputTokens)
        // Splitting the view anywhere: the two halves' message counts add up.
        const half = Math.floor(view.items.length / 2)
        const left = measurer.measure({ items: view.items.slice(0, half), tools: [] })
        const right = measurer.measure({ items: view.items.slice(half), tools: [] })
        expect(
          left.inputTokens +
            right.inputTokens -
            MessageTokens.replyPrimingTokens +
            measurer.toolSchemaTokens(view.tools)
        ).toBe(measurement.inputTokens)
      }),
      { numRuns: 150 }
    )
  }, 60_000)

  it("property: the cache never changes a result (cached, uncached, re-measured, structurally cloned)", () => {
    const cached = Measurer.make(o200k)
    fc.assert(
      fc.property(fc.array(viewArb, { minLength: 1, maxLength: 4 }), (views) => {
        const uncached = Measurer.make(o200k, { cache: false })
        for (const view of views) {
          const expected = uncached.measure(view, { budget })
          expect(cached.measure(view, { budget })).toEqual(expected)
          expect(cached.measure(view, { budget })).toEqual(expected)
          expect(cached.measure(structuredClone(view), { budget })).toEqual(expected)
        }
      }),
      { numRuns: 100 }
    )
  }, 60_000)

  it("the cache notices a message edited in place (text replaced, part appended)", () => {
    const measurer = Measurer.make(o200k)
    const message = { role: "assistant" as const, content: [{ type: "text" as const, text: "short" }] }
    const view = ContextView.fromMessages([message])
    const before = measurer.measure(view).inputTokens
    ;(message.content[0] as { text: string }).text = "a much longer answer than before, with many more tokens in it"
    const fresh = () => Measurer.make(o200k, { cache: false }).measure(view)
    expect(measurer.measure(view)).toEqual(fresh())
    expect(measurer.measure(view).inputTokens).toBeGreaterThan(before)
    ;(message.content as Array<{ type: "text"; text: string }>).push({ type: "text", text: "and one more part" })
    expect(measurer.measure(view)).toEqual(fresh())
  })

  it("a sealed message is hashed once: the view prefix reuses the hash the measurer made (an unsealed one is not)", () => {
    let reads = 0
    const input = {
      get command() {
        reads++
        return "ls -la"
      }
    }
    const call = { type: "tool-call" as const, toolCallId: "c1", toolName: "bash", input }
    const sealed = MessageSeal.seal({ role: "assistant", content: [call] })
    Measurer.make(o200k).messageTokens(sealed)
    const afterCount = reads
    ViewPrefix.messageHash(sealed)
    expect(reads).toBe(afterCount)
    const unsealed: Message = { role: "assistant", content: [{ ...call }] }
    Measurer.make(o200k).messageTokens(unsealed)
    const afterUnsealed = reads
    ViewPrefix.messageHash(unsealed)
    expect(reads).toBeGreaterThan(afterUnsealed)
  })

  it("re-measuring after appending one message tokenizes only that message (pi transcript)", () => {
    const messages = piMessages()
    const tokenizer = counting(o200k)
    const measurer = Measurer.make(tokenizer)
    const base = ContextView.fromMessages(messages.slice(0, 400))
    const cold = measurer.measure(base)
    expect(tokenizer.calls).toBeGreaterThan(400)

    const appended = messages[400]!
    const solo = counting(o200k)
    Measurer.make(solo, { cache: false }).messageTokens(appended)

    tokenizer.calls = 0
    const next = measurer.measure(ContextView.fromMessages(messages.slice(0, 401)))
    expect(tokenizer.calls).toBe(solo.calls)
    expect(next.inputTokens).toBe(cold.inputTokens + measurer.messageTokens(appended))
    expect(next).toEqual(
      Measurer.make(o200k, { cache: false }).measure(ContextView.fromMessages(messages.slice(0, 401)))
    )

    // A structurally equal copy (e.g. the view re-read from the transcript) hits the content-hash cache.
    tokenizer.calls = 0
    measurer.measure(structuredClone(ContextView.fromMessages(messages.slice(0, 401))))
    expect(tokenizer.calls).toBe(0)
  }, 60_000)

  it("anchoring: reported input of the last request + count of what was appended since", () => {
    const messages = piMessages().slice(0, 60)
    const measurer = Measurer.make(o200k)
    const view = ContextView.fromMessages(messages)
    const anchorIndex = 40
    // Well above the exact local count of the prefix it covers: an exact count is never scaled down
    // (UsageScale.minRatio), so a lower usage would be raised to it.
    const prefixTokens = measurer.measure({ ...view, items: view.items.slice(0, anchorIndex + 1) }).inputTokens
    const reported = 2 * prefixTokens + 1_337
    const measurement = measurer.measure(view, {
      budget,
      anchor: { inputTokens: reported, lastEntryId: `m${anchorIndex}` }
    })
    const appended = view.items
      .slice(anchorIndex + 1)
      .reduce((sum, item) => sum + measurer.messageTokens(item.message), 0)
    expect(measurement.method).toBe("anchored")
    expect(measurement.inputTokens).toBe(reported + appended)
    const categorySum = categories
      .filter((category) => category !== "reservedOutput")
      .reduce((sum, category) => sum + measurement.byCategory[category], 0)
    expect(categorySum).toBe(measurement.inputTokens)
    expect(measurement.headroomTokens).toBe(budget.inputBudgetTokens - measurement.inputTokens)

    // Anchored on the last item: exactly the reported number.
    const last = measurer.measure(view, { anchor: { inputTokens: reported, lastEntryId: `m${messages.length - 1}` } })
    expect(last.inputTokens).toBe(reported)

    // An anchor whose entry left the view (e.g. compacted away) is ignored, and the measurement says so.
    const stale = measurer.measure(view, { anchor: { inputTokens: reported, lastEntryId: "gone" } })
    expect(stale.method).toBe("exact")
    expect(stale.inputTokens).toBe(measurer.measure(view).inputTokens)
    expect(stale.notes?.join(" ")).toMatch(/anchor/)
  })

  it("reports the estimator's method and an infinite budget when none is given", () => {
    const measurement = Measurer.make(Tokenizers.get("estimate:anthropic")).measure(
      ContextView.fromMessages([{ role: "user", content: "hello" }])
    )
    expect(measurement.method).toBe("estimate")
    expect(measurement.tokenizer).toBe("estimate:anthropic")
    expect(measurement.budgetTokens).toBe(Number.POSITIVE_INFINITY)
    expect(measurement.byCategory.reservedOutput).toBe(0)
  })

  it("is available as a service built on the TokenizerService, and per policy", async () => {
    const view = ContextView.fromMessages([{ role: "user", content: "Measure me through a layer." }])
    const viaLayer = await Effect.runPromise(
      Effect.provide(
        Effect.gen(function* () {
          const measurer = yield* Measurer.MeasurerService
          return measurer.measure(view)
        }),
        Measurer.layer().pipe(Layer.provide(Tokenizers.layer("estimate:gemini")))
      )
    )
    expect(viaLayer.tokenizer).toBe("estimate:gemini")
    expect(viaLayer).toEqual(Measurer.forPolicy({ tokenizer: "estimate:gemini" }).measure(view))
  })
})
