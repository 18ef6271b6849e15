/**
 * Importer for Anthropic Messages JSON: a request body
 * (`{ model, system, messages }`), a bare message array, or a response
 * (`{ type: "message", role: "assistant", content }`).
 *
 * `system` (string or text blocks) becomes one leading system message; a
 * user message carrying `tool_result` blocks becomes a tool message (tool
 * names come from the matching `tool_use`); `thinking` keeps its signature
 * in `providerOptions.anthropic.signature`; images and documents keep their
 * base64 data or URL.
 *
 * @since 0.1.0
 */
import * as AnthropicBlocks from "./AnthropicBlocks.ts"
import { isObject } from "./EntryBuilder.ts"
import type { DocumentFormat } from "./Format.ts"

const ANTHROPIC_BLOCKS = new Set([
  "tool_use",
  "tool_result",
  "thinking",
  "redacted_thinking",
  "server_tool_use",
  "document"
])

const messagesOf = (document: unknown): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(document)) return document
  if (!isObject(document)) return undefined
  if (document.type === "message" && document.role === "assistant") return [document]
  return Array.isArray(document.messages) ? document.messages : undefined
}

const hasAnthropicMarkers = (message: unknown): boolean =>
  isObject(message) &&
  Array.isArray(message.content) &&
  message.content.some(
    (block) =>
      isObject(block) &&
      (ANTHROPIC_BLOCKS.has(String(block.type)) || (block.type === "image" && isObject(block.source)))
  )

/**
 * The Anthropic Messages importer.
 *
 * @category importers
 */
export const format: DocumentFormat = {
  id: "anthropic-messages",
  kind: "document",
  prefix: "anthropic",
  markers:
    "a JSON Messages API response, a request with `system` and `messages`, or Anthropic content blocks such as `tool_use`",
  detect: (document) => {
    if (isObject(document) && document.type === "message" && Array.isArray(document.content)) return true
    if (isObject(document) && "system" in document && Array.isArray(document.messages) && !("history" in document))
      return true
    const messages = messagesOf(document)
    return messages?.some(hasAnthropicMarkers) === true
  },
  fromValue: (builder, document) => {
    const names = new Map<string, string>()
    builder.startSession("anthropic")
    if (isObject(document) && document.system !== undefined) {
      const system = AnthropicBlocks.blocks(document.system)
        .map((block) => (typeof block.text === "string" ? block.text : ""))
        .join("\n")
      builder.message(0, { role: "system", content: system }, { id: "anthropic:system" })
    }
    for (const [index, raw] of (messagesOf(document) ?? []).entries()) {
      if (!isObject(raw)) {
        builder.skip(0, `messages[${index}] is not an object`)
        continue
      }
      const converted = AnthropicBlocks.toMessages(raw, names)
      if ("error" in converted) {
        builder.skip(0, `messages[${index}]: ${converted.error}`)
        continue
      }
      for (const [part, message] of converted.entries())
        builder.message(index, message, {
          id: part === 0 ? `anthropic:${index}` : `anthropic:${index}:${message.role}`
        })
    }
  }
}
