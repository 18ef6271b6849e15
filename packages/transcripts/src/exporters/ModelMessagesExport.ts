/**
 * Exporter to AI SDK `ModelMessage[]` as JSON-safe values: the messages
 * unchanged except that bytes (`Uint8Array`, `ArrayBuffer`) become base64
 * strings and `URL` objects their text, so `JSON.stringify` keeps them.
 * The result is what `generateText({ messages })` takes.
 *
 * @since 0.1.0
 */
import type { Message } from "@context-engine/core"
import { type ExportInput, messagesOf } from "./ExportInput.ts"

const jsonSafe = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return Buffer.from(value).toString("base64")
  if (value instanceof ArrayBuffer) return Buffer.from(new Uint8Array(value)).toString("base64")
  if (value instanceof URL) return value.toString()
  if (Array.isArray(value)) return value.map(jsonSafe)
  if (typeof value === "object" && value !== null) {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) if (inner !== undefined) out[key] = jsonSafe(inner)
    return out
  }
  return value
}

/**
 * Converts messages (or a transcript's message entries) to JSON-safe
 * `ModelMessage[]`.
 *
 * @category exporters
 */
export const toModelMessages = (input: ExportInput): Array<Message.Message> =>
  messagesOf(input).map((message) => jsonSafe(message) as Message.Message)
