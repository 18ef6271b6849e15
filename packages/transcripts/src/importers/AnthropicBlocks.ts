/**
 * Anthropic Messages content blocks ⇄ core message parts, shared by the
 * Anthropic Messages and Claude Code importers.
 *
 * @since 0.1.0
 */
import type { Message } from "@context-engine/core"
import { isObject } from "./EntryBuilder.ts"

type Block = Record<string, unknown>

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/**
 * Content as a list of blocks (a string becomes one text block).
 *
 * @category utils
 */
export const blocks = (content: unknown): ReadonlyArray<Block> =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content)
      ? content.filter(isObject)
      : []

const cacheControl = (block: Block): Pick<Message.TextPart, "providerOptions"> =>
  isObject(block.cache_control)
    ? { providerOptions: { anthropic: { cacheControl: block.cache_control as Message.JsonObject } } }
    : {}

/**
 * An image or document block as a user part (base64 data or URL string).
 *
 * @category conversions
 */
export const mediaPart = (block: Block): Message.UserContentPart | undefined => {
  const source = isObject(block.source) ? block.source : undefined
  if (source === undefined) return undefined
  const data = source.type === "base64" ? str(source.data) : source.type === "url" ? str(source.url) : undefined
  if (data === undefined) {
    if (source.type === "text" && typeof source.data === "string")
      return { type: "file", data: { type: "text", text: source.data }, mediaType: "text/plain" }
    return undefined
  }
  const mediaType = str(source.media_type)
  if (block.type === "image") return { type: "image", image: data, ...(mediaType ? { mediaType } : {}) }
  return {
    type: "file",
    data,
    mediaType: mediaType ?? "application/pdf",
    ...(str(block.title) ? { filename: str(block.title)! } : {})
  }
}

/**
 * User-side blocks (text, image, document) as user parts; tool results are
 * handled by {@link toolResultPart}.
 *
 * @category conversions
 */
export const userPart = (block: Block): Message.UserContentPart | undefined => {
  if (block.type === "text") return { type: "text", text: str(block.text) ?? "", ...cacheControl(block) }
  if (block.type === "image" || block.type === "document") return mediaPart(block)
  return undefined
}

/**
 * A `tool_result` block's content as a tool output. A string (or one text
 * block) is `text` (`error-text` when `is_error`); anything else is
 * `content` with text and image items.
 *
 * @category conversions
 */
export const toolOutput = (content: unknown, isError: boolean): Message.ToolResultOutput => {
  const items = content === undefined ? [] : blocks(content)
  if (typeof content === "string" || content === undefined || (items.length === 1 && items[0]!.type === "text")) {
    const value = typeof content === "string" ? content : (str(items[0]?.text) ?? "")
    return isError ? { type: "error-text", value } : { type: "text", value }
  }
  return {
    type: "content",
    value: items.flatMap((block): Array<Message.ToolResultContentItem> => {
      if (block.type === "text") return [{ type: "text", text: str(block.text) ?? "" }]
      const source = isObject(block.source) ? block.source : undefined
      if (block.type === "image" && source?.type === "base64" && typeof source.data === "string")
        return [{ type: "image-data", data: source.data, mediaType: str(source.media_type) ?? "image/png" }]
      if (block.type === "image" && source?.type === "url" && typeof source.url === "string")
        return [{ type: "image-url", url: source.url }]
      return [{ type: "text", text: JSON.stringify(block) }]
    })
  }
}

/**
 * A `tool_result` block as a tool-result part; `names` maps tool-use ids
 * seen so far to tool names (results carry only the id).
 *
 * @category conversions
 */
export const toolResultPart = (block: Block, names: ReadonlyMap<string, string>): Message.ToolResultPart => {
  const toolCallId = str(block.tool_use_id) ?? ""
  return {
    type: "tool-result",
    toolCallId,
    toolName: names.get(toolCallId) ?? "",
    output: toolOutput(block.content, block.is_error === true)
  }
}

/**
 * Assistant-side blocks as assistant parts. `names` collects tool-use ids
 * → names for later results.
 *
 * @category conversions
 */
export const assistantPart = (block: Block, names: Map<string, string>): Message.AssistantContentPart | undefined => {
  switch (block.type) {
    case "text":
      return { type: "text", text: str(block.text) ?? "", ...cacheControl(block) }
    case "thinking":
      return {
        type: "reasoning",
        text: str(block.thinking) ?? "",
        ...(typeof block.signature === "string"
          ? { providerOptions: { anthropic: { signature: block.signature } } }
          : {})
      }
    case "redacted_thinking":
      return { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: str(block.data) ?? "" } } }
    case "tool_use":
    case "server_tool_use": {
      const id = str(block.id) ?? ""
      const name = str(block.name) ?? ""
      names.set(id, name)
      return {
        type: "tool-call",
        toolCallId: id,
        toolName: name,
        input: block.input ?? {},
        ...(block.type === "server_tool_use" ? { providerExecuted: true } : {})
      }
    }
    default:
      if (
        typeof block.type === "string" &&
        block.type.endsWith("_tool_result") &&
        typeof block.tool_use_id === "string"
      )
        return {
          type: "tool-result",
          toolCallId: block.tool_use_id,
          toolName: names.get(block.tool_use_id) ?? block.type.replace(/_tool_result$/, ""),
          output: { type: "json", value: (block.content ?? null) as Message.JsonValue }
        }
      return undefined
  }
}

/**
 * One Anthropic message (`{ role, content }`) as core messages: a user
 * message carrying `tool_result` blocks becomes a tool message (plus a user
 * message for any other blocks in it, after the results).
 *
 * @category conversions
 */
export const toMessages = (
  message: Record<string, unknown>,
  names: Map<string, string>
): Array<Message.Message> | { error: string } => {
  const role = message.role
  const content = message.content
  if (role === "assistant") {
    if (typeof content === "string") return [{ role: "assistant", content: [{ type: "text", text: content }] }]
    const parts = blocks(content).flatMap((block) => {
      const part = assistantPart(block, names)
      return part === undefined ? [] : [part]
    })
    return [{ role: "assistant", content: parts }]
  }
  if (role === "user") {
    if (typeof content === "string") return [{ role: "user", content }]
    const results: Array<Message.ToolResultPart> = []
    const others: Array<Message.UserContentPart> = []
    for (const block of blocks(content)) {
      if (block.type === "tool_result") results.push(toolResultPart(block, names))
      else {
        const part = userPart(block)
        if (part !== undefined) others.push(part)
      }
    }
    const out: Array<Message.Message> = []
    if (results.length > 0) out.push({ role: "tool", content: results })
    if (others.length > 0 || results.length === 0) out.push({ role: "user", content: others })
    return out
  }
  return { error: `unknown message role ${JSON.stringify(role)}` }
}
