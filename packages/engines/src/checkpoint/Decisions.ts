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
 * - an agent sentence that states its reason ("… because …", "… instead of …"),
 *   unless it explains rather than decides (to the user, a pointer, a failure's cause);
 * - a fix and the failure that prompted it: a side-effect call failed (a
 *   check, a build, a test run — not an edit that did not apply, which is
 *   retried), and the agent's first message after it that
 *   comes with a change, before the same call ran again, is the decision, with
 *   the failure's first error line as its reason — the finding that rules out
 *   undoing the fix (a later run of the same call passed or replaced it:
 *   `CriticalIdentifiers.isSuperseded`).
 *
 * Decisions are listed in the order they were made, so the budget keeps the
 * newest.
 *
 * @since 0.2.0
 */
import { CriticalIdentifiers, ToolActions, UserSpeech } from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"
import { isDeclined } from "./Progress.ts"
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

/** A decision found at `at` (position of its entry in the range). */
interface Found extends Decision {
  readonly at: number
}

/** Narration lead-ins that carry no decision ("I see,", "Let me", "Now", "First,"), dropped from the quoted text. */
const NARRATION_RE =
  /^(?:(?:i see|ok(?:ay)?|alright|good|great|perfect|got it|you'?re (?:absolutely |completely |totally )?right)[,.!:](?:\s+|$)|(?:now|first|next|then),?\s+|let me\s+|i'?ll\s+)+/i

/** A sentence announcing the agent's next step ("Let me …", "I'll …", "Now I need to …"), not stating a choice. */
const INTENT_RE =
  /^(?:(?:ok(?:ay)?|alright|so|now|first|next|then)[,.!]?\s+)*(?:let me|let'?s|let us|i'?ll|i will|i'?m going to|i am going to|we'?ll|i need to|we need to|i should|we should)\s+(?:(?:first|now|also|quickly|just|then|carefully)\s+)?(\w+)/i
/** Verbs of looking (reading, searching, running a check), not of choosing: their sentences narrate, they decide nothing. */
const LOOKING_RE =
  /^(?:look|check|see|read|examine|explore|search|find|grep|investigate|open|view|inspect|review|verify|test|run|try|debug|understand|analy[sz]e|start|begin|take|get|trace|figure|confirm|identify|locate|understand|study|dig|think|re-?run|re-?read|re-?check)$/i
/** Words that state a choice or its reason (Claude Code's compact prompt asks for decisions "and why"). */
const CHOICE_RE =
  /\b(?:instead|rather than|because|since|so that|decided?|chose|choose|prefer|opted?|to avoid|will use|switch(?:ed|ing)? to|go(?:ing)? with|keep(?:ing)? .* as)\b/i
/** What follows an announced step's verb when it names nothing: a pronoun and adverbs ("fix this properly", "do that now"). */
const NAMES_NOTHING_RE =
  /^\s*(?:this|that|it|these|those|them|things|everything|both)(?:\s+(?:properly|correctly|now|again|first|too|up|out|quickly|right|then))*[\s.:!]*$/i
/** Acknowledgements of the user that carry no content ("You're right!", "Good catch."). */
const ACK_RE =
  /^(?:you'?re (?:absolutely |completely |totally )?right|good (?:catch|point)|i see|ok(?:ay)?|got it|sure|yes|perfect|great)[\s.!,:-]*$/i

/**
 * Whether a sentence is narration rather than a decision (Claude Code's
 * compact prompt separates "key technical decisions" from what the agent was
 * doing): an acknowledgement, or an announced next step ({@link INTENT_RE})
 * that states no choice ({@link CHOICE_RE}) and either only looks (reads,
 * searches, runs a check — {@link LOOKING_RE}) or names nothing it changes
 * (only a pronoun after its verb: {@link NAMES_NOTHING_RE}). An announced
 * change that names its object ("Now let me keep the listeners") stays: in
 * answer to the user's steering it is the choice made.
 */
const isNarration = (sentence: string): boolean => {
  if (ACK_RE.test(sentence)) return true
  const intent = INTENT_RE.exec(sentence)
  if (intent === null || CHOICE_RE.test(sentence)) return false
  return LOOKING_RE.test(intent[1]!) || NAMES_NOTHING_RE.test(sentence.slice(intent.index + intent[0].length))
}

/**
 * The agent's words as a decision: narration sentences ({@link isNarration})
 * dropped, narration lead-ins dropped at the start of each other sentence, a
 * trailing lead-in colon ended as a sentence. `""` when only narration is
 * left.
 */
export const plainStatement = (text: string): string =>
  sentences(text)
    .filter((sentence) => !isNarration(sentence))
    .map((sentence) => {
      const rest = sentence.replace(NARRATION_RE, "")
      return rest.length > 0 ? rest.charAt(0).toUpperCase() + rest.slice(1) : rest
    })
    .filter((sentence) => sentence.length > 0)
    .join(" ")
    .replace(/:$/, ".")

/** Where code starts: a fence (aider also fences with `<source>`) or an edit block's `<<<<<<< SEARCH`. */
const CODE_START_RE = /^[ \t]*(?:```|<source>|<<<<<<< SEARCH)/m
/** A line that only names a file (an edit block's header: aider's `path/to/file.py` above its fence). */
const FILE_LINE_RE = /\n[ \t]*[\w@+-]*[./][\w./@+-]*[ \t]*$/

/**
 * The agent's words before the first fenced block, without the file line
 * that heads it: a message that writes its change as text (aider's
 * SEARCH/REPLACE blocks) states the choice before the code; the code is the
 * change, not the decision.
 */
const wordsBeforeCode = (text: string): string => {
  const fence = text.search(CODE_START_RE)
  return fence < 0 ? text : text.slice(0, fence).trimEnd().replace(FILE_LINE_RE, "")
}

/**
 * A decision in the agent's words, or — when its words are only narration —
 * the change its message made ("edited `src/a.ts`", "ran `npm test`"), so a
 * steering answer still says what was done about it.
 */
const decisionText = (item: CoveredItem, text: string): string => {
  const statement = plainStatement(wordsBeforeCode(text))
  if (statement.length > 0) return statement
  const changed = ToolActions.actionsOf([item])
    .filter(ToolActions.isSideEffect)
    .map((action) =>
      action.kind === "edit" || action.kind === "create"
        ? `${action.kind === "create" ? "created" : "edited"} \`${action.path ?? action.toolName}\``
        : `ran \`${clip(action.command ?? action.toolName, 80)}\``
    )
  return [...new Set(changed)].join(", ")
}

/** Whether every bracket opened in `text` is closed: a reason word inside "(…)" does not split the sentence. */
const balanced = (text: string): boolean =>
  (text.match(/\(/g)?.length ?? 0) <= (text.match(/\)/g)?.length ?? 0) &&
  (text.match(/\[/g)?.length ?? 0) <= (text.match(/\]/g)?.length ?? 0)

/** Whether an assistant message changes something (an edit, a write, a command). */
const changes = (item: CoveredItem): boolean =>
  ToolActions.actionsOf([item]).some((action) => ToolActions.isSideEffect(action))

/** The agent's conclusions that answered a steering question with a change. */
const answersToSteering = (items: ReadonlyArray<CoveredItem>, keptEntryIds: ReadonlySet<string>): Array<Found> => {
  const out: Array<Found> = []
  items.forEach((item, index) => {
    const said = UserSpeech.spokenText(item.message).trim()
    if (said.length === 0 || !STEERING_RE.test(said.slice(0, 600))) return
    for (let at = index + 1; at < items.length; at++) {
      const later = items[at]!
      if (UserSpeech.spokenText(later.message).trim().length > 0) return
      const text = assistantText(later.message).trim()
      if (text.length >= 20 && changes(later)) {
        out.push({
          at,
          decision: `${clip(decisionText(later, text), DECISION_CHARS)} (${later.entryId})`,
          rationale: keptEntryIds.has(item.entryId)
            ? `answering the user (${item.entryId}, kept verbatim after this checkpoint)`
            : `answering the user (${item.entryId}): "${clip(said, QUESTION_CHARS)}"`
        })
        return
      }
    }
  })
  return out
}

/** A clause addressed to the user ("You're getting …", "Your build …"): it tells them something, it chooses nothing. */
const TO_THE_USER_RE = /^(?:you|you'?re|your)\b/i
/** A clause that only points ("This is the crucial step", "That's it"): it names no choice. */
const POINTER_RE = /^(?:this|that|it|which)(?:'s|\s+(?:is|was))\b/i
/** A failure in the clause a "because" / "since" explains ("The previous command failed because …"): a finding, not a choice. */
const FAILURE_RE =
  /\b(?:fail(?:s|ed|ing)?|errors?|exceptions?|crash(?:es|ed)?|broke|broken|wrong|missing|incorrect|(?:does|did|is)(?:n'?t| not) work(?:ing)?)\b/i

/**
 * A clause that reports what a thing is doing ("The config path is resolving
 * to /app instead of /app/project", "The function is returning None rather
 * than the list"): its subject is a thing, not whoever chooses, and its verb
 * a progressive state — an observation, not a choice. A change described
 * with "now" ("The test is now checking only the titles rather than their
 * order") is what the agent made, and stays.
 */
const FINDING_RE =
  /^(?:the|its|their|this|that|these|those)\s+[^,;:]{1,80}?\s+(?:is|are|was|were)\s+(?:still\s+|actually\s+|currently\s+)?(?!being\b|going\b)\w+ing\b/i

/**
 * Whether a reason sentence explains instead of deciding (Claude Code's
 * compact prompt asks for "key technical decisions"): its clause before the
 * reason word is addressed to the user, only points, reports a finding
 * ({@link FINDING_RE}), or — with a cause word
 * (because, since) — states a failure; the failure itself is kept under
 * Failed Approaches, and the fix it prompted by {@link fixesOfFailures}.
 */
const explains = (clause: string, word: string): boolean =>
  TO_THE_USER_RE.test(clause) ||
  POINTER_RE.test(clause) ||
  FINDING_RE.test(clause) ||
  (/^(?:because|since)$/i.test(word) && FAILURE_RE.test(clause))

/**
 * A reason stated before the choice ("Since no custom commands are available,
 * I'll split the work into subtasks"): English puts the cause first as often
 * as last. Only a choice the agent makes itself (its clause opens with I / we /
 * let's) counts — "Since the lock is stale, the build stops" reports a finding.
 */
const REASON_FIRST_RE = /^(because|since|given that)\s+(.{6,220}?),\s+((?:i|we|let(?:'s|\s+(?:me|us)))\b.{12,220})$/i

/** A reason-first sentence as a decision ({@link REASON_FIRST_RE}); the same filters as a reason stated after it. */
const reasonFirst = (sentence: string, at: number): Array<Found> => {
  const match = REASON_FIRST_RE.exec(sentence)
  const decision = match ? plainStatement(match[3]!) : ""
  return match && decision.length > 0 && !explains(decision, match[1]!) && balanced(match[2]!)
    ? [{ at, decision: clip(decision, 220), rationale: clip(`${match[1]!.toLowerCase()} ${match[2]}`, 220) }]
    : []
}

/** The range's tool actions (`ToolActions.actionsOf`, taken once) and each entry's position in it. */
interface Actions {
  readonly actions: ReadonlyArray<ToolActions.Action>
  readonly positions: ReadonlyMap<string, number>
}

/**
 * For each position `at`: whether the side-effect calls the agent issued with
 * the message at `at` or after it, before the user spoke again, were all
 * declined by the user (`Progress.isDeclined`) — the choice it stated there
 * was refused, not made ("I will use /Users/me instead of $HOME" with a write
 * the user cancelled). One backward pass: a position's counts are its own
 * calls' plus the next position's, unless the user speaks there.
 */
const refusedAt = (items: ReadonlyArray<CoveredItem>, { actions, positions }: Actions): Array<boolean> => {
  const calls = new Array<number>(items.length).fill(0)
  const declined = new Array<number>(items.length).fill(0)
  for (const action of actions) {
    const at = positions.get(action.entryId)
    if (at === undefined || !ToolActions.isSideEffect(action)) continue
    calls[at]!++
    if (isDeclined(action)) declined[at]!++
  }
  const refused = new Array<boolean>(items.length).fill(false)
  for (let at = items.length - 2; at >= 0; at--) {
    if (UserSpeech.spokenText(items[at + 1]!.message).trim().length > 0) continue
    calls[at]! += calls[at + 1]!
    declined[at]! += declined[at + 1]!
  }
  for (let at = 0; at < items.length; at++) refused[at] = calls[at]! > 0 && declined[at] === calls[at]
  return refused
}

/**
 * Agent sentences that state their reason, after the choice ({@link RATIONALE_RE}) or before it
 * ({@link REASON_FIRST_RE}); none of a message whose calls the user declined ({@link refusedAt}).
 */
const statedReasons = (items: ReadonlyArray<CoveredItem>, taken: Actions): Array<Found> => {
  const refused = refusedAt(items, taken)
  return items.flatMap((item, at) => {
    const text = refused[at] ? "" : assistantText(item.message)
    return (text.length === 0 ? [] : sentences(text.slice(0, 6000))).flatMap((sentence) => {
      const match = RATIONALE_RE.exec(sentence)
      const decision = match ? plainStatement(match[1]!) : ""
      if (REASON_FIRST_RE.test(sentence)) return reasonFirst(sentence, at)
      return match &&
        decision.length > 0 &&
        !explains(decision, match[2]!) &&
        !/[`{}]|^\W/.test(match[1]!.slice(0, 1)) &&
        balanced(match[1]!)
        ? [
            {
              at,
              decision: clip(decision, 220),
              rationale: clip(`${match[2]} ${match[3]}`.replace(/:$/, ""), 220)
            }
          ]
        : []
    })
  })
}

/** Longest quoted error line, in characters. */
const ERROR_CHARS = 160

/** The agent's fixes of failed side-effect calls, each with the failure that prompted it. */
const fixesOfFailures = (items: ReadonlyArray<CoveredItem>, { actions, positions }: Actions): Array<Found> => {
  const out: Array<Found> = []
  actions.forEach((action, index) => {
    // An edit that did not apply (its old text matched nothing) is retried, not fixed: no finding about the code.
    if (action.outcome._tag !== "failed" || !ToolActions.isSideEffect(action) || action.kind === "edit") return
    if (!CriticalIdentifiers.isSuperseded(actions, index)) return
    const target = CriticalIdentifiers.targetOf(action)
    const from = positions.get(action.entryId)
    if (from === undefined) return
    let rerun: ToolActions.Action | undefined
    for (let at = index + 1; at < actions.length && rerun === undefined; at++) {
      const later = actions[at]!
      if (CriticalIdentifiers.targetOf(later) === target) rerun = later
    }
    const until = rerun ? (positions.get(rerun.entryId) ?? items.length) : items.length
    for (let at = from + 1; at < until; at++) {
      const later = items[at]!
      if (UserSpeech.spokenText(later.message).trim().length > 0) return
      const text = assistantText(later.message).trim()
      if (text.length >= 20 && changes(later)) {
        out.push({
          at,
          decision: `${clip(decisionText(later, text), DECISION_CHARS)} (${later.entryId})`,
          rationale: `fixing: ${action.command ? `\`${clip(action.command, 80)}\`` : action.toolName} failed with "${clip(action.outcome.error, ERROR_CHARS)}"`
        })
        return
      }
    }
  })
  return out
}

/**
 * The decisions of a range in the order they were made (the budget fill
 * keeps the newest first); one decision text is listed once. A decision
 * answering a user message in `keptEntryIds` (kept verbatim after the
 * checkpoint) points at it instead of quoting it.
 *
 * @category constructors
 */
export const fromRange = (
  items: ReadonlyArray<CoveredItem>,
  keptEntryIds: ReadonlySet<string> = new Set()
): Array<Decision> => {
  const seen = new Set<string>()
  const taken: Actions = {
    actions: ToolActions.actionsOf(items),
    positions: new Map(items.map((item, index) => [item.entryId, index]))
  }
  return [...statedReasons(items, taken), ...fixesOfFailures(items, taken), ...answersToSteering(items, keptEntryIds)]
    .sort((a, b) => a.at - b.at)
    .flatMap(({ decision, rationale }) => {
      const key = decision.replace(/\s*\([^()]*\)$/, "")
      if (seen.has(key)) return []
      seen.add(key)
      return [{ decision, rationale }]
    })
}
