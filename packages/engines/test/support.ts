/**
 * Small builders for engine tests: conversations as view items with ids.
 */
import type { Checkpoint, Entry, Message } from "@context-engine/core"
import fc from "fast-check"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"

export interface Item {
  readonly entryId: string
  readonly message: Message.Message
}

export const user = (text: string): Message.Message => ({ role: "user", content: [{ type: "text", text }] })
export const assistant = (text: string): Message.Message => ({ role: "assistant", content: [{ type: "text", text }] })
export const calls = (...specs: ReadonlyArray<{ id: string; name: string; input: unknown }>): Message.Message => ({
  role: "assistant",
  content: specs.map((spec) => ({ type: "tool-call", toolCallId: spec.id, toolName: spec.name, input: spec.input }))
})
export const results = (
  ...specs: ReadonlyArray<{ id: string; name: string; text: string; error?: boolean }>
): Message.Message => ({
  role: "tool",
  content: specs.map((spec) => ({
    type: "tool-result",
    toolCallId: spec.id,
    toolName: spec.name,
    output: spec.error ? { type: "error-text", value: spec.text } : { type: "text", value: spec.text }
  }))
})

let nextCallId = 0
/** One shell (`bash`) call and its result, under a fresh call id. */
export const shellRun = (command: string, text: string, error = false): Array<Message.Message> => {
  const id = `call_${nextCallId++}`
  return [calls({ id, name: "bash", input: { command } }), results({ id, name: "bash", text, error })]
}
/** One edit call of `path` that worked, and its result, under a fresh call id. */
export const editRun = (path: string): Array<Message.Message> => {
  const id = `call_${nextCallId++}`
  return [
    calls({ id, name: "edit", input: { path, oldText: "a", newText: "b" } }),
    results({ id, name: "edit", text: `Successfully replaced text in ${path}.` })
  ]
}

export const withIds = (messages: ReadonlyArray<Message.Message>, prefix = "e"): Array<Item> =>
  messages.map((message, index) => ({ entryId: `${prefix}${index}`, message }))

/** Token count used by tests: one token per 4 characters of the message JSON. */
export const roughTokens = (message: Message.Message): number => Math.ceil(JSON.stringify(message).length / 4)

/**
 * A random conversation: turns of a user message followed by assistant text,
 * single tool calls or parallel batches (results in one tool message or one
 * per call), with random text sizes.
 */
export const conversation = fc
  .array(
    fc.record({
      ask: fc.string({ minLength: 1, maxLength: 40 }),
      askSize: fc.integer({ min: 1, max: 400 }),
      steps: fc.array(
        fc.record({
          kind: fc.constantFrom("text", "call", "batch", "batch-split"),
          size: fc.integer({ min: 1, max: 3000 }),
          width: fc.integer({ min: 2, max: 5 })
        }),
        { maxLength: 5 }
      )
    }),
    { minLength: 1, maxLength: 8 }
  )
  .map((turns) => {
    const messages: Array<Message.Message> = []
    let callNumber = 0
    for (const turn of turns) {
      messages.push(user(`${turn.ask} ${"u".repeat(turn.askSize)}`))
      for (const step of turn.steps) {
        if (step.kind === "text") messages.push(assistant("a".repeat(step.size)))
        else {
          const width = step.kind === "call" ? 1 : step.width
          const specs = Array.from({ length: width }, () => ({
            id: `call_${callNumber++}`,
            name: "bash",
            input: { command: `ls dir_${callNumber}` }
          }))
          messages.push(calls(...specs))
          const outputs = specs.map((spec) => ({ id: spec.id, name: spec.name, text: "r".repeat(step.size) }))
          if (step.kind === "batch-split") for (const output of outputs) messages.push(results(output))
          else messages.push(results(...outputs))
        }
      }
    }
    return withIds(messages)
  })

/** One message entry, timestamped at the epoch. */
export const messageEntry = (id: string, parentId: string | null, message: Message.Message): Entry.Entry => ({
  id,
  parentId,
  timestamp: new Date(0).toISOString(),
  schemaVersion: 1,
  kind: "message",
  message
})

/** Messages as a chain of message entries `m0`, `m1`, … (each the parent of the next), timestamped at the epoch. */
export const entriesOf = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => messageEntry(`m${index}`, index === 0 ? null : `m${index - 1}`, message))

/** An extractive checkpoint holding `content`, covering the range up to `toEntryId`. */
export const checkpointOf = (content: Checkpoint.CheckpointContent, toEntryId = "e8"): Checkpoint.Checkpoint => ({
  id: "cp",
  generation: 1,
  coveredRange: { fromEntryId: null, toEntryId },
  firstKeptEntryId: null,
  tokensBefore: 0,
  tokensAfter: 0,
  summarizer: { kind: "extractive", promptVersion: ExtractiveSummarizer.PROMPT_VERSION },
  content,
  createdAt: new Date(0).toISOString()
})
