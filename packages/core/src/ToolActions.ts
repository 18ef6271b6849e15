/**
 * What the agent did, read off its tool calls and their results: each call
 * classified as work (edit, write, create, commit, branch, other command), a
 * check (a test, type-check, lint or build run), staging, a read-only look,
 * or a plan / todo update (shell commands by `ShellCommand`), with its
 * outcome (ok, failed with the first error line, or unknown when no result
 * was recorded).
 *
 * File classification follows Pi's `extractFileOpsFromMessage` (read tools →
 * read files; edit / write tools → modified files; the read tools by name are
 * `ReadTools`). Todo and plan tools are
 * Claude Code's `TodoWrite`, Codex's `update_plan` and pi's todo tools: any
 * tool whose name says todo or plan and whose input holds a list of items with
 * a status.
 *
 * Text-action agents (SWE-agent 0.x) write the command at the end of their
 * response and get its output back as a user-role message; those commands
 * are actions too (`textAction`), classified by the command's first word.
 * Edits a harness applied from the model's text (aider) are actions too,
 * read off the harness's output (`HarnessOutput`), and so are the files the
 * sub-agents a call started changed (`SubAgentWork`).
 *
 * @since 0.2.0
 */
import * as ApplyPatch from "./ApplyPatch.ts"
import * as CheckRun from "./CheckRun.ts"
import * as EditChange from "./EditChange.ts"
import * as HarnessOutput from "./HarnessOutput.ts"
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import type { Message, ToolCallPart } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"
import * as ReadTools from "./ReadTools.ts"
import * as ShellCommand from "./ShellCommand.ts"
import * as ShellDirectory from "./ShellDirectory.ts"
import * as ToolInput from "./ToolInput.ts"
import * as ToolOutcome from "./ToolOutcome.ts"
import * as ToolPairing from "./ToolPairing.ts"
import * as UserSpeech from "./UserSpeech.ts"

/**
 * One message with the transcript entry it came from.
 *
 * @category models
 */
export interface Item {
  readonly entryId: string
  readonly message: Message
  /** What the agent's harness printed after the message, unsent to the model (`HarnessOutput.byMessage`). */
  readonly harnessOutput?: string | undefined
  /** The tool calls and results of the sub-agents the message's calls started (`SubAgentWork.byMessage`). */
  readonly subAgentMessages?: ReadonlyArray<Message> | undefined
}

/**
 * How one tool call ended (`ToolOutcome.Outcome`).
 *
 * @category models
 */
export type Outcome = ToolOutcome.Outcome

/**
 * One classified tool call.
 *
 * @category models
 */
export interface Action {
  readonly entryId: string
  readonly toolName: string
  /** `check`: tests, type-check, lint, build; `stage`: git's index only (`ShellCommand.kindOf` reads a command). */
  readonly kind: "edit" | "create" | "read" | "command" | "check" | "stage" | "look" | "todo" | "other"
  /** The file path, for edit / create / read. */
  readonly path?: string | undefined
  /** The first line of a shell command. */
  readonly command?: string | undefined
  /** Where a shell call started when not where the session did (`ShellDirectory`: an earlier call's kept `cd`). */
  readonly directory?: string | undefined
  readonly outcome: Outcome
  /** Todo / plan items, for `todo`. */
  readonly todos?: ReadonlyArray<ToolInput.TodoItem> | undefined
  /**
   * The call's own short description of what it does, when its input has
   * one (`description`: Claude Code's `Task` "short (3-5 word) description
   * of the task", its `Bash` description).
   */
  readonly description?: string | undefined
  /** For an edit or create: what it changed (`EditChange`: the first line it brought), when its input shows it. */
  readonly change?: EditChange.Change | undefined
  /** Not the message's own call: an edit a harness reported (`HarnessOutput.editActions`), a sub-agent's change. */
  readonly source?: "harness-output" | "sub-agent" | undefined
  /** `path` is as a console's tool line showed it ({@link fromSummary}), which may shorten it (Gemini CLI). */
  readonly pathShown?: true | undefined
}

const CREATE_TOOL_RE = /(?:^write|create|new_?file)/i
const TODO_TOOL_RE = /todo|plan/i

export { inputCommand, inputPath, type TodoItem, todoItems } from "./ToolInput.ts"

/** Shell tools by name (Claude Code `Bash`, Gemini CLI `Shell`, Codex `shell`, `run_shell_command`, `exec`, `terminal`). */
const SHELL_TOOL_RE =
  /^(?:bash|shell|sh|run_shell_command|exec(?:ute)?(?:_command)?|terminal|run_terminal_cmd|command)$/i

