/**
 * Helpers shared by the exporters: picking the messages out of entries,
 * rendering binary data and tool outputs as JSON-safe strings.
 *
 * @since 0.1.0
 */
import type { Entry, Message } from "@context-engine/core"

/**
 * What an exporter accepts: messages, entries, or a transcript.
 *
 * @category models
 */
export type ExportInput =
  | ReadonlyArray<Message.Message>
  | ReadonlyArray<Entry.Entry>
  | { readonly entries: ReadonlyArray<Entry.Entry> }

/**
 * The messages of an export input, in order. Only message entries are
 * exported: checkpoints, memory, edits and events have no place in a
 * provider's message list.
 *
 * @category utils
 */
export const messagesOf = (input: ExportInput): ReadonlyArray<Message.Message> => {
  const items = (
    Array.isArray(input) ? input : (input as { entries: ReadonlyArray<Entry.Entry> }).entries
  ) as ReadonlyArray<Message.Message | Entry.Entry>
  return items.flatMap((item) =>
    "kind" in item ? (item.kind === "message" ? [item.message] : []) : [item as Message.Message]
  )
}

/**
 * Inline data (base64 string, bytes, ArrayBuffer) or a URL as a string:
 * base64 for bytes, the URL text for URLs.
 *
 * @category utils
 */
export const dataString = (data: unknown): string => {
  if (typeof data === "string") return data
  if (data instanceof URL) return data.toString()
  if (data instanceof Uint8Array) return Buffer.from(data).toString("base64")
  if (data instanceof ArrayBuffer) return Buffer.from(new Uint8Array(data)).toString("base64")
  return JSON.stringify(data)
}

/**
 * Whether a data string is a URL (`http(s):`, `data:`, `file:`) rather than base64.
 *
 * @category guards
 */
export const isUrl = (data: string): boolean => /^(https?|data|file|gs|s3):/u.test(data)
