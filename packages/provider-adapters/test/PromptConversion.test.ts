import type { LanguageModelV4Message, LanguageModelV4Prompt } from "@ai-sdk/provider"
import type { Message } from "@context-engine/core"
import fc from "fast-check"
import { describe, expect, expectTypeOf, it } from "vitest"
import * as PromptAlignment from "../src/PromptAlignment.ts"
import * as PromptConversion from "../src/PromptConversion.ts"

describe("PromptConversion", () => {
  it("converts a message object once: later calls return the same converted object", () => {
    const message: Message.Message = { role: "user", content: "hello" }
    const first = PromptConversion.toPromptMessage(message)
    expect(first).toEqual({ role: "user", content: [{ type: "text", text: "hello" }] })
    expect(PromptConversion.toPrompt([message, message])).toEqual([first, first])
    expect(PromptConversion.toPrompt([message])[0]).toBe(first)
    // An equal but different object is converted on its own.
    expect(PromptConversion.toPromptMessage({ role: "user", content: "hello" })).not.toBe(first)
  })

  it("makeToPrompt equals toPrompt, reuses the conversion of the message it converted at a position last call, and converts the rest", () => {
    const toPrompt = PromptConversion.makeToPrompt()
    const messages: Array<Message.Message> = [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "user", content: "c" }
    ]
    const first = toPrompt(messages.slice(0, 2))
    expect(first).toEqual(PromptConversion.toPrompt(messages.slice(0, 2)))
    const second = toPrompt(messages)
    expect(second).toEqual(PromptConversion.toPrompt(messages))
    expect(second).not.toBe(first)
    expect(second[0]).toBe(first[0])
    // A different message at position 1: that position and later are converted from the new messages.
    const changed: Array<Message.Message> = [messages[0]!, { role: "assistant", content: "B" }, messages[2]!]
    expect(toPrompt(changed)).toEqual(PromptConversion.toPrompt(changed))
    // A caller that mutates the array it passed does not corrupt the next call.
    changed[1] = { role: "assistant", content: "other" }
    expect(toPrompt(changed)).toEqual(PromptConversion.toPrompt(changed))
  })

  it("a request noted as built from the prompt (PromptAlignment.noteBuilt) converts only its own positions, to the same prompt", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom("keep", "rewrite", "drop", "insert", "insert-v4", "rewrite-v4"), {
          minLength: 1,
          maxLength: 30
        }),
        fc.integer({ min: 1, max: 3 }),
        (edits, steps) => {
          const noted = PromptConversion.makeToPrompt()
          const searched = PromptConversion.makeToPrompt()
          for (let step = 0; step < steps; step++) {
            // The application's prompt (new objects every step) and a request built from it by the edits.
            const original = edits.map(
              (_, index): LanguageModelV4Message => ({ role: "user", content: [{ type: "text", text: `m${index}` }] })
            )
            const request: Array<Message.Message> = []
            const own: Array<number> = []
            // String content needs converting to the V4 shape; a message already in it (`-v4`, e.g. a synthesized
            // tool result) does not.
            const textOf = (text: string, v4: boolean): Message.Message =>
              v4 ? { role: "user", content: [{ type: "text", text }] } : { role: "user", content: text }
            let converts = false
            edits.forEach((edit, index) => {
              if (edit === "drop") return
              const v4 = edit.endsWith("-v4")
              if (edit.startsWith("insert")) {
                own.push(request.length)
                request.push(textOf(`inserted before m${index}`, v4))
                converts ||= !v4
              }
              if (edit.startsWith("rewrite")) {
                own.push(request.length)
                request.push(textOf(`m${index} rewritten`, v4))
                converts ||= !v4
              } else request.push(original[index] as Message.Message)
            })
            PromptAlignment.noteBuilt(request, original, own)
            const fast = noted(request, original)
            const slow = searched(request.slice(), original)
            expect(fast).toEqual(slow)
            fast.forEach((message, index) => {
              if (!own.includes(index)) expect(message).toBe(request[index])
            })
            // Nothing of its own needs converting (none, or only V4-shaped ones): the request is sent as it is.
            if (converts) expect(fast).not.toBe(request)
            else expect(fast).toBe(request)
          }
        }
      )
    )
  })

  it("makeToPrompt keeps the application's own prompt messages where the request holds them, without reading them", () => {
    const toPrompt = PromptConversion.makeToPrompt()
    let reads = 0
    // The application's prompt, new objects every step as the AI SDK builds it: every property read is counted.
    const promptOfStep = (): LanguageModelV4Prompt =>
      (
        [
          { role: "user", content: [{ type: "text", text: "a" }] },
          { role: "assistant", content: [{ type: "text", text: "b" }] },
          { role: "user", content: [{ type: "text", text: "c" }] }
        ] as LanguageModelV4Prompt
      ).map(
        (message) =>
          new Proxy(message, {
            get: (target, key, receiver) => {
              reads++
              return Reflect.get(target, key, receiver)
            }
          })
      )
    // The view rewrote position 1 (a ModelMessage with string content, converted to a V4 message).
    const rewritten: Message.Message = { role: "assistant", content: "B" }
    const first = promptOfStep()
    const prompt = toPrompt([first[0]!, rewritten, first[2]!], first)
    expect(prompt).toEqual([
      { role: "user", content: [{ type: "text", text: "a" }] },
      { role: "assistant", content: [{ type: "text", text: "B" }] },
      { role: "user", content: [{ type: "text", text: "c" }] }
    ])
    // The next step: a new prompt, the same rewritten message at position 1, one message the view added.
    const next = promptOfStep()
    reads = 0
    const again = toPrompt([next[0]!, rewritten, next[2]!, { role: "user", content: "d" }], next)
    expect(reads).toBe(0)
    expect(again).toHaveLength(4)
    expect(again[0]).toBe(next[0])
    expect(again[2]).toBe(next[2])
    expect(again[1]).toBe(prompt[1])
    expect(again[3]).toEqual({ role: "user", content: [{ type: "text", text: "d" }] })
    // A request that dropped position 1: the application's message after it is found one position on, unread.
    const third = promptOfStep()
    reads = 0
    const dropped = toPrompt([third[0]!, third[2]!], third)
    expect(reads).toBe(0)
    expect(dropped[0]).toBe(third[0])
    expect(dropped[1]).toBe(third[2])
  })

  it("every V4 prompt message is a Message (type level), so V4 → Message is the identity", () => {
    expectTypeOf<LanguageModelV4Message>().toExtend<Message.Message>()
    const prompt: LanguageModelV4Prompt = [
      { role: "system", content: "sys" },
      { role: "user", content: [{ type: "text", text: "hi" }] }
    ]
    const messages = PromptConversion.fromPrompt(prompt)
    expect(messages[0]).toBe(prompt[0])
    expect(messages[1]).toBe(prompt[1])
  })

  it("returns V4-shaped messages unchanged (same objects), keeping providerOptions", () => {
    const messages: Array<Message.Message> = [
      { role: "system", content: "sys", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
      {
        role: "assistant",
        content: [
          { type: "reasoning", text: "think", providerOptions: { anthropic: { signature: "sig" } } },
          { type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "a" } }
        ]
      },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "c1", toolName: "read", output: { type: "text", value: "x" } }]
      }
    ]
    const prompt = PromptConversion.toPrompt(messages)
    prompt.forEach((message, index) => {
      expect(message).toBe(messages[index])
    })
  })

  it("normalises what ModelMessage allows and V4 does not", () => {
    const bytes = new Uint8Array([1, 2, 3])
    const prompt = PromptConversion.toPrompt([
      { role: "user", content: "plain" },
      {
        role: "user",
        content: [
          {
            type: "image",
            image: new URL("https://example.com/a.png"),
            providerOptions: { openai: { imageDetail: "low" } }
          },
          { type: "image", image: "iVBORw0KGgo=", mediaType: "image/png" },
          { type: "file", data: bytes, mediaType: "application/pdf", filename: "a.pdf" }
        ]
      },
      { role: "assistant", content: "" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "asking" },
          { type: "tool-approval-request", approvalId: "ap1", toolCallId: "c1" }
        ]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "shot",
            output: {
              type: "content",
              value: [
                { type: "text", text: "see image" },
                { type: "image-data", data: "AAAA", mediaType: "image/png" },
                { type: "file-url", url: "https://example.com/r.txt", mediaType: "text/plain" }
              ]
            },
            providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } }
          },
          { type: "tool-approval-response", approvalId: "ap1", approved: true, providerExecuted: true }
        ]
      }
    ])
    expect(prompt[0]).toEqual({ role: "user", content: [{ type: "text", text: "plain" }] })
    expect(prompt[1]).toEqual({
      role: "user",
      content: [
        {
          type: "file",
          data: { type: "url", url: new URL("https://example.com/a.png") },
          mediaType: "image",
          providerOptions: { openai: { imageDetail: "low" } }
        },
        { type: "file", data: { type: "data", data: "iVBORw0KGgo=" }, mediaType: "image/png" },
        { type: "file", data: { type: "data", data: bytes }, mediaType: "application/pdf", filename: "a.pdf" }
      ]
    })
    expect(prompt[2]).toEqual({ role: "assistant", content: [] })
    expect(prompt[3]).toEqual({ role: "assistant", content: [{ type: "text", text: "asking" }] })
    expect(prompt[4]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "c1",
          toolName: "shot",
          output: {
            type: "content",
            value: [
              { type: "text", text: "see image" },
              { type: "file", data: { type: "data", data: "AAAA" }, mediaType: "image/png" },
              {
                type: "file",
                data: { type: "url", url: new URL("https://example.com/r.txt") },
                mediaType: "text/plain"
              }
            ]
          },
          providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } }
        },
        { type: "tool-approval-response", approvalId: "ap1", approved: true }
      ]
    })
  })

  it("property: V4 prompts survive fromPrompt → toPrompt as the very same objects", () => {
    const options = fc.option(fc.constant({ anthropic: { cacheControl: { type: "ephemeral" as const } } }), {
      nil: undefined
    })
    const text = fc.record(
      { type: fc.constant("text" as const), text: fc.string(), providerOptions: options },
      { requiredKeys: ["type", "text"] }
    )
    const message = fc.oneof(
      fc.record({ role: fc.constant("system" as const), content: fc.string() }),
      fc.record({ role: fc.constant("user" as const), content: fc.array(text, { minLength: 1, maxLength: 3 }) }),
      fc.record({
        role: fc.constant("assistant" as const),
        content: fc.array(
          fc.oneof(
            text,
            fc.record({
              type: fc.constant("tool-call" as const),
              toolCallId: fc.string({ minLength: 1 }),
              toolName: fc.string({ minLength: 1 }),
              input: fc.jsonValue()
            })
          ),
          { minLength: 1, maxLength: 3 }
        )
      }),
      fc.record({
        role: fc.constant("tool" as const),
        content: fc.array(
          fc.record({
            type: fc.constant("tool-result" as const),
            toolCallId: fc.string({ minLength: 1 }),
            toolName: fc.string({ minLength: 1 }),
            output: fc.oneof(
              fc.record({ type: fc.constant("text" as const), value: fc.string() }),
              fc.record({ type: fc.constant("json" as const), value: fc.jsonValue() as fc.Arbitrary<never> })
            )
          }),
          { minLength: 1, maxLength: 2 }
        )
      })
    ) as unknown as fc.Arbitrary<LanguageModelV4Message>
    fc.assert(
      fc.property(fc.array(message, { maxLength: 8 }), (prompt) => {
        const back = PromptConversion.toPrompt(PromptConversion.fromPrompt(prompt))
        expect(back).toHaveLength(prompt.length)
        back.forEach((item, index) => {
          expect(item).toBe(prompt[index])
        })
      })
    )
  })
})
