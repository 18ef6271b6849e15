import type { Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as MessageMatch from "../src/MessageMatch.ts"

const held: ReadonlyArray<Message.Message> = [
  { role: "user", content: "Read src/app.ts" },
  {
    role: "assistant",
    content: [
      { type: "text", text: "Reading it." },
      { type: "tool-call", toolCallId: "call-1", toolName: "read", input: { path: "src/app.ts" } }
    ]
  },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "call-1", toolName: "read", output: { type: "text", value: "x = 1" } }]
  }
]

const matcherOf = (messages: ReadonlyArray<Message.Message>) => {
  const matcher = MessageMatch.make()
  for (const message of messages) matcher.push(message)
  return matcher
}

/** Deep copies: new objects and new arrays everywhere, as an app that reloads its history each step sends them. */
const copies = (messages: ReadonlyArray<Message.Message>): Array<Message.Message> => structuredClone([...messages])

describe("MessageMatch", () => {
  it("matches equal messages in new objects, fields in another order, undefined fields and moved provider options", () => {
    const matcher = matcherOf(held)
    expect(matcher.matchedPrefix(copies(held), (index) => held[index]!)).toBe(3)
    const reordered: Array<Message.Message> = copies(held)
    const call = (reordered[1]!.content as Array<Record<string, unknown>>)[1]!
    reordered[1] = {
      role: "assistant",
      content: [
        { text: "Reading it.", type: "text", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
        { input: call.input, toolName: "read", toolCallId: "call-1", type: "tool-call", providerExecuted: undefined }
      ]
    } as Message.Message
    expect(matcher.matchedPrefix(reordered, (index) => held[index]!)).toBe(3)
  })

  it("stops at the first message whose value differs: text, nested input, output, an added field, a part", () => {
    const matcher = matcherOf(held)
    const edits: ReadonlyArray<readonly [number, (messages: Array<Message.Message>) => void]> = [
      [
        0,
        (messages) => {
          messages[0] = { role: "user", content: "Read src/app.js" }
        }
      ],
      [
        1,
        (messages) => {
          ;(messages[1]!.content as Array<{ input?: { path: string } }>)[1]!.input!.path = "a.ts"
        }
      ],
      [
        2,
        (messages) => {
          ;(messages[2]!.content as Array<{ output: { value: string } }>)[0]!.output.value = "x"
        }
      ],
      [
        2,
        (messages) => {
          ;(messages[2]!.content as Array<Record<string, unknown>>)[0]!.isError = true
        }
      ],
      [
        1,
        (messages) => {
          ;(messages[1]!.content as Array<unknown>).pop()
        }
      ]
    ]
    for (const [index, edit] of edits) {
      const messages = copies(held)
      edit(messages)
      expect(matcher.matchedPrefix(messages, (at) => held[at]!)).toBe(index)
    }
  })

  it("matches parts of known types by their fields alone (no held message read); other parts field by field", () => {
    // A part with a field its type does not list (isError on a tool result) and a part of a type no list names.
    const unusual: ReadonlyArray<Message.Message> = [
      ...held,
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "call-2",
            toolName: "run",
            output: { type: "text", value: "boom" },
            isError: true
          } as Message.ToolContentPart
        ]
      },
      { role: "assistant", content: [{ type: "note", body: "kept as is" } as unknown as Message.AssistantContentPart] }
    ]
    const matcher = matcherOf(unusual)
    let reads = 0
    const heldAt = (index: number): Message.Message => {
      reads++
      return unusual[index]!
    }
    // New objects around the same values in the same field order: the walk of the leaves decides, no fallback.
    expect(matcher.matchedPrefix(copies(unusual), heldAt)).toBe(5)
    expect(reads).toBe(0)
    // The unlisted field and the unknown part's field are compared too.
    const flipped = copies(unusual)
    ;(flipped[3]!.content as Array<Record<string, unknown>>)[0]!.isError = false
    expect(matcher.matchedPrefix(flipped, heldAt)).toBe(3)
    const noted = copies(unusual)
    ;(noted[4]!.content as Array<Record<string, unknown>>)[0]!.body = "kept as iS"
    expect(matcher.matchedPrefix(noted, heldAt)).toBe(4)
    // A listed part that gains a field its type does not list (same values otherwise) is a change.
    const extended = copies(unusual)
    ;(extended[1]!.content as Array<Record<string, unknown>>)[0]!.note = "x"
    expect(matcher.matchedPrefix(extended, heldAt)).toBe(1)
    // An unlisted field set to undefined is absent, as in JSON.
    const cleared = copies(unusual)
    ;(cleared[1]!.content as Array<Record<string, unknown>>)[0]!.note = undefined
    expect(matcher.matchedPrefix(cleared, heldAt)).toBe(5)
  })

  it("truncate keeps the first positions; later pushes are matched from there", () => {
    const matcher = matcherOf(held)
    matcher.truncate(1)
    expect(matcher.matchedPrefix(copies(held), (index) => held[index]!)).toBe(1)
    matcher.push(held[1]!)
    expect(matcher.matchedPrefix(copies(held), (index) => held[index]!)).toBe(2)
  })
})
