/**
 * Fills the handoff from a covered range's structure (DESIGN.md
 * "Checkpoints are handoffs"; issue #11 requirement 1): the user's own words
 * (never shell output, slash commands, pasted logs, observations or
 * demonstrations — `UserSpeech`), the agent's tool calls and their outcomes
 * (`ToolActions`, read by `Progress`), its todo / plan tool calls and its
 * own last report.
 *
 * Lists come out oldest first; {@link Fit} keeps the newest when the budget
 * is short.
 *
 * @since 0.2.0
 */
import {
  Checkpoint,
  CheckpointValidation,
  CriticalIdentifiers,
  IdentifierExtraction,
  ToolActions,
  UserSpeech
} from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"
import * as Constraints from "./Constraints.ts"
import * as Decisions from "./Decisions.ts"
import * as KeyIdentifiers from "./KeyIdentifiers.ts"
import * as Ledger from "./Ledger.ts"
import {
  checksPassOf,
  doneOf,
  expectedFailuresOf,
  failureStep,
  failuresOf,
  ordered,
  userCommandsOf
} from "./Progress.ts"
import { reportsOf } from "./Reports.ts"
import { assistantText, clip, clipEnds, ITEM_CHARS, keptPointer, sentences } from "./Text.ts"

/** Longest quoted user ask, in characters. */
export const ASK_CHARS = 500
/** Label of the critical-context line quoting the session's first request (kept with priority by `Fit`). */
export const SESSION_START = "The session started with this request"
/** Label of the critical-context line quoting the latest user message when it was answered (kept with priority). */
export const LATEST_ANSWERED = "Latest user message (answered)"
const PLAN_RE = /^(?:next,?|now,?|then,?|i'?ll|i will|let me|let'?s|the next step|remaining|still to do|todo)\b/i
/**
 * What follows a sequencing word ("Now", "Next", "Then") in a report of
 * finished work: a subject and its verb of state — "Now the theme system has
 * live reload", "Now it works", "Then I added …". A plan is future work: an
 * announced step ("Now let me …", "Then I'll …") or an order ("Now update the
 * table of contents").
 */
