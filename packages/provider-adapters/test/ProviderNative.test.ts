/**
 * ProviderNativeEngine through the middleware, checked against the exact
 * request bodies `@ai-sdk/anthropic` and `@ai-sdk/openai` send (mock fetch),
 * and the responses they parse.
 */
import { createAnthropic } from "@ai-sdk/anthropic"
import { createOpenAI } from "@ai-sdk/openai"
import type { ModelPolicy } from "@context-engine/core"
import { ProviderNativeEngine } from "@context-engine/engines"
import { generateText, type ModelMessage, streamText, wrapLanguageModel } from "ai"
import { describe, expect, it } from "vitest"
import { contextEngineMiddleware } from "../src/ContextEngineMiddleware.ts"
import * as TestEngine from "./support/TestEngine.ts"

interface Captured {
  readonly url: string
  readonly headers: Record<string, string>
  readonly body: Record<string, unknown>
}

const mockFetch = (responses: Array<unknown>, captured: Array<Captured>): typeof fetch =>
  (async (url: string | URL | Request, init?: RequestInit) => {
    captured.push({
      url: String(url),
      headers: Object.fromEntries(new Headers(init?.headers).entries()),
      body: JSON.parse(String(init?.body))
    })
    const next = responses.shift()
    return new Response(JSON.stringify(next), { status: 200, headers: { "content-type": "application/json" } })
  }) as typeof fetch

const none = { anthropicContextEditing: false, anthropicCompaction: false, openaiResponsesCompaction: false }

const basePolicy: Partial<ModelPolicy.ModelPolicy> = {
  reasoning: false,
  contextWindowTokens: 200_000,
  maxOutputTokens: 8_000,
  reserveTokens: 8_000,
  keepRecentTokens: 20_000,
  toolLoopReserveTokens: 0,
  safetyMarginTokens: 2_000,
  tokenizer: "o200k_base"
}
const inputBudget = 200_000 - 8_000 - 2_000

const history: Array<ModelMessage> = [
  { role: "user", content: "Fix the failing test." },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "toolu_1", toolName: "read", input: { path: "src/a.ts" } }]
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "toolu_1",
        toolName: "read",
        output: { type: "text", value: "export const a = 1" }
      }
    ]
  },
  { role: "user", content: "Continue." }
]

const anthropicResponse = (content: Array<unknown>, contextManagement?: unknown) => ({
  id: "msg_1",
  type: "message",
  role: "assistant",
  model: "claude-sonnet-4-5",
  content,
  stop_reason: "end_turn",
  stop_sequence: null,
  usage: { input_tokens: 1200, output_tokens: 20 },
  ...(contextManagement ? { context_management: contextManagement } : {})
})

