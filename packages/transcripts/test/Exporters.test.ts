import type { Entry, Message } from "@context-engine/core"
import { AnthropicMessagesExport, Import, ModelMessagesExport, OpenAIChatExport } from "@context-engine/transcripts"
import { Effect } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 1, 2, 3])
const pngBase64 = Buffer.from(png).toString("base64")

const conversation: Array<Message.Message> = [
  { role: "system", content: "be brief" },
  {
    role: "user",
    content: [
      { type: "text", text: "what is in this image?" },
      { type: "image", image: png, mediaType: "image/png" }
    ]
  },
  {
    role: "assistant",
    content: [
      { type: "reasoning", text: "look first", providerOptions: { anthropic: { signature: "sig-1" } } },
      { type: "text", text: "Let me check." },
      { type: "tool-call", toolCallId: "a", toolName: "read", input: { path: "x.png" } },
      { type: "tool-call", toolCallId: "b", toolName: "bash", input: { command: "file x.png" } }
    ]
  },
  {
    role: "tool",
    content: [
      { type: "tool-result", toolCallId: "a", toolName: "read", output: { type: "text", value: "bytes" } },
      { type: "tool-result", toolCallId: "b", toolName: "bash", output: { type: "error-text", value: "not found" } }
    ]
  },
  { role: "system", content: "late system note" }
]

describe("OpenAI Chat exporter", () => {
  const chat = OpenAIChatExport.toOpenAIChat(conversation)
  it("writes images as data URLs, calls with JSON arguments, reasoning as reasoning_content", () => {
    expect(chat[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is in this image?" },
        { type: "image_url", image_url: { url: `data:image/png;base64,${pngBase64}` } }
      ]
    })
    expect(chat[2]).toEqual({
      role: "assistant",
      content: "Let me check.",
      reasoning_content: "look first",
      tool_calls: [
        { id: "a", type: "function", function: { name: "read", arguments: '{"path":"x.png"}' } },
        { id: "b", type: "function", function: { name: "bash", arguments: '{"command":"file x.png"}' } }
      ]
    })
  })
  it("writes one tool message per result", () => {
    expect(chat.slice(3, 5)).toEqual([
      { role: "tool", tool_call_id: "a", content: "bytes" },
      { role: "tool", tool_call_id: "b", content: "not found" }
    ])
  })
})

describe("Anthropic Messages exporter", () => {
  const request = AnthropicMessagesExport.toAnthropicMessages(conversation)
  it("lifts the leading system message and keeps a later one as user text", () => {
    expect(request.system).toBe("be brief")
    expect(request.messages.at(-1)).toEqual({ role: "user", content: [{ type: "text", text: "late system note" }] })
  })
  it("keeps thinking signatures, base64 images and error flags", () => {
    expect(request.messages[0]!.content).toContainEqual({
      type: "image",
      source: { type: "base64", media_type: "image/png", data: pngBase64 }
    })
    expect(request.messages[1]!.content).toContainEqual({
      type: "thinking",
      thinking: "look first",
      signature: "sig-1"
    })
    expect(request.messages[2]).toEqual({
      role: "user",
      content: [
        { type: "tool_result", tool_use_id: "a", content: "bytes" },
        { type: "tool_result", tool_use_id: "b", content: "not found", is_error: true }
      ]
    })
  })
})

describe("ModelMessage[] exporter", () => {
  it("turns bytes into base64 and URLs into strings, leaving the input untouched", () => {
    const input: Array<Message.Message> = [
      { role: "user", content: [{ type: "image", image: new URL("https://example.com/a.png") }] },
      ...conversation.slice(1, 2)
    ]
    const before = JSON.stringify(input)
    const out = ModelMessagesExport.toModelMessages(input)
    expect(out[0]).toEqual({ role: "user", content: [{ type: "image", image: "https://example.com/a.png" }] })
    expect(out[1]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "what is in this image?" },
        { type: "image", image: pngBase64, mediaType: "image/png" }
      ]
    })
    expect(JSON.stringify(input)).toBe(before)
    expect((input[1]!.content as Array<Message.UserContentPart>)[1]).toMatchObject({ image: png })
  })
  it("exports only the message entries of a transcript", () => {
    const entries: Array<Entry.Entry> = [
      { id: "1", parentId: null, timestamp: "t", schemaVersion: 1, kind: "message", message: conversation[0]! },
      { id: "2", parentId: "1", timestamp: "t", schemaVersion: 1, kind: "event", event: { name: "model.change" } }
    ]
    expect(ModelMessagesExport.toModelMessages({ entries })).toEqual([conversation[0]])
  })
})

