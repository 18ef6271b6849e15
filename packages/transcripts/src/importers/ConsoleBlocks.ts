/**
 * Shared emitter for the terminal-text importers (Claude Code and Gemini
 * CLI consoles): collects a block's lines, then writes it as a user prompt,
 * assistant text, or an assistant tool call followed by its tool result.
 * Tool-call ids are `<prefix>-call:<line>` (the line of the call).
 *
 * These formats are what a terminal showed, not what the model saw: tool
 * outputs are already truncated by the UI ("… +N lines"), and the tool
 * input is the one-line summary the UI printed, kept as `{ summary }`.
 *
 * @since 0.1.0
 */
import type { EntryBuilder } from "./EntryBuilder.ts"

/**
 * A block being collected.
 *
 * @category models
 */
export type Block =
  | { kind: "user"; line: number; lines: Array<string> }
  | { kind: "assistant"; line: number; lines: Array<string> }
  | { kind: "tool"; line: number; name: string; summary: string; status?: string; lines: Array<string> }
  | { kind: "other"; line: number; lines: Array<string> }

/**
 * Gemini CLI's status mark of a cancelled tool call (`ToolCallStatus.Canceled`
 * is drawn as `-` in its `ToolMessage.tsx`): the user declined the call or
 * cancelled the request, so it never ran. Its box shows no output, and an
 * empty result would read as a call that ran and printed nothing.
 */
const CANCELLED_STATUS = "-"
/**
 * What Gemini CLI answers the model for a cancelled call (`coreToolScheduler`:
 * `{ error: "[Operation Cancelled] Reason: …" }`); the console does not print
 * the reason, so only the prefix is known.
 */
const CANCELLED_TEXT = "[Operation Cancelled]"

const text = (lines: ReadonlyArray<string>): string =>
  lines
    .join("\n")
    .replace(/\s+$/u, "")
    .replace(/^\s*\n/u, "")

/**
 * Writes a finished block to the builder. `other` blocks (banners, stats
 * boxes, UI chatter) become `console.text` events so nothing is lost.
 *
 * @category constructors
 */
export const emit = (builder: EntryBuilder, prefix: string, block: Block | undefined): void => {
  if (block === undefined) return
  const body = text(block.lines)
  switch (block.kind) {
    case "user":
      builder.message(block.line, { role: "user", content: [{ type: "text", text: body }] })
      return
    case "assistant":
      if (body.length > 0) builder.message(block.line, { role: "assistant", content: [{ type: "text", text: body }] })
      return
    case "tool": {
      const toolCallId = `${prefix}-call:${block.line}`
      builder.message(block.line, {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId, toolName: block.name, input: { summary: block.summary } }]
      })
      const cancelled = block.status === CANCELLED_STATUS
      // Claude Code's console prints a declined call as "User rejected write to a.py" (the model got an error).
      const isError = cancelled || block.status === "✖" || /^\s*(⎿\s*)?(?:Error\b|User rejected\b)/u.test(body)
      builder.message(
        block.line,
        {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId,
              toolName: block.name,
              output: cancelled
                ? { type: "error-text", value: body.length > 0 ? `${CANCELLED_TEXT}\n${body}` : CANCELLED_TEXT }
                : isError
                  ? { type: "error-text", value: body }
                  : { type: "text", value: body }
            }
          ]
        },
        { id: `${prefix}:${block.line}:result`, ...(block.status ? { meta: { status: block.status } } : {}) }
      )
      return
    }
    case "other":
      if (body.trim().length > 0) builder.event(block.line, "console.text", { text: body })
      return
  }
}