describe("ProviderNativeEngine with @ai-sdk/anthropic (mock fetch)", () => {
  it("sends context_management edits and betas, records applied edits and compaction, then resends the compaction block and drops what precedes it", async () => {
    const captured: Array<Captured> = []
    const anthropic = createAnthropic({
      apiKey: "test-key",
      fetch: mockFetch(
        [
          anthropicResponse(
            [
              { type: "compaction", content: "Summary: the test fails in src/a.ts; a = 1." },
              { type: "text", text: "Fixed." }
            ],
            { applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 1, cleared_input_tokens: 900 }] }
          ),
          anthropicResponse([{ type: "text", text: "Done." }])
        ],
        captured
      )
    })
    const engine = ProviderNativeEngine.make({ fallback: TestEngine.make() })
    const middleware = contextEngineMiddleware({
      engine,
      policy: {
        ...basePolicy,
        model: "claude-sonnet-4-5",
        nativeCompaction: { ...none, anthropicContextEditing: true, anthropicCompaction: true }
      }
    })
    const model = wrapLanguageModel({ model: anthropic("claude-sonnet-4-5"), middleware })
    const first = await generateText({ model, system: "You are a coding agent.", messages: history })
    // The AI SDK surfaces the compaction summary as text too.
    expect(first.text).toContain("Fixed.")

    const request = captured[0]!
    expect(request.url).toBe("https://api.anthropic.com/v1/messages")
    expect(request.body.context_management).toEqual({
      edits: [
        {
          type: "clear_tool_uses_20250919",
          trigger: { type: "input_tokens", value: Math.floor(inputBudget * 0.6) },
          keep: { type: "tool_uses", value: 3 }
        },
        { type: "compact_20260112", trigger: { type: "input_tokens", value: Math.floor(inputBudget * 0.8) } }
      ]
    })
    expect(request.headers["anthropic-beta"]?.split(",")).toEqual(
      expect.arrayContaining(["context-management-2025-06-27", "compact-2026-01-12"])
    )
    // Messages are not rewritten: the provider owns compaction.
    expect(JSON.stringify(request.body.messages)).toContain("tool_use")

    const session = await middleware.controller.session({
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5"
    })
    const events = session.entries().flatMap((entry) => (entry.kind === "event" ? [entry.event] : []))
    expect(events).toEqual([
      {
        name: ProviderNativeEngine.EVENT_EDITS,
        data: {
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          appliedEdits: [{ type: "clear_tool_uses_20250919", clearedToolUses: 1, clearedInputTokens: 900 }]
        }
      },
      {
        name: ProviderNativeEngine.EVENT_COMPACTION,
        data: {
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          summary: "Summary: the test fails in src/a.ts; a = 1.",
          signed: false
        }
      }
    ])

    // Next turn: the app appends the response messages as usual.
    await generateText({
      model,
      system: "You are a coding agent.",
      messages: [...history, ...first.response.messages, { role: "user", content: "Thanks, anything else?" }]
    })
    const second = captured[1]!
    const messages = second.body.messages as Array<{ role: string; content: Array<{ type: string }> }>
    expect(messages.map((message) => message.role)).toEqual(["user", "assistant", "user"])
    expect(messages[1]!.content[0]).toEqual({
      type: "compaction",
      content: "Summary: the test fails in src/a.ts; a = 1."
    })
    expect(JSON.stringify(messages)).not.toContain("tool_use")
    expect(second.body.system).toEqual([{ type: "text", text: "You are a coding agent." }])
  })

  it("falls back to a local view when the model changes: no Anthropic compaction block reaches OpenAI", async () => {
    const captured: Array<Captured> = []
    const anthropic = createAnthropic({
      apiKey: "test-key",
      fetch: mockFetch(
        [
          anthropicResponse([
            { type: "compaction", content: "Summary text." },
            { type: "text", text: "Ok." }
          ])
        ],
        captured
      )
    })
    const openai = createOpenAI({
      apiKey: "test-key",
      fetch: mockFetch(
        [
          {
            id: "chatcmpl-1",
            object: "chat.completion",
            created: 1,
            model: "gpt-4o",
            choices: [{ index: 0, message: { role: "assistant", content: "Hi." }, finish_reason: "stop" }],
            usage: { prompt_tokens: 10, completion_tokens: 2, total_tokens: 12 }
          }
        ],
        captured
      )
    })
    const engine = ProviderNativeEngine.make({ fallback: TestEngine.make() })
    const middleware = contextEngineMiddleware({
      engine,
      policy: ({ modelId }) =>
        modelId.startsWith("claude")
          ? {
              ...basePolicy,
              model: modelId,
              nativeCompaction: { ...none, anthropicContextEditing: true, anthropicCompaction: true }
            }
          : { ...basePolicy, model: modelId, nativeCompaction: none }
    })
    const claude = wrapLanguageModel({ model: anthropic("claude-sonnet-4-5"), middleware })
    const first = await generateText({ model: claude, messages: history })
    const gpt = wrapLanguageModel({ model: openai.chat("gpt-4o"), middleware })
    await generateText({
      model: gpt,
      messages: [...history, ...first.response.messages, { role: "user", content: "Next." }]
    })
    const body = JSON.stringify(captured[1]!.body)
    expect(captured[1]!.url).toBe("https://api.openai.com/v1/chat/completions")
    expect(body).not.toContain("Summary text.")
    expect(body).not.toContain("context_management")
    // The full history is back for the local engine: the tool call precedes the compaction.
    expect(body).toContain("toolu_1")
  })
})