// ---------------------------------------------------------------------------
// Property: import(export(messages)) keeps what each format carries
// ---------------------------------------------------------------------------

const text = fc.string({ minLength: 1, maxLength: 20 })
const json = fc.dictionary(fc.constantFrom("path", "command", "n"), fc.oneof(fc.string(), fc.integer()), {
  maxKeys: 3
})
const turn = fc
  .record({
    user: text,
    reasoning: fc.option(fc.record({ text, signature: text }), { nil: undefined }),
    answer: fc.option(text, { nil: undefined }),
    calls: fc.array(
      fc.record({ name: fc.constantFrom("read", "bash", "edit"), input: json, output: text, error: fc.boolean() }),
      {
        maxLength: 3
      }
    )
  })
  .map(({ user, reasoning, answer, calls }) => ({ user, reasoning, answer, calls }))

interface Turn {
  readonly user: string
  readonly reasoning: { readonly text: string; readonly signature: string } | undefined
  readonly answer: string | undefined
  readonly calls: ReadonlyArray<{
    readonly name: string
    readonly input: unknown
    readonly output: string
    readonly error: boolean
  }>
}

const conversationOf = (turns: ReadonlyArray<Turn>) => {
  const messages: Array<Message.Message> = []
  turns.forEach((t, turnIndex) => {
    messages.push({ role: "user", content: t.user })
    const parts: Array<Message.AssistantContentPart> = []
    if (t.reasoning)
      parts.push({
        type: "reasoning",
        text: t.reasoning.text,
        providerOptions: { anthropic: { signature: t.reasoning.signature } }
      })
    if (t.answer !== undefined) parts.push({ type: "text", text: t.answer })
    for (const [index, call] of t.calls.entries())
      parts.push({ type: "tool-call", toolCallId: `c${turnIndex}_${index}`, toolName: call.name, input: call.input })
    messages.push({ role: "assistant", content: parts })
    if (t.calls.length > 0)
      messages.push({
        role: "tool",
        content: t.calls.map((call, index) => ({
          type: "tool-result" as const,
          toolCallId: `c${turnIndex}_${index}`,
          toolName: call.name,
          output: call.error
            ? { type: "error-text" as const, value: call.output }
            : { type: "text" as const, value: call.output }
        }))
      })
  })
  return messages
}

const reimport = (value: unknown, format: "anthropic-messages" | "openai-chat" | "model-messages") =>
  Effect.runSync(Import.importValue(JSON.parse(JSON.stringify(value)), { format })).transcript.entries.flatMap(
    (entry) => (entry.kind === "message" ? [entry.message] : [])
  )

describe("round trip (property)", () => {
  it("ModelMessage[] and Anthropic keep every message exactly; OpenAI keeps all but signatures and error flags", () => {
    fc.assert(
      fc.property(fc.array(turn, { minLength: 1, maxLength: 5 }), (turns) => {
        const messages = conversationOf(turns)
        expect(reimport(ModelMessagesExport.toModelMessages(messages), "model-messages")).toEqual(messages)
        const viaAnthropic = reimport(AnthropicMessagesExport.toAnthropicMessages(messages), "anthropic-messages")
        expect(viaAnthropic).toEqual(messages)
        const viaOpenAI = reimport(OpenAIChatExport.toOpenAIChat(messages), "openai-chat")
        const withoutLoss = messages.flatMap((message): Array<Message.Message> => {
          if (message.role === "tool")
            return message.content.map((part) => ({
              role: "tool",
              content: [
                part.type === "tool-result" && part.output.type === "error-text"
                  ? { ...part, output: { type: "text", value: part.output.value } }
                  : part
              ]
            }))
          if (message.role === "assistant" && typeof message.content !== "string")
            return [
              {
                role: "assistant",
                content: message.content.map((part) =>
                  part.type === "reasoning" ? { type: "reasoning", text: part.text } : part
                )
              }
            ]
          return [message]
        })
        expect(viaOpenAI).toEqual(withoutLoss)
      }),
      { numRuns: 100 }
    )
  })
})
