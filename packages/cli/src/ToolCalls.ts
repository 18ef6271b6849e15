/**
 * Tool calls as the replay's damage measures see them: which calls read a
 * file (and which file), which have side effects, and the two measures —
 * files re-read after a compaction covered their earlier read, and
 * side-effect calls repeated with the same input after a compaction.
 *
 * Classification is by tool name and input shape, across the agents in the
 * shared corpus (Claude Code `Read` / `Write` / `Edit` / `Bash`, pi `read` /
 * `write` / `edit` / `bash`, SWE-agent `str_replace_editor`, aider, AI SDK
 * apps): a read is a tool whose name contains `read`, `view`, `cat` or
 * `open`, or `str_replace_editor` with `command: "view"`; its target is the
 * input's `path` / `file_path` / `filename` / `file`. A side effect is a tool
 * whose name contains `write`, `edit`, `create`, `delete`, `bash`, `shell`,
 * `exec`, `run`, `commit`, `patch`, `move` or `replace`.
 *
 * @since 0.2.0
 */
import type { Message } from "@context-engine/core"

/** @category models */
export interface ToolCall {
  readonly messageIndex: number
  readonly toolName: string
  readonly input: unknown
}

const READ = /read|view|cat\b|open/i
const SIDE_EFFECT = /write|edit|create|delete|bash|shell|exec|run|commit|patch|move|replace/i

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

/** The file a call reads, or undefined when it is not a read. @category utils */
export const readTarget = (call: ToolCall): string | undefined => {
  const command = field(call.input, ["command"])
  const isRead = call.toolName === "str_replace_editor" ? command === "view" : READ.test(call.toolName)
  return isRead ? field(call.input, ["path", "file_path", "filename", "file"]) : undefined
}

/** Whether a call has side effects (and is not a read). @category utils */
export const isSideEffect = (call: ToolCall): boolean =>
  readTarget(call) === undefined && SIDE_EFFECT.test(call.toolName)

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
      covered.filter(isSideEffect).map((call) => `${call.toolName}:${JSON.stringify(call.input)}`)
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
