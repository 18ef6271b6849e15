/**
 * The agent's own completion reports, for the handoff's Done list: the
 * sentence of an answer (an assistant message without tool calls) that says
 * what work it finished — a report verb opening a sentence ("Fixed …",
 * "I've properly ported …"), the summary under a summary heading ("## Summary",
 * "## Summary: Fixed X"), or the state stated right after an opening
 * acknowledgement ("Perfect! Now the `Text` component properly implements …").
 * A report names what the edits were for, which no tool result says. The
 * shapes are those Claude-based agents (Claude Code, pi) write after finishing.
 *
 * @since 0.3.0
 */
import type { CoveredItem } from "../Summarizer.ts"
import type { DoneItem } from "./Progress.ts"
import { assistantText, clip, ITEM_CHARS, sentences } from "./Text.ts"

/** Prefix of a Done item that is the agent's own completion report (not a tool's evidence). */
export const REPORTED = "reported:"
/** The verbs of a report of finished work: the side effect the agent says it made. */
const REPORT_VERBS =
  "fixed|added|created|updated|removed|implemented|committed|refactored|renamed|moved|wrote|changed|replaced|deleted|converted|extracted|split|merged|pushed|installed|reverted|ported|migrated|applied|restored|done"
/** An assistant's report of finished work ("Fixed …", "I've added …", "I've properly ported …"). */
const REPORT_RE = new RegExp(`^(?:i(?:'ve| have)? )?(?:\\w+ly )?(?:${REPORT_VERBS})\\s+\\S+(?:\\s+\\S+){2}`, "i")
/** The same opener with any length: a summary's heading or its first line, whose section is the report's detail. */
const SUMMARY_LINE_RE = new RegExp(`^(?:i(?:'ve| have)? )?(?:\\w+ly )?(?:${REPORT_VERBS})\\s+\\S+`, "i")
/** Code or a lead-in rather than a report sentence ("updated=…", "… into clear steps:"). */
const NOT_REPORT_RE = /[=;{}]|:$/
/**
 * A markdown heading that opens a summary of the work ("## Summary", "## Solution Summary", "## Summary: Fixed X"),
 * its rest captured: the shape of the final summary Claude-based agents (Claude Code, pi) write after finishing.
 */
const SUMMARY_HEADING_RE = /^#{1,6}\s+(?:\*\*)?(?:[\w-]+\s+){0,2}summary\b(?:\*\*)?\s*(?:[:\u2013\u2014-]\s*(.*))?$/i
/** A markdown heading. */
const HEADING_RE = /^#{1,6}\s/
/** A lone acknowledgement that work succeeded, opening an answer ("Perfect!", "Done."). */
const SUCCESS_RE = /^(?:perfect|great|excellent|awesome|done|all done|success)[!.]$/i
/**
 * The state the work reached, stated right after that acknowledgement ("Perfect! Now the `Text` component properly
 * implements `invalidate()`", "Great! Now all colors use hex RGB values."): a subject that is the work, not the
 * agent or the user — "Now let me …", "Now I'll …", "Now run it …" and "Now that …, …" are narration or asks.
 */
const NOW_STATE_RE = /^now,?\s+(?!that\b)(?:the|all|every|each|both|it|this|these|those|our|its)\b/i
/** Words of a plan or a hope rather than a state reached. */
const NOT_STATE_RE = /\b(?:let me|let's|i'll|i will|we'll|we need|need to|should|will|might|may|could|would)\b/i

/**
 * The report sentence of one answer: the first sentence that opens with a
 * report verb ({@link REPORT_RE}, not code or a lead-in); else the summary
 * under a summary heading ({@link SUMMARY_HEADING_RE}: the heading's own
 * rest or its first line, a lead-in colon allowed — the details follow);
 * else the state stated right after an opening acknowledgement
 * ({@link NOW_STATE_RE}).
 */
const reportOf = (text: string): string | undefined => {
  const all = sentences(text)
  const direct = all.find((line) => REPORT_RE.test(line) && !NOT_REPORT_RE.test(line))
  if (direct !== undefined) return direct
  for (let at = 0; at < all.length; at++) {
    const heading = SUMMARY_HEADING_RE.exec(all[at]!)
    if (heading === null) continue
    const line = (heading[1]?.trim() || all.slice(at + 1).find((next) => !HEADING_RE.test(next)) || "")
      .replace(/\*\*/g, "")
      .replace(/:$/, "")
    if (SUMMARY_LINE_RE.test(line) && !NOT_REPORT_RE.test(line)) return line
  }
  const [first, second] = all
  return first !== undefined && second !== undefined && SUCCESS_RE.test(first) && NOW_STATE_RE.test(second)
    ? NOT_STATE_RE.test(second)
      ? undefined
      : second.replace(/:$/, "")
    : undefined
}

/**
 * Completion reports of assistant answers (messages without tool calls): one
 * per answer ({@link reportOf}), each a Done item prefixed {@link REPORTED}
 * with its entry id.
 *
 * @category getters
 */
export const reportsOf = (items: ReadonlyArray<CoveredItem>, position: (entryId: string) => number): Array<DoneItem> =>
  items.flatMap((item) => {
    const message = item.message
    if (
      message.role !== "assistant" ||
      (typeof message.content !== "string" && message.content.some((part) => part.type === "tool-call"))
    )
      return []
    const sentence = reportOf(assistantText(message).slice(0, 3000))
    return sentence
      ? [{ at: position(item.entryId), text: `${REPORTED} ${clip(sentence, ITEM_CHARS)} (${item.entryId})` }]
      : []
  })