/** A Gemini CLI write tool's line: `Writing to <path>` (WriteFile), `<path>: <old…> => <new…>` (Edit); `pathShown`. */
const GEMINI_WRITE_SUMMARY_RE = /^(?:Writing to (\S+)$|(\S+?): [\s\S]* => )/

/**
 * The path or command of a console transcript's tool call: console logs show only a one-line summary of the call
 * (`Update(src/a.py)`, `Bash(git status)`, `Shell git status (…)`, `Edit src/a.py: old… => new…`), imported as
 * `{ summary }`. A shell tool's summary holds its command (`ShellCommand.fromDisplay`); a file tool's one-token
 * summary is its path, and so is the path of a write tool's Gemini CLI description ({@link GEMINI_WRITE_SUMMARY_RE}).
 */
const fromSummary = (toolName: string, input: unknown): { path?: string; command?: string } => {
  const summary = ToolInput.stringField(input, ["summary"])
  if (summary === undefined || ToolInput.inputPath(input) !== undefined || ToolInput.inputCommand(input) !== undefined)
    return {}
  const line = summary.split("\n")[0]!
  if (SHELL_TOOL_RE.test(toolName))
    return { command: ShellCommand.fromDisplay(line).slice(0, IdentifierExtraction.MAX_IDENTIFIER_CHARS) }
  const described = ReadTools.isWriteTool(toolName) ? GEMINI_WRITE_SUMMARY_RE.exec(summary.trim()) : null
  const named = described?.[1] ?? described?.[2]
  if (named !== undefined && /[./]/.test(named)) return { path: named }
  const token = summary.split(/\s/)[0]!
  return (ReadTools.isWriteTool(toolName) || ReadTools.isReadTool(toolName) || /^read/i.test(toolName)) &&
    /[./]/.test(token) &&
    !/\s/.test(summary.trim())
    ? { path: token }
    : {}
}

const kindOf = (toolName: string, input: unknown): Action["kind"] => {
  const summarized = fromSummary(toolName, input)
  const path = ToolInput.inputPath(input) ?? summarized.path
  // Classified by the whole script: a statement, a later line or a side effect past the clipped length counts.
  const command = scriptLine(input) ?? summarized.command
  const sub = ToolInput.stringField(input, ["command"])
  if (TODO_TOOL_RE.test(toolName) && ToolInput.todoItems(input) !== undefined) return "todo"
  if (path !== undefined && ReadTools.isWriteTool(toolName) && sub !== "view")
    return CREATE_TOOL_RE.test(toolName) || sub === "create" ? "create" : "edit"
  // A directory tool's path is where it looks (Claude Code's Glob and LS, pi's ls / find): no file was read.
  if (path !== undefined && ReadTools.isDirectoryTool(toolName)) return "look"
  // A search's scope is where it looks, unless it names a file (`Grep(/repo)`, `Search(…, path: "/repo/src")`).
  if (path !== undefined && ReadTools.isSearchTool(toolName) && !ReadTools.looksLikeFile(path)) return "look"
  if (path !== undefined && (ReadTools.isReadTool(toolName) || sub === "view")) return "read"
  if (ReadTools.isReadTool(toolName)) return "look"
  if (command !== undefined)
    // An in-place edit by shell (`sed -i … a.ts`) is an edit of the file it names (`ShellCommand.editedFiles`).
    return ShellCommand.editedFiles(command).length > 0 ? "edit" : ShellCommand.kindOf(command)
  return "other"
}

/** A tool call's shell script as one command line (`ShellCommand.asLine`), to classify it by. */
const scriptLine = (input: unknown): string | undefined => {
  const script = ToolInput.inputScript(input)
  return script === undefined ? undefined : ShellCommand.asLine(script)
}

/** The files a shell call edits in place, for an `edit` that names no path of its own (`ShellCommand.editedFiles`). */
const shellEditPaths = (kind: Action["kind"], command: string | undefined): Array<string | undefined> =>
  kind === "edit" && command !== undefined ? ShellCommand.editedFiles(command) : [undefined]

