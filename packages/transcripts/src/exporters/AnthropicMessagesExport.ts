/**
 * Exporter to an Anthropic Messages request body (`{ system, messages }`).
 *
 * | core | Anthropic |
 * |---|---|
 * | leading system messages | `system` (joined by `\n\n`) |
 * | later system messages | a user text block (the API has no mid-conversation system role) |
 * | user string / parts | string, or `text` / `image` / `document` blocks (base64 or URL source) |
 * | assistant | `thinking` (+ `signature`) / `redacted_thinking`, `text`, `tool_use` (`server_tool_use` when provider-executed) |
 * | tool | a user message of `tool_result` blocks (`is_error` for error outputs; text and image content) |
 *
 * Messages are not merged: consecutive same-role messages stay separate
 * (the API accepts and joins consecutive user turns).
 *
 * @since 0.1.0
 */
import { type Message, MessageParts } from "@context-engine/core"
import { dataString, type ExportInput, isUrl, messagesOf } from "./ExportInput.ts"

type Block = Record<string, unknown>

/**
 * An Anthropic Messages request body (the fields this exporter writes).
 *
 * @category models
 */
export interface AnthropicRequest {
  system?: string
  messages: Array<{ role: "user" | "assistant"; content: string | Array<Block> }>
}

const source = (data: string, mediaType: string | undefined): Block =>
  isUrl(data) && !data.startsWith("data:")
    ? { type: "url", url: data }
    : { type: "base64", media_type: mediaType ?? "image/png", data }

const userBlock = (part: Message.UserContentPart): Block => {
  switch (part.type) {
    case "text":
      return { type: "text", text: part.text }
    case "image":
      return { type: "image", source: source(dataString(part.image), part.mediaType) }
    case "file": {
      const raw = part.data
      if (typeof raw === "object" && raw !== null && "type" in raw && raw.type === "text")
        return { type: "document", source: { type: "text", media_type: "text/plain", data: raw.text } }
      const data =
        typeof raw === "object" && raw !== null && "type" in raw
          ? raw.type === "data"
            ? dataString(raw.data)
            : raw.type === "url"
              ? raw.url.toString()
              : JSON.stringify(raw.reference)
          : dataString(raw)
      return {
        type: "document",
        source: source(data, part.mediaType),
        ...(part.filename ? { title: part.filename } : {})
      }
    }
  }
}

// Multi-part content keeps its images as blocks; everything else is the shared text form.
const resultContent = (output: Message.ToolResultOutput): string | Array<Block> =>
  output.type !== "content"
    ? MessageParts.outputText(output)
    : output.value.flatMap((item): Array<Block> => {
        if (item.type === "text") return [{ type: "text", text: item.text }]
        if (item.type === "image-data")
          return [{ type: "image", source: { type: "base64", media_type: item.mediaType, data: item.data } }]
        if (item.type === "image-url") return [{ type: "image", source: { type: "url", url: item.url } }]
        return []
      })

const assistantBlock = (part: Message.AssistantContentPart): Array<Block> => {
  switch (part.type) {
    case "text":
      return [{ type: "text", text: part.text }]
    case "reasoning": {
      const anthropic = part.providerOptions?.anthropic
      if (typeof anthropic?.redactedData === "string")
        return [{ type: "redacted_thinking", data: anthropic.redactedData }]
      return [
        {
          type: "thinking",
          thinking: part.text,
          ...(typeof anthropic?.signature === "string" ? { signature: anthropic.signature } : {})
        }
      ]
    }
    case "tool-call":
      return [
        {
          type: part.providerExecuted === true ? "server_tool_use" : "tool_use",
          id: part.toolCallId,
          name: part.toolName,
          input: part.input ?? {}
        }
      ]
    case "tool-result":
      return [
        { type: `${part.toolName}_tool_result`, tool_use_id: part.toolCallId, content: resultContent(part.output) }
      ]
    default:
      return []
  }
}

/**
 * Converts messages to an Anthropic Messages request body.
 *
 * @category exporters
 */
export const toAnthropicMessages = (input: ExportInput): AnthropicRequest => {
  const system: Array<string> = []
  const messages: AnthropicRequest["messages"] = []
  for (const message of messagesOf(input)) {
    switch (message.role) {
      case "system":
        if (messages.length === 0) system.push(message.content)
        else messages.push({ role: "user", content: [{ type: "text", text: message.content }] })
        break
      case "user":
        messages.push({
          role: "user",
          content: typeof message.content === "string" ? message.content : message.content.map(userBlock)
        })
        break
      case "assistant":
        messages.push({
          role: "assistant",
          content:
            typeof message.content === "string"
              ? [{ type: "text", text: message.content }]
              : message.content.flatMap(assistantBlock)
        })
        break
      case "tool":
        messages.push({
          role: "user",
          content: message.content.flatMap(
            (part): Array<Block> =>
              part.type === "tool-result"
                ? [
                    {
                      type: "tool_result",
                      tool_use_id: part.toolCallId,
                      content: resultContent(part.output),
                      ...(part.output.type === "error-text" || part.output.type === "error-json"
                        ? { is_error: true }
                        : {})
                    }
                  ]
                : []
          )
        })
        break
    }
  }
  return { ...(system.length > 0 ? { system: system.join("\n\n") } : {}), messages }
}
