/**
 * Decisions with their reasons (issue #11 requirement 1): the choices a
 * handoff must carry so the next model does not undo them. A decision is a
 * choice, in the agent's words — the clause that chooses, never the whole
 * answer or explanation around it (`Statements`). Three sources:
 *
 * - a steering question or correction by the user ("why would we track X
 *   here? the session keeps track of those, no?") and the agent's conclusion:
 *   the first choice it states after the question, provided a change (an
 *   edit, write or command) follows before the user speaks — or, when it
 *   states none, the change itself — with the user's question as its reason;
 * - an agent sentence that states its reason ("… because …", "… instead of …"),
 *   unless it explains rather than decides (to the user, a pointer, a
 *   finding, a hypothesis, a failure's cause — `Statements.explains`);
 * - a fix and the failure that prompted it: a side-effect call failed (a
 *   check, a build, a test run — not an edit that did not apply, which is
 *   retried), and the agent's first message after it that
 *   comes with a change, before the same call ran again, is the decision, with
 *   the failure's first error line as its reason — the finding that rules out
 *   undoing the fix (a later run of the same call passed or replaced it:
 *   `CriticalIdentifiers.isSuperseded`).
 *
 * A choice the user refused is none: its calls declined, the user's next
 * message turning it down ("No, …", "don't …" — `Constraints.isRejection`),
 * or a later message telling the agent to take out what it names ("drop the
 * `X` nonsense").
 * Decisions are listed in the order they were made, so the budget keeps the
 * newest.
 *
 * @since 0.2.0
 */
import { CriticalIdentifiers, ToolActions, UserSpeech } from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"
import { isRejection } from "./Constraints.ts"
import { isDeclined } from "./Progress.ts"
import { choiceOf, explains, LABEL_RE, plainStatement } from "./Statements.ts"
import { assistantText, clip, keptPointer, sentences } from "./Text.ts"

export { plainStatement } from "./Statements.ts"

/** One decision and its reason. */
export interface Decision {
  readonly decision: string
  readonly rationale: string
}

const RATIONALE_RE =
  /^(.{12,220}?)[,;:]?\s+\b(because|since|so that|instead of|rather than|to avoid|otherwise)\b\s+(.{6,220})$/i
/** A user message that steers: a question to the agent or a correction (or a refusal: `Constraints.isRejection`). */
const STEERING_RE = /\?|^\s*(?:no\b|nope\b|actually\b|wait\b|instead\b|don'?t\b|stop\b|that'?s wrong|wrong\b|why\b)/i
/** Longest decision text, in characters. */
const DECISION_CHARS = 260
/** Longest quoted question, in characters. */
const QUESTION_CHARS = 140

