/**
 * How a tool call ended, read off its result: ok, failed with its first
 * error line, or unknown (no result, or an `[interrupted]` one an engine or
 * importer wrote). A result fails when the harness marked it as an error,
 * when the user declined the call ({@link isDeclined}), or when its output
 * holds a failure marker ({@link hasFailureMarker}: a non-zero exit code,
 * "command failed", a test runner's "N failed", a traceback, "error: ") — at
 * the end of a command's output, never in a read tool's (file content), and
 * only on the first line of a write tool's (`ReadTools.isWriteTool`: the
 * rest is the content it wrote or a diff of it, where `echo "Error: …"` is a
 * line of code, not an outcome). `ToolActions` attaches these outcomes to the
 * calls it classifies.
 *
 * @since 0.8.0
 */
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import type { Message } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"
import * as ReadTools from "./ReadTools.ts"

/**
 * How one tool call ended.
 *
 * @category models
 */
export type Outcome =
  | { readonly _tag: "ok"; readonly text: string }
  | { readonly _tag: "failed"; readonly error: string }
  /** `text`: what a call that ran printed when it does not tell how the call ended (`CheckRun.shownOutcome`). */
  | { readonly _tag: "unknown"; readonly text?: string }

/**
 * A call's outcome as the harness reported it, and the output it printed.
 *
 * @category models
 */
export interface Result {
  readonly outcome: Outcome
  readonly text: string
}

const FAILED_EXIT_RE =
  /(?:exit(?:ed with)? code:?\s*[1-9]\d*|exited with code [1-9]|command failed|\bFAILED\b|\d+ failed\b|error: |Traceback \(most recent call last\))/i

/** Results an engine or importer wrote for a call that never finished (shared case C02): the outcome is unknown. */
const INTERRUPTED_RE = /^\s*\[interrupted\]/i

const ERROR_WORD_RE = /\b(?:error|failed|failure|exception|cannot|not found)\b/i

/**
 * A tool result that says the user declined the call, so it never ran:
 * Claude Code's "The user doesn't want to proceed with this tool use. The
 * tool use was rejected …" (what the model receives), its console's "User
 * rejected write to …" / "User rejected update to …" (what the terminal
 * prints for the same answer), and Gemini CLI's "[Operation Cancelled]
 * Reason: …" (its `coreToolScheduler` answer for a cancelled call). The user
 * stopped the work there; their next words decide what follows, not a retry.
 */
const DECLINED_RE =
  /^\s*(?:\[Operation Cancelled\]|The user doesn't want to proceed with this tool use|User rejected\b)/

/**
 * Whether output holds a failure marker: a non-zero exit code, "command
 * failed", "FAILED", "N failed", "error: " or a Python traceback.
 *
 * @category guards
 */
export const hasFailureMarker = (text: string): boolean => FAILED_EXIT_RE.test(text)

/**
 * Whether a line says error or failure ("error", "failed", "failure",
 * "exception", "cannot", "not found" as words).
 *
 * @category guards
 */
export const saysError = (line: string): boolean => ERROR_WORD_RE.test(line)

/**
 * Whether the user declined the call ({@link DECLINED_RE}): it never ran. Its
 * outcome is `failed`, with the decline as its error line.
 *
 * @category guards
 */
export const isDeclined = (outcome: Outcome): boolean => outcome._tag === "failed" && DECLINED_RE.test(outcome.error)

/** Whether a result the harness did not mark as an error shows a failure marker where the tool's output has one. */
const showsFailure = (toolName: string, text: string): boolean => {
  if (ReadTools.isReadTool(toolName)) return false
  if (ReadTools.isWriteTool(toolName)) return FAILED_EXIT_RE.test(text.trimStart().split("\n", 1)[0]!)
  return FAILED_EXIT_RE.test(text.slice(-2000))
}

/**
 * The outcome of every tool result in `items`, by tool call id. An
 * `[interrupted]` result is left out (the call's outcome is unknown).
 *
 * @category constructors
 */
export const ofResults = (items: ReadonlyArray<{ readonly message: Message }>): Map<string, Result> => {
  const map = new Map<string, Result>()
  for (const item of items) {
    if (typeof item.message.content === "string") continue
    for (const part of item.message.content) {
      if (part.type !== "tool-result") continue
      const text = MessageParts.outputText(part.output)
      const isError = MessageParts.outputIsError(part.output)
      const declined = DECLINED_RE.test(text)
      const failed = isError || declined || showsFailure(part.toolName, text)
      if (INTERRUPTED_RE.test(text)) continue
      if (!failed) map.set(part.toolCallId, { outcome: { _tag: "ok", text }, text })
      // A declined call's error is the decline, not a line of the content it would have written (the console shows
      // the rejected file below it: "User rejected write to a.py" then its lines, one with "BookminderError").
      else if (declined)
        map.set(part.toolCallId, { outcome: { _tag: "failed", error: text.trim().split("\n")[0]!.trim() }, text })
      else {
        const errors = IdentifierExtraction.fromToolResult(part).errors
        // No recognised error line: the first line that says error or failure, else the first line — not counting
        // a runtime's notices ("Debugger attached.", npm's script banner).
        const lines = text
          .trim()
          .split("\n")
          .filter((line) => line.trim().length > 0 && !IdentifierExtraction.isRuntimeNotice(line))
        const first = errors[0] ?? lines.find((line) => ERROR_WORD_RE.test(line)) ?? lines[0] ?? "error"
        map.set(part.toolCallId, { outcome: { _tag: "failed", error: first.trim() }, text })
      }
    }
  }
  return map
}
