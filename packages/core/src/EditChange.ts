/**
 * What one file edit changed, in one line — the line a handoff quotes so the
 * next model knows what the file now holds without the edit's call in view.
 *
 * Every edit format pairs the text it replaces with its new text; the
 * change is read off that pair ({@link between}):
 * - tool-call edits: pi's `edit` (`oldText` / `newText`), Claude Code's
 *   `Edit` and Gemini CLI's `replace` (`old_string` / `new_string`), Claude
 *   Code's `MultiEdit` (`edits[]` of those), the `str_replace_editor` tool
 *   (`old_str` / `new_str`, `file_text` for `create`), and whole-file writes
 *   (`content`: nothing replaced) — {@link ofToolInput};
 * - a text action's edit block: SWE-agent 0.x's `edit N:M` followed by the
 *   new lines and `end_of_edit` replaces lines N to M as its file viewer last
 *   showed them — {@link ofTextEdit};
 * - edit blocks a harness applied from the model's reply: aider's
 *   `<<<<<<< SEARCH` (older `ORIGINAL`) / `=======` / `>>>>>>> REPLACE`
 *   (`UPDATED`) blocks, each after a line naming its file — {@link ofEditBlocks};
 * - the diff a console shows as an edit's result, when the console
 *   transcript kept only the call's one-line summary: numbered lines marked
 *   `-` (replaced) and `+` (new) — {@link ofDisplayedDiff}.
 *
 * @since 0.6.0
 */
import type { Message } from "./Message.ts"
import * as ToolInput from "./ToolInput.ts"
import * as UserSpeech from "./UserSpeech.ts"

/**
 * One line an edit brought (`adds`), or, for an edit that only took lines
 * out, the first line it removed (`removes`). `line` is the line as the
 * edit wrote it (so it occurs verbatim in the transcript), trimmed, at most
 * {@link MAX_LINE_CHARS} characters.
 *
 * @category models
 */
export interface Change {
  readonly verb: "adds" | "removes"
  readonly line: string
}

/**
 * Longest line kept, in characters: a minified or generated line says
 * nothing more after this; a checkpoint clips it shorter anyway.
 *
 * @category constants
 */
export const MAX_LINE_CHARS = 400

/** A line that says something: two letters or digits at least (`x = 1`; not `]`, `) {`, `"""`, a lone `x`). */
const MEANINGFUL_RE = /[\p{L}\p{N}].*[\p{L}\p{N}]/u
/** Words of a line: identifiers and the words of its strings and comments. */
const WORD_RE = /[\p{L}_][\p{L}\p{N}_]*/gu

const linesOf = (text: string): Array<string> =>
  text
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => MEANINGFUL_RE.test(line))

/** A line compared by its words and symbols: a change of spacing inside it is no change. */
const key = (line: string): string => line.replace(/\s+/g, " ")

/** The first of `lines` not in `before`, preferring one with a word `before` lacks. */
const firstNew = (lines: ReadonlyArray<string>, before: ReadonlyArray<string>): string | undefined => {
  const held = new Set(before.map(key))
  const fresh = lines.filter((line) => !held.has(key(line)))
  const words = new Set(before.flatMap((line) => line.match(WORD_RE) ?? []))
  return fresh.find((line) => (line.match(WORD_RE) ?? []).some((word) => !words.has(word))) ?? fresh[0]
}

/**
 * What replacing `before` by `after` changed: the first meaningful line of
 * `after` that `before` does not hold, preferring the first that brings a
 * word `before` lacks — a line that only re-wraps, reorders or drops what
 * was there (a list with one item taken out) says less than the line that
 * brings the new name or condition. An edit that adds no line removes one:
 * the first meaningful line of `before` that `after` does not hold.
 * `undefined` when neither has such a line (a whitespace-only edit, or one
 * whose lines hold fewer than two letters or digits: `x` → `y`).
 *
 * @category constructors
 */
