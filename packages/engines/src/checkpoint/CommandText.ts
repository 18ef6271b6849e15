/**
 * How a handoff's Done item shows a shell command: in at most a given
 * number of characters, by verbatim pieces each quoted on its own, with the
 * ellipses outside the quotes (`ShellWords.abbreviated`: a long path shown by
 * its last two components), so the verb, flags and SQL survive a cut and
 * every quote still occurs in the transcript — what validation's
 * no-invented-actions check reads; and the pieces read back off a Done item,
 * so its short form can shorten them again (`Progress.shortDone`) and a
 * re-run be told (`Fit`).
 *
 * @since 0.6.0
 */
import { IdentifierExtraction, ShellDirectory, ShellWords, type ToolActions } from "@context-engine/core"

/** Longest command a Done item shows, in characters (its pieces and their gaps: `ShellWords.abbreviated`). */
const COMMAND_CHARS = 139

/** A piece of a command in backticks, or in double quotes when it holds a backtick (as `Progress`'s code quotes). */
const quoted = (piece: string): string => (piece.includes("`") ? `"${piece}"` : `\`${piece}\``)

/**
 * A command in at most `maxChars` characters (see the module docs): `` `sqlite3` …`/data/books.sqlite "DELETE
 * FROM …"` ``.
 *
 * @category getters
 */
export const shown = (command: string | ShellWords.Abbreviation, maxChars = COMMAND_CHARS): string => {
  const { pieces, cut } = ShellWords.abbreviated(
    typeof command === "string" ? command.trim() : command.pieces,
    maxChars
  )
  const quotes = pieces.map((piece, index) => `${index > 0 ? " …" : ""}${piece.length > 0 ? quoted(piece) : ""}`)
  return `${quotes.join("").trimStart()}${cut || (typeof command !== "string" && command.cut) ? "…" : ""}`
}

/**
 * A call's command as one piece, cut when it is as long as `ToolActions` clips a command to
 * (`IdentifierExtraction.MAX_IDENTIFIER_CHARS`): its end is not known.
 *
 * @category getters
 */
export const clipped = (command: string): ShellWords.Abbreviation => ({
  pieces: [command.trim()],
  cut: command.length >= IdentifierExtraction.MAX_IDENTIFIER_CHARS
})

/** A Done item that opens with a command as {@link shown} shows it: its lead, its quoted pieces, a final cut. */
const COMMAND_ITEM_RE = /^((?:the user )?ran |checks pass: )((?:\s?…?(?:`[^`]*`|"[^"]*"))+)(…?)/

/** The pieces of a command {@link shown} shows, each gap an ellipsis between two quotes. */
const piecesOf = (text: string): Array<string> => {
  const pieces: Array<string> = []
  for (const [, gap, piece] of text.matchAll(/\s?(…)?(`[^`]*`|"[^"]*")/g)) {
    if (gap !== undefined && pieces.length === 0) pieces.push("")
    pieces.push(piece!.slice(1, -1))
  }
  return pieces
}

/**
 * The command a run's Done item shows (`ran …`, `the user ran …`), its pieces read back; `undefined` for any other
 * item.
 *
 * @category getters
 */
export const ofItem = (item: string): ShellWords.Abbreviation | undefined => {
  const command = COMMAND_ITEM_RE.exec(item)
  return command === null || command[1] === "checks pass: "
    ? undefined
    : { pieces: piecesOf(command[2]!), cut: command[3]!.length > 0 }
}

/**
 * The opening of a Done item that shows a command (a run or a passing check), shown again in at most `maxChars`
 * characters with its lead (`ran `), and how many characters of the item it replaces; `undefined` for any other
 * item.
 *
 * @category getters
 */
export const shortened = (item: string, maxChars: number): { text: string; length: number } | undefined => {
  const command = COMMAND_ITEM_RE.exec(item)
  if (command === null) return undefined
  const [whole, lead, text, cut] = command as unknown as [string, string, string, string]
  return {
    text: `${lead}${shown({ pieces: piecesOf(text), cut: cut.length > 0 }, maxChars - lead.length)}`,
    length: whole.length
  }
}

/**
 * Where a shell call started when an earlier call's `cd` left its shell elsewhere (`ToolActions.Action`'s
 * `directory`): `` in `packages/core` ``, so a root `npm test` and a package's read as two runs; nothing for the
 * session's own directory or one we cannot name (`ShellDirectory.UNKNOWN_PREFIX`).
 *
 * @category getters
 */
export const directoryOf = (action: ToolActions.Action): string =>
  action.directory === undefined || action.directory.startsWith(ShellDirectory.UNKNOWN_PREFIX)
    ? ""
    : ` in ${quoted(action.directory)}`

/**
 * A run's command as a Done item shows it ({@link shown}) and where it started ({@link directoryOf}).
 *
 * @category getters
 */
export const shownRun = (action: ToolActions.Action): string =>
  `${shown(action.command ?? action.toolName)}${directoryOf(action)}`