/** A decision found at `at` (position of its entry in the range). */
interface Found extends Decision {
  readonly at: number
}

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
 * The choice a message states (`Statements.choiceOf`: its clause that
 * chooses — an answer or an explanation around it is not the decision), or —
 * when no clause chooses — the change its message made ("edited
 * `src/a.ts`", "ran `npm test`"), so a steering answer still says what was
 * done about it.
 */
const decisionText = (item: CoveredItem, text: string): string => {
  const choice = choiceOf(wordsBeforeCode(text), DECISION_CHARS)
  if (choice.length > 0) return choice
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

/**
 * The message that concludes the agent's answer to a steering question, of
 * the messages from `from` until the user speaks again: the first that states
 * a choice (`Statements.choiceOf` — "Let me add a file watcher:" before the
 * reads that prepare it), provided a change follows it before the user
 * speaks; else the first with text that comes with a change. `undefined` when
 * nothing changed.
 */
const conclusion = (items: ReadonlyArray<CoveredItem>, from: number): number | undefined => {
  let chose: number | undefined
  for (let at = from; at < items.length; at++) {
    const later = items[at]!
    if (UserSpeech.spokenText(later.message).trim().length > 0) return undefined
    const text = assistantText(later.message).trim()
    if (chose === undefined && text.length >= 20 && choiceOf(wordsBeforeCode(text), DECISION_CHARS).length > 0)
      chose = at
    if (changes(later) && (chose !== undefined || text.length >= 20)) return chose ?? at
  }
  return undefined
}

/** The agent's conclusions that answered a steering question with a change ({@link conclusion}). */
const answersToSteering = (items: ReadonlyArray<CoveredItem>, keptEntryIds: ReadonlySet<string>): Array<Found> =>
  items.flatMap((item, index) => {
    const said = UserSpeech.spokenText(item.message).trim()
    if (said.length === 0 || !(STEERING_RE.test(said.slice(0, 600)) || isRejection(said))) return []
    const at = conclusion(items, index + 1)
    if (at === undefined) return []
    const later = items[at]!
    return [
      {
        at,
        decision: `${clip(decisionText(later, assistantText(later.message).trim()), DECISION_CHARS)} (${later.entryId})`,
        rationale: keptEntryIds.has(item.entryId)
          ? `answering the user (${keptPointer(item.entryId, said)})`
          : `answering the user (${item.entryId}): "${clip(said, QUESTION_CHARS)}"`
      }
    ]
  })

/**
 * A reason stated before the choice ("Since no custom commands are available,
 * I'll split the work into subtasks", "Instead of piping the file, I'll name
 * it in the prompt"): English puts the cause — or the alternative set aside —
 * first as often as last. Only a choice the agent makes itself (its clause
 * opens with I / we / let's) counts — "Since the lock is stale, the build
 * stops" reports a finding.
 */
const REASON_FIRST_RE =
  /^(because|since|given that|instead of|rather than)\s+(.{6,220}?),\s+((?:i|we|let(?:'s|\s+(?:me|us)))\b.{12,220})$/i

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
    const said = text.length === 0 ? [] : sentences(text.slice(0, 6000))
    // A label heading a sentence ("Schema-Drift Detection: Because …") is not its clause (`Statements.LABEL_RE`).
    return said
      .map((sentence) => sentence.replace(LABEL_RE, ""))
      .flatMap((sentence) => {
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

/**
 * For each position: whether the user's next message after it turns down
 * what the agent did or proposed there (`Constraints.isRejection`: "No, …",
 * "don't …", "that's wrong") — a choice or a hypothesis the user refused is
 * not a decision in force, whatever reason it stated. The answer to the
 * refusal comes after it and stands. One backward pass.
 */
const rejectedAt = (items: ReadonlyArray<CoveredItem>): Array<boolean> => {
  const rejected = new Array<boolean>(items.length).fill(false)
  let next = false
  for (let at = items.length - 1; at >= 0; at--) {
    const said = UserSpeech.spokenText(items[at]!.message).trim()
    if (said.length > 0) next = isRejection(said)
    else rejected[at] = next
  }
  return rejected
}

/**
 * The user telling the agent to take a named thing out ("drop the
 * `ApplyShellCommandsError` nonsense", "remove FooCache", "revert the
 * `retry_once` change"): the verb, an optional article, then the name — in
 * backticks, or a code-like word (an inner capital, an underscore or a dot).
 */
const REMOVAL_RE =
  /\b(?:drop|remove|undo|revert|delete|get rid of|rip out|back out|throw away|ditch)\s+(?:(?:the|that|this|these|those|all|your|our)\s+)?(?:`([^`\n]{2,80})`|([A-Za-z_$][\w$]*(?:[A-Z_.][\w$]*)+))/gi

/**
 * For each position: whether a later user message tells the agent to take
 * out a thing the decision found there names (a choice the user withdrew
 * is not in force: an aider session kept "raise the `ApplyShellCommandsError`"
 * as a Key Decision after the user said three times to drop it). The
 * agent's later decisions (to remove it) stand. One backward pass.
 */
const withdrawnAt = (items: ReadonlyArray<CoveredItem>): Array<ReadonlySet<string>> => {
  const out = new Array<ReadonlySet<string>>(items.length)
  let later = new Set<string>()
  for (let at = items.length - 1; at >= 0; at--) {
    const said = UserSpeech.spokenText(items[at]!.message)
    if (said.length > 0) {
      const names = [...said.matchAll(REMOVAL_RE)].map((match) => (match[1] ?? match[2])!)
      if (names.length > 0) later = new Set([...later, ...names])
    }
    out[at] = later
  }
  return out
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
  const rejected = rejectedAt(items)
  const withdrawn = withdrawnAt(items)
  const keyOf = (decision: string) => decision.replace(/\s*\([^()]*\)$/, "").replace(/[.:]$/, "")
  const found = [
    ...statedReasons(items, taken),
    ...fixesOfFailures(items, taken),
    ...answersToSteering(items, keptEntryIds)
  ].filter(({ at, decision }) => !rejected[at] && ![...withdrawn[at]!].some((name) => decision.includes(name)))
  // One message's choice found twice (its reason sentence, and as the answer to the user) is listed once, in full.
  const atPosition = new Map<number, Array<Found>>()
  for (const one of found) atPosition.set(one.at, [...(atPosition.get(one.at) ?? []), one])
  const within = (one: Found, index: number) =>
    atPosition.get(one.at)!.some((other) => {
      const [mine, theirs] = [keyOf(one.decision), keyOf(other.decision)]
      return other !== one && theirs.includes(mine) && (theirs.length > mine.length || found.indexOf(other) < index)
    })
  return found
    .filter((one, index) => !within(one, index))
    .sort((a, b) => a.at - b.at)
    .flatMap(({ decision, rationale }) => {
      const key = keyOf(decision)
      if (seen.has(key)) return []
      seen.add(key)
      return [{ decision, rationale }]
    })
}