export const between = (before: string, after: string): Change | undefined => {
  const [old, fresh] = [linesOf(before), linesOf(after)]
  const added = firstNew(fresh, old)
  if (added !== undefined) return { verb: "adds", line: added.slice(0, MAX_LINE_CHARS) }
  const removed = firstNew(old, fresh)
  return removed === undefined ? undefined : { verb: "removes", line: removed.slice(0, MAX_LINE_CHARS) }
}

const BEFORE_KEYS = ["old_string", "oldText", "old_str", "old_text"] as const
const AFTER_KEYS = ["new_string", "newText", "new_str", "new_text", "content", "file_text"] as const

const field = (fields: Record<string, unknown>, keys: ReadonlyArray<string>): string | undefined => {
  for (const key of keys) if (typeof fields[key] === "string") return fields[key] as string
  return undefined
}

/**
 * The change of a tool-call edit's input: its replaced and new text (see
 * the module's list of field names); for a `MultiEdit`'s `edits`, the first
 * of them that changed a line. `undefined` for an input without new text.
 *
 * @category constructors
 */
export const ofToolInput = (input: unknown): Change | undefined => {
  const fields = ToolInput.fieldsOf(input)
  if (fields === undefined) return undefined
  const pairs = Array.isArray(fields.edits)
    ? fields.edits.flatMap((edit: unknown) => {
        const pair = ToolInput.fieldsOf(edit)
        return pair === undefined ? [] : [pair]
      })
    : [fields]
  for (const pair of pairs) {
    const after = field(pair, AFTER_KEYS)
    const change = after === undefined ? undefined : between(field(pair, BEFORE_KEYS) ?? "", after)
    if (change !== undefined) return change
  }
  return undefined
}

/** A text action's line range (`edit 287:296`), its first and last line captured. */
const RANGE_RE = /^\S+\s+(\d+):(\d+)\s*$/
/** SWE-agent's file viewer line: `287:    required_elements = [`. */
const SHOWN_LINE_RE = /^(\d+):(.*)$/gm
/** SWE-agent's terminator of an edit block's new lines. */
const END_OF_EDIT = "end_of_edit"

/**
 * Observations looked back through for the screen an edit's line numbers
 * refer to. SWE-agent's viewer reprints its window after every `open`,
 * `goto`, `scroll_*` and `edit`, so that screen is among the last few
 * observations; the bound keeps reading every edit of a session linear in
 * its length (issue #13: compaction must grow linearly), where an edit of
 * lines no screen showed would otherwise read back to the session's start.
 */
const SCREEN_LOOKBACK_MESSAGES = 50

/**
 * Lines `from`–`to` as the newest earlier observation that shows line
 * `from` showed them, within {@link SCREEN_LOOKBACK_MESSAGES} messages
 * (within one observation the last screen wins: SWE-agent's report of a
 * failed edit shows the rejected result first and "the original code
 * before your edit" last).
 */
const shownLines = (
  items: ReadonlyArray<{ readonly message: Message }>,
  index: number,
  from: number,
  to: number
): string => {
  for (let at = index - 1; at >= Math.max(0, index - SCREEN_LOOKBACK_MESSAGES); at--) {
    const message = items[at]!.message
    if (message.role !== "user") continue
    const shown = new Map<number, string>()
    for (const [, line, text] of UserSpeech.userText(message).matchAll(SHOWN_LINE_RE)) shown.set(Number(line), text!)
    if (!shown.has(from)) continue
    const lines: Array<string> = []
    for (let line = from; line <= to; line++) lines.push(shown.get(line) ?? "")
    return lines.join("\n")
  }
  return ""
}

/**
 * The change of a text action's edit block (`block`: the fenced command,
 * its first line the command, then the new lines up to `end_of_edit`) — the
 * new lines against lines N–M of the command's `N:M` range as the newest
 * earlier observation of `items` (before `index`, the action's message,
 * at most 50 messages back) showed them; against nothing when no such
 * observation showed them or the command has no range. `undefined` for a command without new lines.
 *
 * @category constructors
 */
