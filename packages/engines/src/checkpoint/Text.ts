/**
 * Text helpers the offline summarizer's sections share: one clip rule, one
 * sentence split, one "what the agent said" reader.
 *
 * @since 0.1.0
 */
import { type Message, MessageParts } from "@context-engine/core"

/** Longest quoted item of a checkpoint list, in characters. */
export const ITEM_CHARS = 220

/** A character of a word or identifier (letters, digits, `_`, `$`): a cut between two of them splits it. */
const WORD_CHAR_RE = /[\p{L}\p{N}_$]/u

/** Share of a cut's allowance, at its end, where a clause or sentence end is preferred to the last space. */
const CLAUSE_WINDOW = 0.3
/** A clause or sentence end before a space: `.`, `!`, `?`, `;`, `:`, `,` closing a word, or a spaced dash. */
const CLAUSE_END_RE = /[\p{L}\p{N}_$)\]"'`*][.!?;:,]$|\s[\u2013\u2014-]$/u

/**
 * Where one line of text is cut to keep at most `limit` characters: at a
 * space, so no word is split; outside inline code spans (an odd count of
 * backticks before the cut leaves a span open, and the rest of the
 * markdown reads as code); at the last clause or sentence end when one lies
 * in the last {@link CLAUSE_WINDOW} of the allowance — the kept part then
 * says a whole thought. `open` is whether the cut lies inside a code span:
 * only when no space outside one lies before it (the text opens with a
 * span longer than the allowance), the span's words are kept up to a space.
 * A single token longer than the allowance (a path, a URL) is cut where a
 * word of it ends (`/Users/me/proj/` of a longer path), else at `limit`.
 */
const cutPoint = (flat: string, limit: number): { readonly end: number; readonly open: boolean } => {
  let ticks = 0
  let lastSpace = -1
  let lastClause = -1
  let lastAnySpace = -1
  let lastBreak = -1
  for (let at = 0; at <= limit && at < flat.length; at++) {
    if (at > 0 && ticks % 2 === 0 && !(WORD_CHAR_RE.test(flat[at - 1]!) && WORD_CHAR_RE.test(flat[at]!))) lastBreak = at
    if (flat[at] === " ") {
      lastAnySpace = at
      if (ticks % 2 === 0) {
        lastSpace = at
        if (CLAUSE_END_RE.test(flat.slice(Math.max(0, at - 2), at))) lastClause = at
      }
    }
    if (flat[at] === "`") ticks++
  }
  if (lastClause >= limit * (1 - CLAUSE_WINDOW)) return { end: lastClause, open: false }
  if (lastSpace > 0) return { end: lastSpace, open: false }
  if (lastAnySpace > 0) return { end: lastAnySpace, open: true }
  if (lastBreak > 0) return { end: lastBreak, open: false }
  return { end: limit, open: (flat.slice(0, limit).match(/`/g)?.length ?? 0) % 2 === 1 }
}

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
 * `max` characters with a trailing `…` when it was longer: the one rule for
 * cutting a checkpoint's text. The cut falls between words and outside
 * inline code spans, at a clause or sentence end when one lies near the end
 * of the allowance ({@link cutPoint}); the kept part is the text verbatim (a
 * clause's closing `,` / `;` / `:` / dash dropped, a sentence's `.` kept
 * before a spaced ` …`), so a quote still matches where it came from. A code
 * span the text opens with and cannot keep whole is closed before the `…`
 * (`` `npm run build`… ``), the ellipsis outside the code as Done's commands show it.
 *
 * @category getters
 */
export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (flat.length <= max) return flat
  const cut = (limit: number) => {
    const { end, open } = cutPoint(flat, limit)
    const kept = flat
      .slice(0, end)
      .replace(/(?:\s[\u2013\u2014-]|[;:,])$/u, "")
      .trimEnd()
    return open ? `${kept}\`…` : /[.!?]$/.test(kept) ? `${kept} …` : `${kept}…`
  }
  const clipped = cut(max - 1)
  return clipped.length <= max ? clipped : cut(max - 2)
}

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
 * Where the kept end of one line starts when at most `length` of its last
 * characters are kept: after a space, so no word is split, with no code span
 * left open (an even count of backticks after it) — the mirror of
 * {@link cutPoint}; at the allowance's start when no such space lies in it.
 */
const tailStart = (flat: string, length: number): number => {
  const from = flat.length - length
  for (let at = from; at < flat.length; at++)
    if (flat[at - 1] === " " && (flat.slice(at).match(/`/g)?.length ?? 0) % 2 === 0) return at
  return from
}

/**
 * `text` on one line cut to at most `max` characters by dropping its middle
 * (` … `), keeping the first two thirds and the end: a long user message
 * states its ask at its start or at its end, with a paste or a template
 * between — Codex keeps a long user message the same way when it compacts
 * (`truncate_text` keeps a message's beginning and end). Both cuts fall
 * between words and outside code spans, as {@link clip}'s do.
 *
 * @category getters
 */
export const clipEnds = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (flat.length <= max) return flat
  const head = Math.ceil((max - 3) * (2 / 3))
  // One character less when the head holds a backtick: room to close a span the cut leaves open.
  const { end, open } = cutPoint(flat, head - (flat.slice(0, head).includes("`") ? 1 : 0))
  return `${flat.slice(0, end).trimEnd()}${open ? "`" : ""} … ${flat.slice(tailStart(flat, max - 3 - head)).trimStart()}`
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