describe("ProviderNativeEngine with @ai-sdk/anthropic streaming (mock SSE)", () => {
  const sse = (events: ReadonlyArray<Record<string, unknown>>): string =>
    events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join("")

  it("reads applied edits from message_delta and the compaction block from the stream", async () => {
    const captured: Array<Captured> = []
    const body = sse([
      {
        type: "message_start",
        message: {
          id: "msg_s",
          type: "message",
          role: "assistant",
          model: "claude-sonnet-4-5",
          content: [],
          stop_reason: null,
          stop_sequence: null,
          usage: { input_tokens: 900, output_tokens: 1 }
        }
      },
      { type: "content_block_start", index: 0, content_block: { type: "compaction", content: null } },
      { type: "content_block_delta", index: 0, delta: { type: "compaction_delta", content: "Streamed summary." } },
      { type: "content_block_stop", index: 0 },
      { type: "content_block_start", index: 1, content_block: { type: "text", text: "" } },
      { type: "content_block_delta", index: 1, delta: { type: "text_delta", text: "Ok." } },
      { type: "content_block_stop", index: 1 },
      {
        type: "message_delta",
        delta: { stop_reason: "end_turn", stop_sequence: null },
        usage: { output_tokens: 5 },
        context_management: {
          applied_edits: [{ type: "clear_tool_uses_20250919", cleared_tool_uses: 2, cleared_input_tokens: 500 }]
        }
      },
      { type: "message_stop" }
    ])
    const anthropic = createAnthropic({
      apiKey: "test-key",
      fetch: (async (url: string | URL | Request, init?: RequestInit) => {
        captured.push({ url: String(url), headers: {}, body: JSON.parse(String(init?.body)) })
        return new Response(body, { status: 200, headers: { "content-type": "text/event-stream" } })
      }) as typeof fetch
    })
    const middleware = contextEngineMiddleware({
      engine: ProviderNativeEngine.make({ fallback: TestEngine.make() }),
      policy: {
        ...basePolicy,
        model: "claude-sonnet-4-5",
        nativeCompaction: { ...none, anthropicContextEditing: true, anthropicCompaction: true }
      }
    })
    const result = streamText({
      model: wrapLanguageModel({ model: anthropic("claude-sonnet-4-5"), middleware }),
      messages: history
    })
    expect(await result.text).toContain("Ok.")
    expect(captured[0]!.body.stream).toBe(true)
    expect(captured[0]!.body.context_management).toBeDefined()
    const session = await middleware.controller.session({
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5"
    })
    const events = session.entries().flatMap((entry) => (entry.kind === "event" ? [entry.event] : []))
    expect(events).toEqual([
      {
        name: ProviderNativeEngine.EVENT_EDITS,
        data: {
          provider: "anthropic",
          model: "claude-sonnet-4-5",
          appliedEdits: [{ type: "clear_tool_uses_20250919", clearedToolUses: 2, clearedInputTokens: 500 }]
        }
      },
      {
        name: ProviderNativeEngine.EVENT_COMPACTION,
        data: { provider: "anthropic", model: "claude-sonnet-4-5", summary: "Streamed summary.", signed: false }
      }
    ])
  })
})

describe("ProviderNativeEngine with @ai-sdk/openai Responses (mock fetch)", () => {
  const responsesBody = (output: Array<unknown>) => ({
    id: "resp_1",
    object: "response",
    created_at: 1,
    status: "completed",
    model: "gpt-5",
    output,
    incomplete_details: null,
    usage: {
      input_tokens: 1000,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 5,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 1005
    }
  })

  it("sends context_management compaction, records the compaction item, and sends it back as the first item", async () => {
    const captured: Array<Captured> = []
    const openai = createOpenAI({
      apiKey: "test-key",
      fetch: mockFetch(
        [
          responsesBody([
            { type: "compaction", id: "cmp_1", encrypted_content: "ENCRYPTED" },
            {
              type: "message",
              id: "msg_1",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "Ok.", annotations: [] }]
            }
          ]),
          responsesBody([
            {
              type: "message",
              id: "msg_2",
              role: "assistant",
              status: "completed",
              content: [{ type: "output_text", text: "Again.", annotations: [] }]
            }
          ])
        ],
        captured
      )
    })
    const engine = ProviderNativeEngine.make({ fallback: TestEngine.make() })
    const middleware = contextEngineMiddleware({
      engine,
      policy: { ...basePolicy, model: "gpt-5", nativeCompaction: { ...none, openaiResponsesCompaction: true } }
    })
    const model = wrapLanguageModel({ model: openai.responses("gpt-5"), middleware })
    const first = await generateText({ model, messages: history, providerOptions: { openai: { store: false } } })
    expect(first.text).toBe("Ok.")
    expect(captured[0]!.url).toBe("https://api.openai.com/v1/responses")
    expect(captured[0]!.body.context_management).toEqual([
      { type: "compaction", compact_threshold: Math.floor(inputBudget * 0.8) }
    ])
    const session = await middleware.controller.session({ provider: "openai.responses", modelId: "gpt-5" })
    expect(session.entries().find((entry) => entry.kind === "event")).toMatchObject({
      event: {
        name: ProviderNativeEngine.EVENT_COMPACTION,
        data: { provider: "openai", model: "gpt-5", itemId: "cmp_1" }
      }
    })

    await generateText({
      model,
      messages: [...history, ...first.response.messages, { role: "user", content: "Again?" }],
      providerOptions: { openai: { store: false } }
    })
    const input = captured[1]!.body.input as Array<{ type?: string; role?: string }>
    expect(input[0]).toEqual({ type: "compaction", id: "cmp_1", encrypted_content: "ENCRYPTED" })
    expect(JSON.stringify(input)).not.toContain("function_call")
    expect(input.at(-1)).toMatchObject({ role: "user" })
  })
})