export const ofTextEdit = (
  block: string,
  items: ReadonlyArray<{ readonly message: Message }>,
  index: number
): Change | undefined => {
  const [command = "", ...rest] = block.split("\n")
  const end = rest.findIndex((line) => line.trim() === END_OF_EDIT)
  const body = (end < 0 ? rest : rest.slice(0, end)).join("\n")
  if (!MEANINGFUL_RE.test(body)) return undefined
  const range = RANGE_RE.exec(command.trim())
  return between(range === null ? "" : shownLines(items, index, Number(range[1]), Number(range[2])), body)
}

/** The lines of an edit block: opener (`<<<<<<< SEARCH`), divider, closer (`>>>>>>> REPLACE`). */
const OPEN_RE = /^<{5,9} (?:SEARCH|ORIGINAL)\s*$/
const DIVIDER_RE = /^={5,9}\s*$/
const CLOSE_RE = /^>{5,9} (?:REPLACE|UPDATED)\s*$/
/** A fence line between an edit block's file name and its opener (```` ```python ````, aider's `<source>python`). */
const FENCE_RE = /^(?:```|<source>)/

/** A file name line as aider's edit-block parser reads it: a `:` after, `#` before, backticks and `*` around dropped. */
const fileName = (line: string): string =>
  line
    .trim()
    .replace(/:$/, "")
    .replace(/^#+/, "")
    .trim()
    .replace(/^[`*]+|[`*]+$/g, "")

const sameFile = (named: string, path: string): boolean =>
  named === path || path.endsWith(`/${named}`) || named.endsWith(`/${path}`)

/**
 * The change of the first edit block in `text` (a model's reply) for the
 * file `path` — the block's file is the nearest line before its opener that
 * is not a fence, matched to `path` by equality or a `/`-bounded suffix
 * either way (aider names a file by its repository-relative path) — that
 * changed a line. `undefined` when no block of the file did.
 *
 * @category constructors
 */
export const ofEditBlocks = (text: string, path: string): Change | undefined => {
  const lines = text.split("\n")
  for (let at = 0; at < lines.length; at++) {
    if (!OPEN_RE.test(lines[at]!.trim())) continue
    let named = at - 1
    while (named >= 0 && (lines[named]!.trim() === "" || FENCE_RE.test(lines[named]!.trim()))) named--
    const divider = lines.findIndex((line, index) => index > at && DIVIDER_RE.test(line.trim()))
    const close = lines.findIndex((line, index) => index > divider && CLOSE_RE.test(line.trim()))
    if (divider < 0 || close < 0) return undefined
    const change =
      named >= 0 && sameFile(fileName(lines[named]!), path)
        ? between(lines.slice(at + 1, divider).join("\n"), lines.slice(divider + 1, close).join("\n"))
        : undefined
    if (change !== undefined) return change
    at = close
  }
  return undefined
}

/** A numbered line of a displayed diff with a `-` / `+` marker after its gutter: the marker's column is group 1's length. */
const MARKED_LINE_RE = /^(\s*\d+\s+)[+-](?: |$)/

/**
 * The change a console's displayed diff shows (`result`: the edit's tool
 * result as a console transcript recorded it) — Claude Code's
 * `Updated <path> with 1 addition and 1 removal` followed by `   120 -  old`
 * / `   120 +  new` lines, Gemini CLI's `4    - old` / `4    + new`. The
 * marker sits in one column right after the line-number gutter: the
 * leftmost column where a numbered line holds `-` or `+` (a context line
 * whose own text starts with `- `, a markdown item, has its dash further
 * right, after the gutter's padding). `undefined` when no line is marked.
 * For edits only: a written file's display is its numbered content, where
 * a markdown item's dash right after the number reads like a marker.
 *
 * @category constructors
 */
export const ofDisplayedDiff = (result: string): Change | undefined => {
  const lines = result.split("\n")
  const columns = lines.flatMap((line) => {
    const marked = MARKED_LINE_RE.exec(line)
    return marked === null ? [] : [marked[1]!.length]
  })
  if (columns.length === 0) return undefined
  const column = Math.min(...columns)
  const side = (marker: string) =>
    lines
      .filter((line) => line[column] === marker && /^\s*\d+\s+$/.test(line.slice(0, column)))
      .map((line) => line.slice(column + 1))
      .join("\n")
  return between(side("-"), side("+"))
}
