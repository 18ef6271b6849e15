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
 * The inline code spans of one line as CommonMark reads them, as `[start, end)` ranges: a run of backticks opens
 * a span that the next run of the same length closes; a run no such run follows is literal backticks (a
 * flattened fence's unclosed ```` ``` ````), not a span.
 */
const codeSpans = (flat: string): Array<readonly [number, number]> => {
  const runs = [...flat.matchAll(/`+/g)].map((run) => [run.index, run[0].length] as const)
  // The next run of the same length after each run, found from the end: one pass, however many runs.
  const next = new Array<number>(runs.length).fill(-1)
  const latest = new Map<number, number>()
  for (let index = runs.length - 1; index >= 0; index--) {
    next[index] = latest.get(runs[index]![1]) ?? -1
    latest.set(runs[index]![1], index)
  }
  const spans: Array<readonly [number, number]> = []
  for (let open = 0; open < runs.length; open++) {
    const close = next[open]!
    if (close < 0) continue
    spans.push([runs[open]![0], runs[close]![0] + runs[close]![1]])
    open = close
  }
  return spans
}

/**
 * Where one line of text is cut to keep at most `limit` characters, and the backticks that close a code span the
 * cut lies in (`""` outside one): at a space, so no word is split; outside inline code spans ({@link codeSpans}:
 * half a span leaves the rest of the markdown in code); at the last clause or sentence end when one lies in the
 * last {@link CLAUSE_WINDOW} of the allowance — the kept part then says a whole thought. A long span (a command,
 * a flattened code block) the last space outside spans would give up more than that share of the allowance for
 * is cut at a space inside it and closed; a span without a space (an identifier, a path) is never cut. A single
 * token longer than the allowance (a path, a URL) is cut where a word of it ends (`/Users/me/proj/` of a longer
 * path), else at `limit`.
 */
const cutPoint = (flat: string, limit: number): { readonly end: number; readonly close: string } => {
  const spans = codeSpans(flat)
  const spanAt = (at: number) => spans.find(([start, end]) => start < at && at < end)
  let space = -1
  let clause = -1
  let inner: { end: number; close: string } | undefined
  let wordEnd = -1
  let next = 0
  for (let at = 1; at <= limit && at < flat.length; at++) {
    while (next < spans.length && spans[next]![1] <= at) next++
    const span = next < spans.length && spans[next]![0] < at ? spans[next] : undefined
    if (span === undefined && !(WORD_CHAR_RE.test(flat[at - 1]!) && WORD_CHAR_RE.test(flat[at]!))) wordEnd = at
    if (flat[at] !== " ") continue
    if (span !== undefined) {
      const length = /^`+/.exec(flat.slice(span[0]))![0].length
      if (at + length <= limit) inner = { end: at, close: "`".repeat(length) }
    } else {
      space = at
      if (CLAUSE_END_RE.test(flat.slice(Math.max(0, at - 2), at))) clause = at
    }
  }
  const enough = limit * (1 - CLAUSE_WINDOW)
  if (clause >= enough) return { end: clause, close: "" }
  if (inner !== undefined && inner.end > space && space < enough) return inner
  if (space > 0) return { end: space, close: "" }
  if (wordEnd > 0) return { end: wordEnd, close: "" }
  const open = spanAt(limit)
  return { end: limit, close: open === undefined ? "" : /^`+/.exec(flat.slice(open[0]))![0] }
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
 * before a spaced ` …`), so a quote still matches where it came from. A long
 * code span cut at a space inside it is closed before the `…`
 * (`` `npm run build`… ``), the ellipsis outside the code as Done's commands show it.
 *
 * @category getters
 */
export const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  if (flat.length <= max) return flat
  const cut = (limit: number) => {
    const { end, close } = cutPoint(flat, limit)
    const kept = flat
      .slice(0, end)
      .replace(/(?:\s[\u2013\u2014-]|[;:,])$/u, "")
      .trimEnd()
    return close ? `${kept}${close}…` : /[.!?]$/.test(kept) ? `${kept} …` : `${kept}…`
  }
  // The mark (and a closing run of backticks) takes room: the allowance shrinks until the cut text fits.
  for (let limit = max - 1; ; limit--) {
    const clipped = cut(limit)
    if (clipped.length <= max || limit <= 1) return clipped
  }
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
 * left open ({@link codeSpans}) — the mirror of
 * {@link cutPoint}; at the allowance's start when no such space lies in it.
 */
const tailStart = (flat: string, length: number): number => {
  const from = flat.length - length
  const spans = codeSpans(flat)
  for (let at = from; at < flat.length; at++)
    if (flat[at - 1] === " " && !spans.some(([start, end]) => start < at && at < end)) return at
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
  // Room for the backticks that close a span the head's cut lies in.
  const { end, close } = cutPoint(flat, flat.slice(0, head).includes("`") ? head - 3 : head)
  return `${flat.slice(0, end).trimEnd()}${close} … ${flat.slice(tailStart(flat, max - 3 - head)).trimStart()}`
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