const REPORT_AFTER_SEQUENCE_RE =
  /^(?:now|next|then),?\s+(?!(?:i|we)(?:'ll| will| need| have to| am going| 'm going|'re going| are going| should| must)\b)(?:the|this|that|these|those|it|its|it'?s|there|here|everything|all|both|each|every|our|my|your|their|you|users?|they|he|she|(?:we|i)(?:'ve|'re|'m| have| had| am| are| was| were)|(?:we|i)\s+\w+ed)\b/i

const dedupe = (items: ReadonlyArray<string>): Array<string> => [...new Set(items)]

interface Said {
  readonly entryId: string
  readonly text: string
  /** The message's whole spoken text (`text` for a message typed without a slash command). */
  readonly spoken: string
  /** The expanded template of the slash command `text` was typed after (`UserSpeech.commandArguments`). */
  readonly template?: string | undefined
}

/**
 * The user's own words, message by message. A message that expands a slash
 * command's template is what the user typed — the command and its
 * arguments (`UserSpeech.commandArguments`) — with the template aside: the
 * typed task, not the command's boilerplate, is the goal and the source of
 * constraints.
 */
const userSpeech = (items: ReadonlyArray<CoveredItem>): Array<Said> =>
  items.flatMap((item, index) => {
    const text = UserSpeech.spokenText(item.message).trim()
    if (text.length === 0) return []
    const typed = UserSpeech.commandArguments(text, items[index - 1]?.message)
    return typed === undefined
      ? [{ entryId: item.entryId, text, spoken: text }]
      : [
          {
            entryId: item.entryId,
            text: typed.command === undefined ? typed.arguments : `${typed.command} ${typed.arguments}`,
            spoken: text,
            template: typed.template
          }
        ]
  })

/** Longest quoted opening of a slash command's template, in characters. */
const TEMPLATE_CHARS = 160

/**
 * A user message quoted: a long one cut in its middle (`clipEnds` keeps the
 * ask at its start or its end); what was typed after a slash command,
 * followed by where its instructions came from.
 */
const quote = (said: Said, max: number): string =>
  said.template === undefined
    ? `"${clipEnds(said.text, max)}"`
    : `"${clipEnds(said.text, max)}" (typed with a slash command; the command's template of ${said.template.length.toLocaleString("en-US")} characters begins "${clip(said.template, TEMPLATE_CHARS)}")`

const latestTodos = (actions: ReadonlyArray<ToolActions.Action>): ReadonlyArray<ToolActions.TodoItem> | undefined =>
  [...actions].reverse().find((action) => action.kind === "todo" && action.todos !== undefined)?.todos

const lastAssistant = (items: ReadonlyArray<CoveredItem>): Said | undefined => {
  for (let index = items.length - 1; index >= 0; index--) {
    const text = assistantText(items[index]!.message).trim()
    if (text.length > 0) return { entryId: items[index]!.entryId, text, spoken: text }
  }
  return undefined
}

/** A plan sentence that points past the step at hand ("Then …", "After that …", "Next, …"). */
const LATER_STEP_RE = /^(?:then|next|after that|afterwards|once|finally|later)\b/i

/**
 * The plan sentences of the agent's last text — future work, not a report
 * of finished work ({@link REPORT_AFTER_SEQUENCE_RE}). When that message or one
 * after it issued a call whose result is in the range, its plan sentences
 * announced that call ("Let's install the package:" with the install) — it
 * ran, or the user declined it, and is under Done or Failed Approaches — so
 * only the steps it names for after the call ({@link LATER_STEP_RE}) are
 * still ahead. "After it" counts because console importers (Claude Code's
 * and Gemini CLI's terminal logs) write the text and the call as two messages.
 */
const plansOf = (
  said: Said | undefined,
  actions: ReadonlyArray<ToolActions.Action>,
  position: (entryId: string) => number
): Array<string> => {
  if (said === undefined) return []
  const from = position(said.entryId)
  // A call ran when its result is in the range (an unknown outcome with its output ran too: `CheckRun.shownOutcome`).
  const ran = actions.some(
    (action) =>
      position(action.entryId) >= from && (action.outcome._tag !== "unknown" || action.outcome.text !== undefined)
  )
  return sentences(said.text.slice(-3000))
    .filter(
      (sentence) =>
        PLAN_RE.test(sentence) &&
        !REPORT_AFTER_SEQUENCE_RE.test(sentence) &&
        sentence.length >= 20 &&
        (!ran || LATER_STEP_RE.test(sentence))
    )
    .slice(-3)
    .map((sentence) => `${clip(sentence, ITEM_CHARS)} (the agent's plan, ${said.entryId})`)
}

/** The todo items in progress; with no todo list and nothing done yet, the current request itself. */
const inProgressOf = (
  todos: ReadonlyArray<ToolActions.TodoItem>,
  goal: Said | undefined,
  finished: number
): Array<string> => {
  const active = todos.filter((todo) => todo.status === "in_progress").map((todo) => clip(todo.text, ITEM_CHARS))
  if (active.length > 0 || finished > 0) return active
  return [
    goal ? `working on the request of ${goal.entryId} (no changes made yet)` : "no changes made in this range yet"
  ]
}

/** A failed-approach line up to its error ("Bash `x` failed (2 attempts): ", "Edit `x` declined by the user: "). */
export const FAILED_PREFIX_RE = /^.*? (?:failed(?: \(\d+ attempts\))?|declined by the user): /

/**
 * Identifiers a handoff must keep verbatim: those in the user's own words
 * that are still live (`isLive`: `CriticalIdentifiers.livenessIn` of the
 * range — said in its recent turns, or acted on by a later call) and the
 * unresolved errors (see `CheckpointValidation` for the same rule).
 *
 * @category getters
 */
export const criticalIdentifiers = (
  speech: ReadonlyArray<string>,
  failed: ReadonlyArray<string>,
  isLive: (value: string) => boolean
) => {
  const spoken = CriticalIdentifiers.liveSpoken(
    IdentifierExtraction.fromText(speech.join("\n"), { maxErrors: 0 }),
    isLive
  )
  return {
    ...spoken,
    commands: [],
    errors: dedupe(failed.map((line) => line.replace(FAILED_PREFIX_RE, ""))).slice(-5)
  }
}

/**
 * The goal line: the latest task-setting request quoted with its entry id —
 * or, when that request is the message kept verbatim after the checkpoint,
 * a pointer to it and the request before it.
 */
const goalText = (goal: Said | undefined, kept: boolean, before: Said | undefined): string => {
  if (goal === undefined) return ""
  if (!kept)
    return goal.template === undefined
      ? `${clipEnds(goal.text, ASK_CHARS)} (${goal.entryId})`
      : `${quote(goal, ASK_CHARS)} (${goal.entryId})`
  const pointer = `The latest user request this checkpoint covers (${keptPointer(goal.entryId, goal.spoken)}).`
  return before ? `${pointer}\nBefore it (${before.entryId}): ${quote(before, ASK_CHARS)}` : pointer
}

/**
 * Extracts the handoff of a covered range and a split turn's prefix (no
 * previous checkpoint, no size cap). `keptEntryIds`: messages of the range
 * kept verbatim after the checkpoint (the pinned latest user message); the
 * handoff points at them instead of repeating them (issue #11 requirement 3).
 *
 * @category constructors
 */
export const extract = (
  covered: ReadonlyArray<CoveredItem>,
  turnPrefix: ReadonlyArray<CoveredItem> = [],
  keptEntryIds: ReadonlySet<string> = new Set()
): Checkpoint.CheckpointContent => {
  const all = [...covered, ...turnPrefix]
  const speech = userSpeech(all)
  const isKept = (said: Said | undefined) => said !== undefined && keptEntryIds.has(said.entryId)
  const requests = speech.filter((said) => UserSpeech.isTaskSetting(said.text))
  // A path a console showed shortened is the file it stands for, in Done and failures as in the ledger.
  const actions = Ledger.withFullPaths(all, ToolActions.actionsOf(all))
  const isLive = CriticalIdentifiers.livenessIn(all, actions)
  const artifacts = Ledger.fromRange(all, actions, isLive)
  const positions = new Map(all.map((item, index) => [item.entryId, index]))
  const position = (entryId: string) => positions.get(entryId) ?? all.length
  const expectedFailures = expectedFailuresOf(all, actions, position)
  const { failed, unknown, newest: newestFailure } = failuresOf(actions, expectedFailures.expected)
  const todos = latestTodos(actions) ?? []
  const latest = CheckpointValidation.latestUserAsk(all.map((item) => item.message))
  // The user's latest message kept verbatim after the checkpoint is not repeated in it (requirement 3).
  const latestKept = latest !== undefined && keptEntryIds.has(all[latest.index]!.entryId)
  const prefixAsk =
    turnPrefix.length > 0 ? CheckpointValidation.latestUserAsk(turnPrefix.map((item) => item.message)) : undefined
  const pendingUserAsks =
    prefixAsk && !latestKept
      ? [`${clipEnds(prefixAsk.text, ASK_CHARS)} (in progress; the turn continues verbatim after this checkpoint)`]
      : latest?.unresolved && !latestKept
        ? [clipEnds(latest.text, ASK_CHARS)]
        : []
  const open = todos.filter((todo) => todo.status !== "completed")
  const report = lastAssistant(all)
  const goal = requests[requests.length - 1]
  // The session the range ends in started with its first request: in a file of many sessions (aider's history) the
  // range's first request opened an earlier one.
  const sessionStart = all.findLastIndex((item) => item.opensSession === true)
  const first = requests.find((said) => position(said.entryId) >= sessionStart)
  const latestId = latest ? all[latest.index]!.entryId : ""
  const nextSteps = [
    ...open.map((todo) => `${todo.status === "in_progress" ? "[in progress] " : ""}${clip(todo.text, ITEM_CHARS)}`),
    ...(open.length === 0 ? plansOf(report, actions, position) : []),
    ...(open.length === 0 ? failureStep(newestFailure, latest ? latest.index : -1, position) : []),
    ...(pendingUserAsks.length > 0 && open.length === 0
      ? [`Answer the pending ask: ${clip(pendingUserAsks[0]!, ITEM_CHARS)}`]
      : latestKept && (latest?.unresolved || prefixAsk) && open.length === 0
        ? [`Answer the latest user message this checkpoint covers (${keptPointer(latestId, latest!.text)}).`]
        : [])
  ]
  const done = [
    ...ordered([
      ...doneOf(actions, artifacts, position),
      ...checksPassOf(actions, position),
      ...expectedFailures.done,
      ...reportsOf(all, position),
      ...userCommandsOf(all, position)
    ]),
    ...todos.filter((todo) => todo.status === "completed").map((todo) => `todo done: ${clip(todo.text, ITEM_CHARS)}`)
  ]
  const content: Checkpoint.CheckpointContent = {
    ...Checkpoint.emptyContent(),
    goal: goalText(goal, isKept(goal), requests.at(-2)),
    constraints: Constraints.fromSpeech(speech, [
      ...(goal && !isKept(goal) ? [clipEnds(goal.text, ASK_CHARS)] : []),
      ...speech.filter(isKept).map((said) => said.text)
    ]),
    progress: {
      done,
      inProgress: inProgressOf(todos, goal, done.length + unknown.length),
      blocked: unknown
    },
    decisions: Decisions.fromRange(all, keptEntryIds),
    nextSteps:
      nextSteps.length > 0 ? dedupe(nextSteps) : ["Continue from the verbatim messages after this checkpoint."],
    criticalContext: [
      // Not when the goal already quotes it as the request before the kept one.
      ...(first && first !== goal && !isKept(first) && !(isKept(goal) && requests.at(-2) === first)
        ? [`${SESSION_START} (${first.entryId}): ${quote(first, ASK_CHARS)}`]
        : []),
      ...requests
        .filter((said) => said !== first && said !== goal && !isKept(said))
        .map((said) => `User (${said.entryId}): ${quote(said, ITEM_CHARS)}`),
      ...(latest && !latest.unresolved && !prefixAsk && !latestKept && latest.text !== goal?.text
        ? [`${LATEST_ANSWERED}: "${clipEnds(latest.text, ASK_CHARS)}"`]
        : []),
      ...(report ? [`Last assistant report (${report.entryId}): ${clip(report.text, ASK_CHARS)}`] : [])
    ],
    pendingUserAsks,
    identifiers: criticalIdentifiers(
      speech.filter((said) => !isKept(said)).map((said) => said.text),
      failed,
      isLive
    ),
    filesRead: artifacts.filter((a) => a.kind === "file" && a.status === "read").map((a) => a.value),
    filesModified: artifacts.filter((a) => a.kind === "file" && a.status !== "read").map((a) => a.value),
    failedApproaches: failed,
    artifacts,
    keyIdentifiers: KeyIdentifiers.rank(all)
  }
  return content
}
