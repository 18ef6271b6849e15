/**
 * Degenerate summaries (shared case C17): replies that came back without an
 * error but are no handoff — empty or whitespace only, one line repeated,
 * a placeholder / stub text, a tool call instead of a summary. They are
 * refused whatever their length, never deduplicated or truncated into a
 * "valid" summary.
 *
 * @since 0.2.0
 */
import type { Checkpoint } from "./Checkpoint.ts"

/**
 * Why a summary is degenerate.
 *
 * @category models
 */
export type Reason = "empty" | "repetitive" | "stub" | "tool-call"

const STUB_RE =
  /^\s*(?:\(?(?:none|n\/a|tbd|todo|placeholder|empty|no summary|summary unavailable|unavailable|omitted|truncated|\.\.\.|…)\)?[.!]?\s*$|summary (?:is )?(?:unavailable|not available|omitted)|(?:no|nothing to) summar)/i
const TOOL_CALL_RE =
  /^\s*(?:<tool_call>|<function_call|<invoke\b|\{\s*"(?:name|tool|tool_name|function|type)"\s*:\s*"[^"]*"\s*,\s*"(?:arguments|input|parameters|args)"|\[\s*\{\s*"type"\s*:\s*"tool[-_]call")/i

const lines = (text: string): Array<string> =>
  text
    .split("\n")
    .map((line) =>
      line
        .replace(/^\s*(?:#{1,6}|[-*]|\d+[.)])\s*/, "")
        .trim()
        .toLowerCase()
    )
    .filter((line) => line.length > 0)

/**
 * Whether one line makes up most of a text: at least 4 content lines and
 * one of them is more than half of them.
 *
 * @category guards
 */
export const isRepetitive = (text: string): boolean => {
  const all = lines(text)
  if (all.length < 4) return false
  const counts = new Map<string, number>()
  for (const line of all) counts.set(line, (counts.get(line) ?? 0) + 1)
  return Math.max(...counts.values()) > all.length / 2
}

/**
 * Why a free-text summary is degenerate, or `undefined` when it is not.
 *
 * @category analysis
 */
export const ofText = (text: string): Reason | undefined => {
  const trimmed = text.trim()
  if (trimmed.length === 0) return "empty"
  if (TOOL_CALL_RE.test(trimmed)) return "tool-call"
  if (STUB_RE.test(trimmed) && trimmed.length < 200) return "stub"
  if (isRepetitive(trimmed)) return "repetitive"
  return undefined
}

const listRepetitive = (items: ReadonlyArray<string>): boolean => items.length >= 4 && isRepetitive(items.join("\n"))

/**
 * Why structured content is degenerate, or `undefined`: an all-empty or
 * whitespace goal, a stub or tool-call goal, or a section that is one item
 * repeated.
 *
 * @category analysis
 */
export const ofContent = (content: Checkpoint["content"] & {}): Reason | undefined => {
  const goal = content.goal.trim()
  if (goal.length === 0) return "empty"
  const goalReason = ofText(goal)
  if (goalReason === "stub" || goalReason === "tool-call") return goalReason
  const lists = [
    content.nextSteps,
    content.progress.done,
    content.progress.inProgress,
    content.constraints,
    content.criticalContext
  ]
  if (lists.some(listRepetitive)) return "repetitive"
  return undefined
}

/**
 * Why a checkpoint's summary is degenerate, or `undefined`.
 *
 * @category analysis
 */
export const of = (checkpoint: Pick<Checkpoint, "content" | "text">): Reason | undefined =>
  checkpoint.content ? ofContent(checkpoint.content) : ofText(checkpoint.text ?? "")
