/**
 * Decisions with their reasons (issue #11 requirement 1): the choices a
 * handoff must carry so the next model does not undo them. Two sources, both
 * in the transcript's own words:
 *
 * - a steering question or correction by the user ("why would we track X
 *   here? the session keeps track of those, no?") and the agent's conclusion
 *   that changed the code: the text of its first message after the question
 *   that comes with an edit, write or command — the decision, with the user's
 *   question as its reason;
 * - an agent sentence that states its reason ("… because …", "… instead of …").
 *
 * @since 0.2.0
 */
import { ToolActions, UserSpeech } from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"
import { assistantText, clip, sentences } from "./Text.ts"

/** One decision and its reason. */
export interface Decision {
  readonly decision: string
  readonly rationale: string
}

const RATIONALE_RE =
  /^(.{12,220}?)[,;:]?\s+\b(because|since|so that|instead of|rather than|to avoid|otherwise)\b\s+(.{6,220})$/i
/** A user message that steers: a question to the agent or a correction. */
const STEERING_RE = /\?|^\s*(?:no\b|nope\b|actually\b|wait\b|instead\b|don'?t\b|stop\b|that'?s wrong|wrong\b|why\b)/i
/** Longest decision text, in characters. */
const DECISION_CHARS = 260
/** Longest quoted question, in characters. */
const QUESTION_CHARS = 140

/** Whether an assistant message changes something (an edit, a write, a command). */
const changes = (item: CoveredItem): boolean =>
  ToolActions.actionsOf([item]).some((action) => ToolActions.isSideEffect(action))

/** The agent's conclusions that answered a steering question with a change. */
const answersToSteering = (items: ReadonlyArray<CoveredItem>): Array<Decision> => {
  const out: Array<Decision> = []
  items.forEach((item, index) => {
    const said = UserSpeech.spokenText(item.message).trim()
    if (said.length === 0 || !STEERING_RE.test(said.slice(0, 600))) return
    for (const later of items.slice(index + 1)) {
      if (UserSpeech.spokenText(later.message).trim().length > 0) return
      const text = assistantText(later.message).trim()
      if (text.length >= 20 && changes(later)) {
        out.push({
          decision: `${clip(text, DECISION_CHARS)} (${later.entryId})`,
          rationale: `answering the user (${item.entryId}): "${clip(said, QUESTION_CHARS)}"`
        })
        return
      }
    }
  })
  return out
}

/** Agent sentences that state their reason. */
const statedReasons = (items: ReadonlyArray<CoveredItem>): Array<Decision> =>
  items.flatMap((item) =>
    sentences(assistantText(item.message).slice(0, 6000)).flatMap((sentence) => {
      const match = RATIONALE_RE.exec(sentence)
      return match && !/[`{}]|^\W/.test(match[1]!.slice(0, 1))
        ? [{ decision: clip(match[1]!, 220), rationale: clip(`${match[2]} ${match[3]}`, 220) }]
        : []
    })
  )

/**
 * The decisions of a range: stated reasons first, then the answers to the
 * user's steering (the budget fill keeps the last items first, so the
 * user-prompted decisions win when space is short).
 *
 * @category constructors
 */
export const fromRange = (items: ReadonlyArray<CoveredItem>): Array<Decision> => [
  ...statedReasons(items),
  ...answersToSteering(items)
]