/** A response that ends with a fenced code block: the block's text. */
const FENCE_AT_END_RE = /```[^\n`]*\n([\s\S]*?)\n?```\s*$/
/** The file a text-action agent's file viewer shows (SWE-agent's "[File: p (n lines total)]" screen, "(Open file: p)" footer). */
const SHOWN_FILE_RE = /^\[File: ([^\]\n(]+?)(?: \(\d+ lines total\))?\]|\(Open file: ([^)\n]+)\)/m

/** A check's outcome read off its output when a pipe filter hid its exit status (`CheckRun.shownOutcome`). */
const judged = (
  command: string | undefined,
  { outcome, text }: ToolOutcome.Result = { outcome: { _tag: "unknown" }, text: "" }
) => (command === undefined ? undefined : CheckRun.shownOutcome(command, outcome, text)) ?? outcome

const hasToolCall = (message: Message): boolean =>
  typeof message.content !== "string" && message.content.some((part) => part.type === "tool-call")

/**
 * The outcome of a text action read off its observation: failed when the
 * observation's first line reports an error (SWE-agent's "Your proposed edit
 * has introduced new syntax error(s)"), or, unless it is a file viewer's
 * screen (whose body is file content, not output), when it holds a failure
 * marker (`ToolOutcome.hasFailureMarker`: a traceback, "error: ", an exit code).
 */
const observedOutcome = (observation: string): Outcome => {
  const lines = observation
    .trim()
    .split("\n")
    .filter((line) => line.trim().length > 0)
  const screen = SHOWN_FILE_RE.test(lines[0] ?? "") && (lines[0] ?? "").startsWith("[File:")
  const failed =
    ToolOutcome.saysError(lines[0] ?? "") || (!screen && ToolOutcome.hasFailureMarker(observation.slice(0, 20_000)))
  if (!failed) return { _tag: "ok", text: observation }
  const error =
    IdentifierExtraction.fromText(observation.slice(0, 20_000)).errors[0] ??
    lines.find((line) => ToolOutcome.saysError(line)) ??
    lines[0] ??
    "error"
  return { _tag: "failed", error: error.trim() }
}

/**
 * The action of a text-action agent's response, or `undefined`. Agents without structured tool calls (SWE-agent
 * 0.x's `ThoughtActionParser`: the command is the fenced code block that ends the response) get the command's output
 * back as the next user-role message. A response counts as an action only when it has no tool call, ends with a
 * fenced block, and the next message is user-role output — an observation or a pasted log (`UserSpeech.classify`),
 * never the user's words nor a command the user ran themselves; an observation already cleared to a placeholder no
 * longer shows what happened, so its command is not read as an action. The command is the block's first line; its
 * first word names the tool (`create`, `edit`, `open`, `python`…) and is classified like a tool name; a file tool's
 * path is its first argument when that looks like a path, else the file the observation's viewer shows (an `edit
 * 12:15` edits the open file), in full as the viewer shows it.
 */
const textAction = (items: ReadonlyArray<Item>, index: number): Action | undefined => {
  const [item, next] = [items[index]!, items[index + 1]]
  const message = item.message
  if (message.role !== "assistant" || hasToolCall(message) || next?.message.role !== "user") return undefined
  const text = MessageParts.textOf(message.content).trimEnd()
  if (!text.endsWith("```")) return undefined
  const observation = UserSpeech.userText(next.message)
  const kind = UserSpeech.classify(observation)
  if ((kind !== "observation" && kind !== "pasted-log") || UserSpeech.isClearedText(observation)) return undefined
  const block = FENCE_AT_END_RE.exec(text.slice(-20_000))?.[1]
  const command = block
    ?.split("\n")
    .find((line) => line.trim().length > 0)
    ?.trim()
    .slice(0, IdentifierExtraction.MAX_IDENTIFIER_CHARS)
  if (command === undefined) return undefined
  const [toolName = command, argument] = command.split(/\s+/)
  const fileTool = ReadTools.isWriteTool(toolName) || ReadTools.isReadTool(toolName)
  const match = SHOWN_FILE_RE.exec(observation)
  const shown = (match?.[1] ?? match?.[2])?.trim()
  const named = argument !== undefined && /[./]/.test(argument) ? argument : undefined
  // The viewer names the file in full: one path for `create a.py` and a later `edit 1:1` of it.
  const path = !fileTool
    ? undefined
    : named === undefined
      ? ReadTools.isWriteTool(toolName)
        ? shown
        : undefined
      : shown !== undefined && (shown === named || shown.endsWith(`/${named.replace(/^\.\//, "")}`))
        ? shown
        : named
  const edits = kindOf(toolName, { command, path })
  const edited = path ?? shellEditPaths(edits, command)[0]
  const change = edits === "edit" || edits === "create" ? EditChange.ofTextEdit(block!, items, index) : undefined
  const outcome = judged(command, { outcome: observedOutcome(observation), text: observation })
  return { entryId: item.entryId, toolName, kind: edits, path: edited, command, outcome, change }
}

/**
 * The actions of one tool call: one, or for a shell call that edits several files in place one edit per file
 * (`ShellCommand.editedFiles`).
 */
