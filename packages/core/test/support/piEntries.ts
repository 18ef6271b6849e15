/**
 * A minimal, self-contained conversion of a Pi session JSONL file into core
 * entries for store tests and benchmarks: `message` records become message
 * entries (text, thinking → reasoning, toolCall → tool-call, toolResult →
 * tool message, bashExecution → user text), `model_change` /
 * `thinking_level_change` become events; session headers and Pi's own
 * compaction records are skipped. The full importer lives in
 * packages/provider-adapters.
 */
import { readFileSync } from "node:fs"
import type { Entry } from "../../src/Entry.ts"
import type { AssistantContentPart, Message } from "../../src/Message.ts"

type PiBlock = { readonly type: string; readonly [key: string]: unknown }
type PiMessage = {
  readonly role: string
  readonly content?: string | ReadonlyArray<PiBlock>
  readonly [key: string]: unknown
}

const text = (content: PiMessage["content"]): string =>
  typeof content === "string"
    ? content
    : (content ?? []).flatMap((block) => (block.type === "text" ? [String(block.text)] : [])).join("\n")

const toMessage = (message: PiMessage): Message | undefined => {
  switch (message.role) {
    case "user":
      return { role: "user", content: [{ type: "text", text: text(message.content) }] }
    case "assistant": {
      const blocks =
        typeof message.content === "string" ? [{ type: "text", text: message.content }] : (message.content ?? [])
      return {
        role: "assistant",
        content: blocks.flatMap((block): Array<AssistantContentPart> => {
          if (block.type === "text") return [{ type: "text" as const, text: String(block.text) }]
          if (block.type === "thinking") {
            const signature = typeof block.thinkingSignature === "string" ? block.thinkingSignature : undefined
            return [
              {
                type: "reasoning" as const,
                text: String(block.thinking),
                ...(signature ? { providerOptions: { anthropic: { signature } } } : {})
              }
            ]
          }
          if (block.type === "toolCall") {
            return [
              {
                type: "tool-call" as const,
                toolCallId: String(block.id),
                toolName: String(block.name),
                input: block.arguments
              }
            ]
          }
          return []
        })
      }
    }
    case "toolResult":
      return {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: String(message.toolCallId),
            toolName: String(message.toolName),
            output: { type: "text", value: text(message.content) }
          }
        ]
      }
    case "bashExecution":
      return { role: "user", content: `$ ${String(message.command)}\n${String(message.output)}` }
    default:
      return undefined
  }
}

/** Reads a Pi session file into entries chained by `parentId`. */
export const piEntries = (path: string): Array<Entry> => {
  const entries: Array<Entry> = []
  let parentId: string | null = null
  const lines = readFileSync(path, "utf8").split("\n")
  lines.forEach((line, index) => {
    if (line.trim() === "") return
    const record = JSON.parse(line) as { type: string; timestamp?: string; message?: PiMessage; [key: string]: unknown }
    const header = {
      id: `pi-${index + 1}`,
      parentId,
      timestamp: record.timestamp ?? "1970-01-01T00:00:00.000Z",
      schemaVersion: 1 as const
    }
    let entry: Entry | undefined
    if (record.type === "message" && record.message) {
      const message = toMessage(record.message)
      if (message) entry = { ...header, kind: "message", message }
    } else if (record.type === "model_change" || record.type === "thinking_level_change") {
      const { type, timestamp: _timestamp, ...data } = record
      entry = { ...header, kind: "event", event: { name: type, data: JSON.parse(JSON.stringify(data)) } }
    }
    if (entry) {
      entries.push(entry)
      parentId = entry.id
    }
  })
  return entries
}
