/**
 * fast-check generators of conversations in the AI SDK message shape:
 * system prompt, user turns (text, sometimes an image), assistant steps with
 * reasoning (signed), text and parallel tool batches whose results arrive in
 * one tool message or several, in any order, sometimes never (interrupted),
 * and sometimes a turn still in progress.
 */
import type { Message } from "@context-engine/core"
import fc from "fast-check"

const PNG_1x1 = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg=="

const words = fc.constantFrom("alpha", "beta", "gamma", "delta", "error", "ok", "src/a.ts", "42", "ünïcödé", "日本語")
const textOf = (maxWords: number) =>
  fc.array(words, { minLength: 1, maxLength: maxWords }).map((list) => list.join(" "))
const bigText = fc.oneof(
  { weight: 4, arbitrary: textOf(30) },
  { weight: 1, arbitrary: fc.tuple(textOf(10), fc.integer({ min: 50, max: 3000 })).map(([t, n]) => t.repeat(n)) }
)

interface Step {
  readonly messages: Array<Message.Message>
}

let counter = 0

const step = fc
  .record({
    reasoning: fc.boolean(),
    text: fc.option(textOf(12), { nil: undefined }),
    calls: fc.array(
      fc.record({
        tool: fc.constantFrom("read", "bash", "grep", "shot"),
        path: fc.constantFrom("a.ts", "b.ts", "c.ts"),
        output: bigText,
        answered: fc.oneof({ weight: 6, arbitrary: fc.constant(true) }, { weight: 1, arbitrary: fc.constant(false) }),
        image: fc.oneof({ weight: 6, arbitrary: fc.constant(false) }, { weight: 1, arbitrary: fc.constant(true) })
      }),
      { maxLength: 4 }
    ),
    splitResults: fc.boolean(),
    reverse: fc.boolean()
  })
  .map((spec): Step => {
    const ids = spec.calls.map(() => `call_${counter++}`)
    const content: Array<Message.AssistantContentPart> = []
    if (spec.reasoning)
      content.push({
        type: "reasoning",
        text: "thinking about it",
        providerOptions: { anthropic: { signature: `sig${counter}` } }
      })
    if (spec.text !== undefined) content.push({ type: "text", text: spec.text })
    spec.calls.forEach((call, index) => {
      content.push({ type: "tool-call", toolCallId: ids[index]!, toolName: call.tool, input: { path: call.path } })
    })
    if (content.length === 0 || content.every((part) => part.type === "reasoning"))
      content.push({ type: "text", text: "ok" })
    const results: Array<Message.ToolResultPart> = spec.calls.flatMap((call, index): Array<Message.ToolResultPart> => {
      if (!call.answered) return []
      return [
        {
          type: "tool-result",
          toolCallId: ids[index]!,
          toolName: call.tool,
          output: call.image
            ? {
                type: "content",
                value: [
                  { type: "text", text: call.output },
                  { type: "image-data", data: PNG_1x1, mediaType: "image/png" }
                ]
              }
            : { type: "text", value: call.output }
        }
      ]
    })
    if (spec.reverse) results.reverse()
    const toolMessages: Array<Message.Message> =
      results.length === 0
        ? []
        : spec.splitResults
          ? results.map((part) => ({ role: "tool", content: [part] }))
          : [{ role: "tool", content: results }]
    return { messages: [{ role: "assistant", content }, ...toolMessages] }
  })

const userMessage = fc.record({ text: bigText, image: fc.boolean() }).map(
  ({ text, image }): Message.Message =>
    image
      ? {
          role: "user",
          content: [
            { type: "text", text },
            { type: "image", image: PNG_1x1, mediaType: "image/png" }
          ]
        }
      : { role: "user", content: [{ type: "text", text }] }
)

const turn = fc
  .tuple(userMessage, fc.array(step, { maxLength: 4 }), fc.option(textOf(8), { nil: undefined }))
  .map(
    ([user, steps, final]): Array<Message.Message> => [
      user,
      ...steps.flatMap((s) => s.messages),
      ...(final === undefined ? [] : [{ role: "assistant", content: final } as Message.Message])
    ]
  )

const withReasoningOnly = (messages: Array<Message.Message>, at: number): Array<Message.Message> => {
  if (at % 3 !== 0) return messages
  const index = at % (messages.length + 1)
  // Insert only between units (never between a tool call and its results).
  if (messages[index]?.role === "tool") return messages
  return [
    ...messages.slice(0, index),
    { role: "assistant", content: [{ type: "reasoning", text: "interrupted thought" }] },
    ...messages.slice(index)
  ]
}

/** A conversation: optional system prompt, then 1..8 turns (sometimes with an interrupted, reasoning-only response). */
export const conversation: fc.Arbitrary<Array<Message.Message>> = fc
  .tuple(fc.boolean(), fc.array(turn, { minLength: 1, maxLength: 8 }), fc.boolean(), fc.nat())
  .map(([system, turns, emptyAssistant, at]) => [
    ...(system ? [{ role: "system", content: "You are a coding agent." } as Message.Message] : []),
    // An interrupted response: an assistant message with only reasoning, somewhere in the conversation.
    ...withReasoningOnly(turns.flat(), at),
    ...(emptyAssistant ? [{ role: "assistant", content: [] } as Message.Message] : [])
  ])
