/**
 * A minimal reader of pi session JSONL (`../shared/transcripts/pi/*.jsonl`)
 * into AI SDK-shaped messages, for measurement tests and benchmarks. Only
 * `type: "message"` lines are read; the full importer lives in
 * packages/provider-adapters (not used here on purpose).
 *
 * Mapping: user → user (text/image parts); assistant → assistant (text,
 * thinking → reasoning with `providerOptions.anthropic.signature`, toolCall →
 * tool-call); toolResult → tool message with one tool-result;
 * bashExecution → user text (as pi sends it to the model). Messages with no
 * content are skipped.
 */
import { readFileSync } from "node:fs"
import type { AssistantContentPart, Message, UserContentPart } from "../../src/Message.ts"
import { transcript } from "./shared.ts"

/** One message with the provider-reported usage of the request that produced it (assistant only). */
export interface PiMessage {
  readonly message: Message
  /** `input + cacheRead + cacheWrite` of the response, i.e. the request's input tokens. */
  readonly reportedInputTokens?: number
  readonly model?: string
}

interface PiBlock {
  type: string
  text?: string
  thinking?: string
  thinkingSignature?: string
  id?: string
  name?: string
  arguments?: unknown
  data?: string
  mimeType?: string
}

interface PiLine {
  type: string
  message?: {
    role: string
    content?: string | Array<PiBlock>
    toolCallId?: string
    toolName?: string
    command?: string
    output?: string
    model?: string
    usage?: { input: number; cacheRead: number; cacheWrite: number }
  }
}

const textOf = (content: string | Array<PiBlock> | undefined): string =>
  typeof content === "string"
    ? content
    : (content ?? []).flatMap((block) => (block.type === "text" && block.text ? [block.text] : [])).join("\n")

const convert = (line: PiLine): PiMessage | undefined => {
  const m = line.message
  if (!m) return undefined
  switch (m.role) {
    case "user": {
      if (typeof m.content === "string")
        return m.content ? { message: { role: "user", content: m.content } } : undefined
      const content = (m.content ?? []).flatMap(
        (block): Array<UserContentPart> =>
          block.type === "text" && block.text
            ? [{ type: "text" as const, text: block.text }]
            : block.type === "image" && block.data
              ? [{ type: "image" as const, image: block.data, mediaType: block.mimeType ?? "image/png" }]
              : []
      )
      return content.length > 0 ? { message: { role: "user", content } } : undefined
    }
    case "assistant": {
      const blocks: Array<PiBlock> =
        typeof m.content === "string" ? [{ type: "text", text: m.content }] : (m.content ?? [])
      const content = blocks.flatMap((block: PiBlock): Array<AssistantContentPart> => {
        if (block.type === "text" && block.text) return [{ type: "text" as const, text: block.text }]
        if (block.type === "thinking" && (block.thinking || block.thinkingSignature)) {
          return [
            {
              type: "reasoning" as const,
              text: block.thinking ?? "",
              ...(block.thinkingSignature
                ? { providerOptions: { anthropic: { signature: block.thinkingSignature } } }
                : {})
            }
          ]
        }
        if (block.type === "toolCall") {
          return [
            {
              type: "tool-call" as const,
              toolCallId: block.id ?? "",
              toolName: block.name ?? "",
              input: block.arguments ?? {}
            }
          ]
        }
        return []
      })
      if (content.length === 0) return undefined
      const usage = m.usage
      return {
        message: { role: "assistant", content },
        ...(usage ? { reportedInputTokens: usage.input + usage.cacheRead + usage.cacheWrite } : {}),
        ...(m.model ? { model: m.model } : {})
      }
    }
    case "toolResult":
      return {
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: m.toolCallId ?? "",
              toolName: m.toolName ?? "",
              output: { type: "text", value: textOf(m.content) }
            }
          ]
        }
      }
    case "bashExecution":
      return { message: { role: "user", content: `Ran \`${m.command ?? ""}\`\n\`\`\`\n${m.output ?? ""}\n\`\`\`` } }
    default:
      return undefined
  }
}

/** Reads a pi session, e.g. `readPiSession("pi/before-compaction.jsonl")`. */
export const readPiSession = (name: string): Array<PiMessage> =>
  readFileSync(transcript(name), "utf8")
    .split("\n")
    .filter((line) => line.trim().length > 0)
    .map((line) => JSON.parse(line) as PiLine)
    .filter((line) => line.type === "message")
    .flatMap((line) => {
      const converted = convert(line)
      return converted ? [converted] : []
    })

/** Just the messages of a pi session. */
export const piMessages = (name = "pi/before-compaction.jsonl"): Array<Message> =>
  readPiSession(name).map((entry) => entry.message)
