/**
 * Text helpers the offline summarizer's sections share: one clip rule, one
 * sentence split, one "what the agent said" reader.
 *
 * @since 0.1.0
 */
import { type Message, MessageParts } from "@context-engine/core"

/**
 * `text` on one line (runs of whitespace become one space), cut to at most
 * `max` characters with a trailing `…` when it was longer.
 *
 * @category getters
 */
export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

/**
 * Sentences of `text`: split after `.`, `!` or `?` and at line breaks, list
 * markers removed, empty ones dropped.
 *
 * @category getters
 */
export const sentences = (text: string): Array<string> =>
  text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.replace(/^(?:[-*>]\s+|\d+[.)]\s+)+/, "").trim())
    .filter((sentence) => sentence.length > 0)

/**
 * The text parts of an assistant message joined by newlines; `""` for any other role.
 *
 * @category getters
 */
export const assistantText = (message: Message.Message): string =>
  message.role === "assistant" ? MessageParts.textOf(message.content) : ""
