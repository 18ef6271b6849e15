/**
 * Text helpers the offline summarizer's sections share: one clip rule, one
 * sentence split, one "what the agent said" reader.
 *
 * @since 0.1.0
 */
import { type Message, MessageParts } from "@context-engine/core"

/** Longest quoted item of a checkpoint list, in characters. */
export const ITEM_CHARS = 220

/**
 * A command, path or line of code in backticks: a verbatim prefix (the ellipsis outside the quotes), so it still
 * occurs in the transcript; `head` takes the prefix (by default the first 139 characters of a longer text).
 *
 * @category getters
 */
export const code = (
  text: string,
  head = (flat: string) => (flat.length <= 140 ? flat : flat.slice(0, 139))
): string => {
  const flat = text.trim()
  const kept = head(flat)
  return kept.includes("`") ? `"${kept}"${kept === flat ? "" : "…"}` : `\`${kept}\`${kept === flat ? "" : "…"}`
}

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

/** A character of a word or identifier (letters, digits, `_`, `$`): a cut between two of them splits it. */
const WORD_CHAR_RE = /[\p{L}\p{N}_$]/u

/**
 * The longest prefix of `text` (trimmed; one line of code, its spacing kept
 * so the prefix still occurs where it was quoted from) of at most `max`
 * characters that ends between words — never inside an identifier or a
 * word — with trailing spaces trimmed; the whole text when it fits. A first
 * word longer than `max` is kept whole: half an identifier names nothing.
 *
 * @category getters
 */
export const wholeWords = (text: string, max: number): string => {
  const flat = text.trim()
  if (flat.length <= max) return flat
  const inWord = (at: number) =>
    (WORD_CHAR_RE.test(flat[at - 1]!) && WORD_CHAR_RE.test(flat[at]!)) || /[\uD800-\uDBFF]/.test(flat[at - 1]!)
  let end = max
  while (end > 0 && inWord(end)) end--
  if (end > 0) return flat.slice(0, end).trimEnd()
  const first = flat.search(/[^\p{L}\p{N}_$]/u)
  return first < 0 ? flat : flat.slice(0, first)
}

/** How the handoff points at a message it does not repeat. */
export const KEPT_NOTE = "kept verbatim after this checkpoint"

/** Longest opening of a kept message that {@link keptPointer} quotes, in characters. */
const LOCATOR_CHARS = 40

/**
 * A pointer at a user message kept verbatim after the checkpoint, for a
 * parenthesis: its entry id (the transcript's name for it), {@link KEPT_NOTE},
 * and its opening words — the next model never sees entry ids, and the
 * messages after a checkpoint can hold many user messages, so the opening is
 * how it finds the one meant. The opening is a locator, not a repeat of what
 * the kept message carries (issue #11 requirement 3): at most 40 characters
 * and at most half the message, cut between words ({@link wholeWords}), with
 * `…`; a message too short to leave anything out gets no opening.
 *
 * @category constructors
 */
export const keptPointer = (entryId: string, spoken: string): string => {
  const flat = spoken.replace(/\s+/g, " ").trim()
  const opening = wholeWords(flat, Math.min(LOCATOR_CHARS, Math.floor(flat.length / 2)))
  const pointer = `${entryId}, ${KEPT_NOTE}`
  return opening.length === 0 || opening.length > LOCATOR_CHARS || opening.length >= flat.length
    ? pointer
    : `${pointer}: the user message that begins "${opening}…"`
}

/**
 * `text` on one line cut to at most `max` characters by dropping its middle
 * (` … `), keeping the first two thirds and the end: a long user message
 * states its ask at its start or at its end, with a paste or a template
 * between — Codex keeps a long user message the same way when it compacts
 * (`truncate_text` keeps a message's beginning and end).
 *
 * @category getters
 */
export const clipEnds = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (flat.length <= max) return flat
  const head = Math.ceil((max - 3) * (2 / 3))
  return `${flat.slice(0, head).trimEnd()} … ${flat.slice(flat.length - (max - 3 - head)).trimStart()}`
}

/**
 * Sentences of `text`: split after `.`, `!` or `?` (not after a numbered
 * list marker, "1. Execute bash", which opens its item) and at line breaks,
 * list markers removed, empty ones dropped. A line break between a word (or a
 * comma) and a line that goes on in lower case is a hard wrap inside a
 * sentence (console transcripts wrap at the terminal's width), not a break.
 *
 * @category getters
 */
export const sentences = (text: string): Array<string> =>
  text
    .split(/(?<=[.!?])(?<!(?:^|\n)[ \t]*\d{1,3}\.)\s+|\n+(?![ \t]*\p{Ll})|(?<![\p{L}\p{N},;])\n+/u)
    .map((sentence) =>
      sentence
        .replace(/[ \t]*\n[ \t]*/g, " ")
        .replace(/^(?:[-*>]\s+|\d+[.)]\s+)+/, "")
        .trim()
    )
    .filter((sentence) => sentence.length > 0)

/**
 * The text parts of an assistant message joined by newlines; `""` for any other role.
 *
 * @category getters
 */
export const assistantText = (message: Message.Message): string =>
  message.role === "assistant" ? MessageParts.textOf(message.content) : ""
