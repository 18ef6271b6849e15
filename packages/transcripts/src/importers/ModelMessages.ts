/**
 * Importer for AI SDK `ModelMessage[]` JSON (or `{ messages: ModelMessage[] }`),
 * e.g. what `ModelMessagesExport` writes or an app persisted from
 * `response.messages`. Each message is decoded with the core `Message`
 * schema; one that does not decode is skipped with the path of the bad
 * field (`messages[3].content[0].text`).
 *
 * @since 0.1.0
 */
import { Decode, Message } from "@context-engine/core"
import { isObject } from "./EntryBuilder.ts"
import type { DocumentFormat } from "./Format.ts"

const PART_TYPES = new Set(["tool-call", "tool-result", "reasoning", "tool-approval-request", "tool-approval-response"])
const ROLES = new Set(["system", "user", "assistant", "tool"])

const messagesOf = (document: unknown): ReadonlyArray<unknown> | undefined =>
  Array.isArray(document)
    ? document
    : isObject(document) && Array.isArray(document.messages)
      ? document.messages
      : undefined

const decode = Decode.decodeUnknownSync(Message.Message, "message")

/**
 * The `ModelMessage[]` importer. Detects a message list whose parts use AI
 * SDK part types, or any list of `{ role, content }` with known roles (the
 * fallback for plain text-only lists, which every chat format shares).
 *
 * @category importers
 */
export const format: DocumentFormat = {
  id: "model-messages",
  kind: "document",
  prefix: "msg",
  markers: "a JSON list of messages that each have a role and content",
  detect: (document) => {
    const messages = messagesOf(document)
    if (messages === undefined || messages.length === 0) return false
    return messages.every((message) => isObject(message) && ROLES.has(String(message.role)) && "content" in message)
  },
  fromValue: (builder, document) => {
    builder.startSession("model-messages")
    ;(messagesOf(document) ?? []).forEach((raw, index) => {
      try {
        builder.message(index, decode(raw), { id: `msg:${index}` })
      } catch (error) {
        // decode throws the typed InvalidInput naming the bad path
        builder.skip(0, `messages[${index}]: ${(error as Error).message}`)
      }
    })
  }
}

/**
 * Whether a message list uses AI SDK part types (`tool-call`, `reasoning`, …).
 *
 * @category guards
 */
export const hasModelMessageParts = (messages: ReadonlyArray<unknown>): boolean =>
  messages.some(
    (message) =>
      isObject(message) &&
      Array.isArray(message.content) &&
      message.content.some((part) => isObject(part) && PART_TYPES.has(String(part.type)))
  )