const callActions = (
  item: Item,
  part: ToolCallPart,
  results: ReadonlyMap<string, ToolOutcome.Result>,
  shells: ShellDirectory.Tracker
): Array<Action> => {
  const kind = kindOf(part.toolName, part.input)
  const summarized = fromSummary(part.toolName, part.input)
  const command = ToolInput.inputCommand(part.input) ?? summarized.command
  const line = scriptLine(part.input) ?? command
  const result = results.get(part.toolCallId)
  const ran = { output: result?.text ?? "", failed: result?.outcome._tag === "failed" }
  const directory = line && shells.start(part.toolName, ShellDirectory.carryOf(part.toolName), line, ran)
  const outcome = judged(command, results.get(part.toolCallId))
  const named = ToolInput.inputPath(part.input) ?? summarized.path
  const paths = named !== undefined ? [named] : shellEditPaths(kind, scriptLine(part.input) ?? command)
  // A console transcript keeps only the call's summary: the change is the diff its result shows.
  const change =
    kind !== "edit" && kind !== "create"
      ? undefined
      : (EditChange.ofToolInput(part.input) ??
        (kind === "edit" && summarized.path !== undefined && outcome._tag === "ok"
          ? EditChange.ofDisplayedDiff(outcome.text)
          : undefined))
  return paths.map((path) => ({
    entryId: item.entryId,
    toolName: part.toolName,
    kind,
    path,
    command,
    ...(directory ? { directory } : {}),
    outcome,
    todos: kind === "todo" ? ToolInput.todoItems(part.input) : undefined,
    change,
    description: ToolInput.stringField(part.input, ["description"])?.split("\n")[0],
    pathShown: (ToolInput.inputPath(part.input) === undefined && summarized.path !== undefined) || undefined
  }))
}

/**
 * Every tool call of the items, classified, with its outcome, oldest first
 * — and every text action ({@link textAction}: a command written at the end
 * of a response whose output came back as the next user-role message) and
 * every edit the harness's output reports for a message
 * (`HarnessOutput.editActions`: aider's applied and failed edit blocks). A
 * call carrying a Codex patch is one action per file it touches
 * (`ApplyPatch`).
 *
 * @category constructors
 */
export const actionsOf = (original: ReadonlyArray<Item>): Array<Action> => {
  // A reused call id pairs each call with the result that follows it, as the repaired request does: a transcript
  // that reuses ids (SWE-agent, some Codex logs) otherwise gave every call of the id the last one's output.
  const items = ToolPairing.withUniqueCallIds(original)
  const results = ToolOutcome.ofResults(items)
  const actions: Array<Action> = []
  const shells = ShellDirectory.tracker()
  for (const [index, item] of items.entries()) {
    const message: Message = item.message
    if (message.role !== "assistant") continue
    const action = textAction(items, index)
    // A text-action agent's commands run in one shell (SWE-agent): a `cd` stays for the next command.
    const ran = { output: "", failed: action?.outcome._tag === "failed" }
    const directory = action?.command && shells.start("", "kept", action.command, ran)
    if (action !== undefined) actions.push(directory ? { ...action, directory } : action)
    if (item.harnessOutput !== undefined)
      actions.push(...HarnessOutput.editActions(item.entryId, item.harnessOutput, MessageParts.textOf(message.content)))
    if (typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type !== "tool-call") continue
      const patched = ApplyPatch.actionsOf(item.entryId, part, results.get(part.toolCallId)?.outcome)
      actions.push(...(patched.length > 0 ? patched : callActions(item, part, results, shells)))
    }
    if (item.subAgentMessages !== undefined) actions.push(...subAgentActions(item.entryId, item.subAgentMessages))
  }
  return actions
}

/** Files a message's sub-agents changed (a failed write changed nothing; reads and commands led to its result). */
const subAgentActions = (entryId: string, messages: ReadonlyArray<Message>): Array<Action> =>
  actionsOf(messages.map((message) => ({ entryId, message })))
    .filter((action) => (action.kind === "edit" || action.kind === "create") && action.outcome._tag === "ok")
    .map((action) => ({ ...action, source: "sub-agent" }))

/**
 * Whether an action ran something whose outcome matters (not a look, a read
 * or a plan update): work, a check or staging — a failed check is a failure.
 *
 * @category guards
 */
export const isSideEffect = (action: Action): boolean =>
  isWork(action) || action.kind === "check" || action.kind === "stage"

/**
 * Whether an action is work done: not a check (it reports the state the work
 * left) nor staging (the commit is the work); see `ShellCommand`.
 *
 * @category guards
 */
export const isWork = (action: Action): boolean =>
  action.kind === "edit" || action.kind === "create" || action.kind === "command" || action.kind === "other"
