/**
 * Exporter to OpenAI Chat Completions messages.
 *
 * | core | OpenAI |
 * |---|---|
 * | system | `{ role: "system", content }` |
 * | user string / parts | `content` string, or `text` / `image_url` (base64 → `data:` URL) / `file` parts |
 * | assistant | `content` (text parts joined by `\n`, `null` when none), `tool_calls` (`arguments` = JSON text), reasoning as `reasoning_content` |
 * | tool (N results) | N `{ role: "tool", tool_call_id, content }` messages |
 *
 * Lossy by the format: Chat Completions has no reasoning field (the
 * `reasoning_content` convention of DeepSeek and vLLM is written so a round
 * trip keeps the text; signatures are dropped), no error flag on tool
 * results, no images in tool results, and no provider-executed tool results.
 *
 * @since 0.1.0
 */
import { type Message, MessageParts } from "@context-engine/core"
import { dataString, type ExportInput, isUrl, messagesOf } from "./ExportInput.ts"

/**
 * An OpenAI Chat Completions message (the subset this exporter writes).
 *
 * @category models
 */
export type ChatMessage =
  | { role: "system"; content: string }
  | { role: "user"; content: string | Array<Record<string, unknown>> }
  | {
      role: "assistant"
      content: string | null
      reasoning_content?: string
      tool_calls?: Array<{ id: string; type: "function"; function: { name: string; arguments: string } }>
    }
  | { role: "tool"; tool_call_id: string; content: string }

const userPart = (part: Message.UserContentPart): Record<string, unknown> => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "image": {
      const data = dataString(part.image)
      const url = isUrl(data) ? data : `data:${part.mediaType ?? "image/png"};base64,${data}`
      return { type: "image_url", image_url: { url } }
    }
    case "file": {
      const raw = part.data
      const data =
        typeof raw === "object" && raw !== null && "type" in raw
          ? raw.type === "data"
            ? dataString(raw.data)
            : raw.type === "text"
              ? Buffer.from(raw.text).toString("base64")
              : raw.type === "url"
                ? raw.url.toString()
                : JSON.stringify(raw.reference)
          : dataString(raw)
      if (part.mediaType.startsWith("audio/"))
        return { type: "input_audio", input_audio: { data, format: part.mediaType.slice(6) } }
      return {
        type: "file",
        file: {
          file_data: isUrl(data) ? data : `data:${part.mediaType};base64,${data}`,
          ...(part.filename ? { filename: part.filename } : {})
        }
      }
    }
  }
}

const toolInput = (input: unknown): string => (typeof input === "string" ? input : JSON.stringify(input ?? {}))

/**
 * Converts messages to OpenAI Chat Completions messages.
 *
 * @category exporters
 */
export const toOpenAIChat = (input: ExportInput): Array<ChatMessage> =>
  messagesOf(input).flatMap((message): Array<ChatMessage> => {
    switch (message.role) {
      case "system":
        return [{ role: "system", content: message.content }]
      case "user":
        return [
          {
            role: "user",
            content: typeof message.content === "string" ? message.content : message.content.map(userPart)
          }
        ]
      case "assistant": {
        if (typeof message.content === "string") return [{ role: "assistant", content: message.content }]
        const text = message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
        const reasoning = message.content.flatMap((part) => (part.type === "reasoning" ? [part.text] : []))
        const calls = message.content.flatMap((part) =>
          part.type === "tool-call" && part.providerExecuted !== true
            ? [
                {
                  id: part.toolCallId,
                  type: "function" as const,
                  function: { name: part.toolName, arguments: toolInput(part.input) }
                }
              ]
            : []
        )
        return [
          {
            role: "assistant",
            content: text.length > 0 ? text.join("\n") : null,
            ...(reasoning.length > 0 ? { reasoning_content: reasoning.join("\n") } : {}),
            ...(calls.length > 0 ? { tool_calls: calls } : {})
          }
        ]
      }
      default:
        return message.content.flatMap(
          (part): Array<ChatMessage> =>
            part.type === "tool-result"
              ? [{ role: "tool", tool_call_id: part.toolCallId, content: MessageParts.outputText(part.output) }]
              : []
        )
    }
  })
