/**
 * Tool calls as the replay's damage measures see them: which calls read a
 * file (and which file), which have side effects, and the two measures —
 * files re-read after a compaction covered their earlier read, and
 * side-effect calls repeated with the same input after a compaction.
 *
 * Classification is by tool name and input shape, across the agents in the
 * shared corpus (Claude Code `Read` / `Write` / `Edit` / `Bash`, pi `read` /
 * `write` / `edit` / `bash`, SWE-agent `str_replace_editor`, aider, AI SDK
 * apps, and the console importers whose calls carry only a `summary`): a
 * read is a tool whose name contains `read`, `view`, `cat` or `open`, or
 * `str_replace_editor` with `command: "view"`; its target is the input's
 * `path` / `file_path` / `filename` / `file` (else the `summary` up to its
 * first " ("). A shell call (`bash`, `shell`, …) reading one file with
 * `cat`, `head`, `tail`, `less` or `more` is a read of that file. A side
 * effect is a tool whose name contains `write`, `edit`, `update`, `insert`,
 * `create`, `delete`, `bash`, `shell`, `exec`, `run`, `commit`, `patch`,
 * `move` or `replace` — except shell commands that only look, check (test,
 * type-check, lint, build) or stage (`ShellCommand.kindOf`: a line whose
 * every step is one; `npm run build && cp …` is a command): running them
 * again after a compaction repeats no effect an agent would regret.
 * A repeat is the same tool with the same input; calls that carry only a
 * console `summary` (an edit's file name, not its change) are compared only
 * when they are shell commands, whose summary is the command itself.
 *
 * @since 0.2.0
 */
import { type Message, ShellCommand } from "@context-engine/core"

/** @category models */
export interface ToolCall {
  readonly messageIndex: number
  readonly toolName: string
  readonly input: unknown
}

const READ = /read|view|cat\b|open/i
const SIDE_EFFECT = /write|edit|update|insert|create|delete|bash|shell|exec|run|commit|patch|move|replace/i
const SHELL = /bash|shell|exec|terminal|command/i
/** A shell command that reads one file: `cat FILE`, `head -n 20 FILE`, … */
const SHELL_READ = /^\s*(?:cat|head|tail|less|more)(?:\s+-{1,2}[\w=]+(?:\s+\d+)?)*\s+([^\s|;&<>]+)\s*$/

/** The tool calls of a message list, with the index of the message holding each. @category utils */
export const calls = (messages: ReadonlyArray<Message.Message>): ReadonlyArray<ToolCall> =>
  messages.flatMap((message, messageIndex) =>
    message.role === "assistant" && typeof message.content !== "string"
      ? message.content.flatMap((part) =>
          part.type === "tool-call" ? [{ messageIndex, toolName: part.toolName, input: part.input }] : []
        )
      : []
  )

const field = (input: unknown, names: ReadonlyArray<string>): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  for (const name of names) {
    const value = (input as Record<string, unknown>)[name]
    if (typeof value === "string" && value.length > 0) return value
  }
  return undefined
}

/** The shell command of a call (its `command` / `cmd`, else its console `summary`: `ShellCommand.fromDisplay`), after a leading `cd DIR &&`. */
const shellCommand = (call: ToolCall): string | undefined => {
  if (!SHELL.test(call.toolName)) return undefined
  const summary = field(call.input, ["summary"])
  const command =
    field(call.input, ["command", "cmd"]) ?? (summary && ShellCommand.fromDisplay(summary.split("\n")[0]!))
  return command?.replace(/^\s*cd\s+\S+\s*&&\s*/, "")
}

/** The file a call reads, or undefined when it is not a read. @category utils */
export const readTarget = (call: ToolCall): string | undefined => {
  const shell = shellCommand(call)
  if (shell !== undefined) return SHELL_READ.exec(shell)?.[1]
  const command = field(call.input, ["command"])
  const isRead = call.toolName === "str_replace_editor" ? command === "view" : READ.test(call.toolName)
  if (!isRead) return undefined
  return field(call.input, ["path", "file_path", "filename", "file"]) ?? field(call.input, ["summary"])?.split(" (")[0]
}

/** Whether a call's input is only a console `summary` (it does not say what an edit changed). */
const onlySummary = (input: unknown): boolean =>
  typeof input === "object" && input !== null && Object.keys(input).length === 1 && "summary" in input

/** Whether two calls with equal inputs are the same action (see the module docs). */
const comparable = (call: ToolCall): boolean => !onlySummary(call.input) || shellCommand(call) !== undefined

/** Whether a call has side effects (and is not a read, nor a shell command that only looks or tests). @category utils */
export const isSideEffect = (call: ToolCall): boolean => {
  if (readTarget(call) !== undefined || !SIDE_EFFECT.test(call.toolName)) return false
  const shell = shellCommand(call)
  return shell === undefined || ShellCommand.kindOf(shell) === "command"
}

/**
 * The damage measures. `stepIndexes[k]` is the index of the assistant
 * message request `k` produced; a compaction at step `s` covered messages
 * before `coveredUntilIndex`; calls in the assistant messages of steps
 * `s … s + windowSteps − 1` count against it.
 *
 * @category utils
 */
export const damage = (
  messages: ReadonlyArray<Message.Message>,
  stepIndexes: ReadonlyArray<number>,
  compactions: ReadonlyArray<{ readonly step: number; readonly coveredUntilIndex: number }>,
  windowSteps: number
) => {
  const all = calls(messages)
  const rereads: Array<{ step: number; compactionStep: number; toolName: string; target: string }> = []
  const repeats: Array<{ step: number; compactionStep: number; toolName: string; target: string }> = []
  let followedByReread = 0
  let followedByRepeat = 0
  for (const compaction of compactions) {
    const covered = all.filter((call) => call.messageIndex < compaction.coveredUntilIndex)
    const readBefore = new Set(covered.flatMap((call) => readTarget(call) ?? []))
    const effectsBefore = new Set(
      covered
        .filter((call) => isSideEffect(call) && comparable(call))
        .map((call) => `${call.toolName}:${JSON.stringify(call.input)}`)
    )
    const from = stepIndexes[compaction.step] ?? Number.POSITIVE_INFINITY
    const to = stepIndexes[compaction.step + windowSteps] ?? Number.POSITIVE_INFINITY
    const after = all.filter((call) => call.messageIndex >= from && call.messageIndex < to)
    const stepOf = (call: ToolCall) => stepIndexes.findIndex((index) => index >= call.messageIndex)
    let reread = false
    let repeated = false
    for (const call of after) {
      const target = readTarget(call)
      if (target !== undefined && readBefore.has(target)) {
        rereads.push({ step: stepOf(call), compactionStep: compaction.step, toolName: call.toolName, target })
        reread = true
      }
      const key = `${call.toolName}:${JSON.stringify(call.input)}`
      if (isSideEffect(call) && effectsBefore.has(key)) {
        repeats.push({
          step: stepOf(call),
          compactionStep: compaction.step,
          toolName: call.toolName,
          target: key.slice(0, 200)
        })
        repeated = true
      }
    }
    if (reread) followedByReread++
    if (repeated) followedByRepeat++
  }
  return {
    rereads,
    compactionsFollowedByReread: followedByReread,
    repeatedSideEffects: repeats,
    compactionsFollowedByRepeat: followedByRepeat
  }
}
