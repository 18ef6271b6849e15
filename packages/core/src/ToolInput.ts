/**
 * What a tool call's input names, read by field: its file path, its shell
 * command, its own description and a todo / plan tool's items. Agents name
 * the same thing with different keys (pi `path`, Claude Code `file_path`,
 * Gemini CLI `filePath`; `command` / `cmd`); each getter lists the keys it
 * reads. `ToolActions` classifies calls by them, `EditChange` reads edits'
 * text off the same fields.
 *
 * @since 0.6.0
 */
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import * as ShellCommand from "./ShellCommand.ts"

/**
 * One item of a todo or plan tool call.
 *
 * @category models
 */
export interface TodoItem {
  readonly text: string
  readonly status: "pending" | "in_progress" | "completed"
}

/**
 * The fields of a tool call's input when it is a JSON object; `undefined`
 * for any other input (a string, an array, `null`).
 *
 * @category getters
 */
export const fieldsOf = (input: unknown): Record<string, unknown> | undefined =>
  typeof input === "object" && input !== null && !Array.isArray(input) ? (input as Record<string, unknown>) : undefined

/**
 * The first of `keys` whose value in the input is a non-blank string, trimmed.
 *
 * @category getters
 */
export const stringField = (input: unknown, keys: ReadonlyArray<string>): string | undefined => {
  const fields = fieldsOf(input)
  if (!fields) return undefined
  for (const key of keys) {
    const value = fields[key]
    if (typeof value === "string" && value.trim().length > 0) return value.trim()
  }
  return undefined
}

/**
 * The file path of a tool call's input (`path`, `file_path`, `filePath`, …).
 *
 * @category getters
 */
export const inputPath = (input: unknown): string | undefined =>
  stringField(input, ["path", "file_path", "filePath", "file", "filename", "notebook_path"])

/**
 * A tool call's shell script (`command`, `cmd`, `script`), whole; `undefined` for editor sub-commands (`view`,
 * `create`, `str_replace`, `insert`).
 *
 * @category getters
 */
export const inputScript = (input: unknown): string | undefined => {
  const raw = stringField(input, ["command", "cmd", "script"])
  return raw === undefined || /^(?:view|create|str_replace|insert|undo_edit)$/.test(raw) ? undefined : raw
}

/**
 * The line that says what a tool call's shell script does ({@link inputScript}; `ShellCommand.headline`: its
 * first line of the strongest kind, here-document bodies and comments left out).
 *
 * @category getters
 */
export const inputCommandLine = (input: unknown): string | undefined => {
  const script = inputScript(input)
  return script === undefined ? undefined : ShellCommand.headline(script)
}

/**
 * {@link inputCommandLine} clipped to an identifier's length
 * (`IdentifierExtraction.MAX_IDENTIFIER_CHARS`).
 *
 * @category getters
 */
export const inputCommand = (input: unknown): string | undefined =>
  inputCommandLine(input)?.slice(0, IdentifierExtraction.MAX_IDENTIFIER_CHARS)

const STATUS: Record<string, TodoItem["status"]> = {
  completed: "completed",
  complete: "completed",
  done: "completed",
  in_progress: "in_progress",
  "in-progress": "in_progress",
  active: "in_progress",
  pending: "pending",
  todo: "pending",
  open: "pending"
}

/**
 * The todo / plan items of a tool call's input: the first array of objects
 * holding a text (`content`, `step`, `title`, `text`, `task`, `description`)
 * and a `status`.
 *
 * @category getters
 */
export const todoItems = (input: unknown): Array<TodoItem> | undefined => {
  const fields = fieldsOf(input)
  if (!fields) return undefined
  for (const value of Object.values(fields)) {
    if (!Array.isArray(value)) continue
    const items = value.flatMap((item): Array<TodoItem> => {
      const text = stringField(item, ["content", "step", "title", "text", "task", "description"])
      const status = stringField(item, ["status", "state"])?.toLowerCase()
      const done = fieldsOf(item)?.done === true || fieldsOf(item)?.completed === true
      return text === undefined
        ? []
        : [{ text, status: done ? "completed" : ((status ? STATUS[status] : undefined) ?? "pending") }]
    })
    if (items.length > 0) return items
  }
  return undefined
}
