/**
 * The identifiers a handoff must keep (issue #11 requirement 5): judged from
 * the transcript, never from what a summarizer chose to list, so a model's
 * summary and the offline one face the same rule.
 *
 * - identifiers in the user's own words (paths, URLs, hashes, ids, ports —
 *   `UserSpeech.spokenText`, so shell output and pasted logs do not count)
 *   that are still live ({@link livenessIn}): said in the newest
 *   {@link RECENT_USER_TURNS} user turns, or acted on — named by a call
 *   (tool call, text or harness action) after the user said it;
 * - artifacts the agent modified or created (successful edit / write calls);
 * - unresolved errors: the first error line of each failed side-effect call
 *   that no later call with the same target repaired (the latest
 *   {@link MAX_UNRESOLVED_ERRORS}).
 *
 * A path counts as kept when it occurs verbatim or by its last two segments
 * (a summary may drop an absolute prefix); an error counts as kept when its
 * first {@link ERROR_PREFIX_CHARS} characters occur.
 *
 * @since 0.2.0
 */
import type { Identifiers } from "./Checkpoint.ts"
import * as CheckRun from "./CheckRun.ts"
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import * as JsonSafety from "./JsonSafety.ts"
import type { Message } from "./Message.ts"
import * as ShellCommand from "./ShellCommand.ts"
import * as SubstringIndex from "./SubstringIndex.ts"
import * as ToolActions from "./ToolActions.ts"
import * as UserSpeech from "./UserSpeech.ts"

/** Unresolved errors a handoff must keep (the latest ones). */
export const MAX_UNRESOLVED_ERRORS = 3
/** Characters of an error line that must occur for it to count as kept. */
export const ERROR_PREFIX_CHARS = 60

/**
 * User turns (messages in the user's own words, `UserSpeech.isSpeech`) whose
 * identifiers are live by recency ({@link livenessIn}). Own rule: the current
 * request and the ones shortly before it are what a continuing model acts on
 * (in aider's history, 20 turns reach back to the previous afternoon, past
 * the start of the last day's work that the continuity scenario names as the
 * current thread); a URL or path the user said earlier that no call has used since
 * belongs to a request long answered.
 *
 * @category constants
 */
export const RECENT_USER_TURNS = 20

const unique = (items: ReadonlyArray<string>): Array<string> => [...new Set(items)]

/**
 * The last step of a shell command chain (`a && b; c | d` → `c | d`): the step a failure most likely comes from — the
 * pipeline after the last `&&`, `||`, `;` or `&` outside quotes (`ShellCommand.steps`).
 */
const lastStep = (command: string): string => {
  const all = ShellCommand.steps(command)
  const from = all.findLastIndex((step) => step.operator !== "|")
  return ShellCommand.joined(all.slice(Math.max(0, from)))
}

/**
 * What a call acts on, for telling a retry of it: an edit's or create's file
 * (a tool-call edit carries no command — `ToolActions.inputCommand` leaves
 * editor sub-commands out — and a text action's `edit 287:296` names only a
 * line range of the open file, so both are keyed by the file), else its
 * command without its output filters (`ShellCommand.withoutOutputFilters`:
 * `npm run check 2>&1 | tail -5` and `npm run check | grep "error TS"` run
 * the same check) in the directory it started in (`ToolActions.Action`'s `directory`: `npm test` after an
 * earlier call's kept `cd pkg` is not the root's `npm test`), path or tool name.
 *
 * @category analysis
 */
export const targetOf = (action: ToolActions.Action): string =>
  (action.kind === "edit" || action.kind === "create") && action.path !== undefined
    ? action.path
    : action.command !== undefined
      ? `${action.directory === undefined ? "" : `${action.directory}\u0000`}${ShellCommand.withoutOutputFilters(action.command)}`
      : (action.path ?? action.toolName)

/**
 * Whether the failed call `actions[index]` was superseded by a later call: one
 * with the same target ({@link targetOf}; if it failed too, its own error is the one
 * that counts), a later successful command that runs the failed chain's
 * last step (without its output filters) again (`pnpm add x && pnpm tsc` failing, then `pnpm tsc && pnpm
 * test` passing) — for a failed check, a later check that passed on the same scope or a broader one
 * (`CheckRun.covers`: `pytest tests/` passing after `pytest tests/test_a.py::test_x` failed; a narrower
 * `pytest tests/test_a.py::test_x` passing after `pytest tests/` failed holds its text but covers nothing). With
 * `otherMessagesOnly`, later calls of the failed call's own message are not looked at (calls issued together ran
 * in parallel: they do not show the state since). Stops at the first superseding call; copies
 * nothing (it runs once per failed call of a covered range: a copy of the
 * rest per call was quadratic on long sessions, issue #13 req 6).
 *
 * @category analysis
 */
export const isSuperseded = (
  actions: ReadonlyArray<ToolActions.Action>,
  index: number,
  options: { readonly otherMessagesOnly?: boolean } = {}
): boolean => {
  const action = actions[index]!
  const target = targetOf(action)
  const step = action.command === undefined ? "" : lastStep(ShellCommand.withoutOutputFilters(action.command))
  const check = action.kind === "check" ? action.command : undefined
  for (let at = index + 1; at < actions.length; at++) {
    const later = actions[at]!
    if (options.otherMessagesOnly === true && later.entryId === action.entryId) continue
    if (targetOf(later) === target) return true
    if (later.outcome._tag !== "ok" || later.command === undefined) continue
    // A check is superseded by a pass on its scope or a broader one, not by any line that holds its text.
    const directories = { later: later.directory, earlier: action.directory }
    if (
      check !== undefined
        ? CheckRun.covers(later.command, check, directories)
        : step.length > 0 && later.command.includes(step) && later.directory === action.directory
    )
      return true
  }
  return false
}

/**
 * Errors of failed side-effect calls that no later call superseded
 * ({@link isSuperseded}), latest last.
 *
 * @category analysis
 */
export const unresolvedErrors = (actions: ReadonlyArray<ToolActions.Action>): Array<string> => {
  const out: Array<string> = []
  actions.forEach((action, index) => {
    if (action.outcome._tag !== "failed" || !ToolActions.isSideEffect(action)) return
    if (!isSuperseded(actions, index))
      out.push(action.outcome.error.slice(0, IdentifierExtraction.MAX_IDENTIFIER_CHARS))
  })
  return unique(out).slice(-MAX_UNRESOLVED_ERRORS)
}

/**
 * What a message's calls acted on, as text: every string of its tool calls'
 * inputs (a URL written into a file, a path opened, a command run) and the
 * path and command of its `actions` (text actions, edits a harness applied).
 */
const actedText = (message: Message, actions: ReadonlyArray<ToolActions.Action>): string => {
  const inputs =
    message.role === "assistant" && typeof message.content !== "string"
      ? message.content.flatMap((part) => (part.type === "tool-call" ? JsonSafety.stringLeaves(part.input) : []))
      : []
  return [...inputs, ...actions.flatMap((action) => [action.path ?? "", action.command ?? ""])].join("\n")
}

/** The spoken categories {@link liveSpoken} filters (commands and errors have their own rules). */
const SPOKEN: ReadonlyArray<IdentifierExtraction.Category> = ["paths", "ids", "hashes", "urls", "ports"]

/**
 * Whether an identifier the user said in `covered` is still live. It is when
 * the user said it in the newest {@link RECENT_USER_TURNS} turns of the range
 * (the current ask and the requests just before it), or when a call after its
 * first mention acted on it: a tool call's input or a text / harness action
 * names it (a leading `@`, the console's file-mention syntax, dropped) — an
 * API base URL the agent wrote into a config file, a path it opened. A link
 * or path only mentioned in older chat (a pasted page's links, an example
 * path in a question) is not: it was context for a request long answered, and
 * a handoff that must keep every one of them spends its budget on them
 * instead of on the recent work. `actions`: `ToolActions.actionsOf(covered)`,
 * computed when not given. Linear in the range's text: the range's spoken
 * identifiers are judged together when the function is made (a value that is
 * not one of them is judged on its own when asked).
 *
 * @category analysis
 */
export const livenessIn = (
  covered: ReadonlyArray<ToolActions.Item>,
  actions: ReadonlyArray<ToolActions.Action> = ToolActions.actionsOf(covered)
): ((value: string) => boolean) => {
  const speech = covered.map((item) => UserSpeech.spokenText(item.message))
  const turns = speech.flatMap((text, index) => (text.trim().length > 0 ? [index] : []))
  const recentFrom = turns.length > RECENT_USER_TURNS ? turns[turns.length - RECENT_USER_TURNS]! : 0
  const byMessage = new Map<string, Array<ToolActions.Action>>()
  for (const action of actions) {
    const known = byMessage.get(action.entryId)
    if (known === undefined) byMessage.set(action.entryId, [action])
    else known.push(action)
  }
  const acted = covered.map((item) => actedText(item.message, byMessage.get(item.entryId) ?? []))
  // Every value a caller asks about is an identifier of the range's speech, read off the whole speech (the
  // validator, `Extract`) or one message's (the ledger): all of them are judged at once, in one pass of an
  // automaton over the speech and one over the calls' text (`SubstringIndex`), not one scan of the range per value.
  const values = [
    ...new Set(
      [speech.join("\n"), ...speech].flatMap((text) => {
        const found = text.length === 0 ? undefined : IdentifierExtraction.fromText(text, { maxErrors: 0 })
        return found === undefined ? [] : SPOKEN.flatMap((category) => found[category])
      })
    )
  ]
  const judged = judge(values, speech, recentFrom, acted)
  return (value) => judged.get(value) ?? judge([value], speech, recentFrom, acted).get(value)!
}

/**
 * Liveness of `values` (see {@link livenessIn}): live when found in the
 * speech from message `recentFrom` on, or in the calls' text of a message
 * after the first message whose speech holds the value. O(text + matches).
 */
const judge = (
  values: ReadonlyArray<string>,
  speech: ReadonlyArray<string>,
  recentFrom: number,
  acted: ReadonlyArray<string>
): Map<string, boolean> => {
  const spoken = SubstringIndex.make(values)
  const recent = new Set(spoken.foundIn(speech.slice(recentFrom).map((text) => `${text}\n`)))
  const first = new Map<number, number>()
  spoken.eachIn(speech, (id, index) => {
    if (!first.has(id)) first.set(id, index)
  })
  const named = SubstringIndex.make(values.map((value) => value.replace(/^@/, "")))
  // Pieces in order: the last visit is the newest message that names the value.
  const lastActed = new Map<number, number>()
  named.eachIn(acted, (id, index) => lastActed.set(id, index))
  return new Map(
    values.map((value, id) => [value, recent.has(id) || (lastActed.get(id) ?? -1) > (first.get(id) ?? -1)])
  )
}

/**
 * `spoken` (identifiers read off the user's words of a range) without the
 * ones that are no longer live (`isLive`: {@link livenessIn} of that range);
 * commands and errors, which have their own rules, as given.
 *
 * @category analysis
 */
export const liveSpoken = (spoken: Identifiers, isLive: (value: string) => boolean): Identifiers => {
  const out = { ...spoken } as { -readonly [K in IdentifierExtraction.Category]: Array<string> }
  for (const category of SPOKEN) out[category] = spoken[category].filter(isLive)
  return out
}

/**
 * The critical identifiers of a covered range (see the module doc).
 *
 * @category analysis
 */
export const of = (covered: ReadonlyArray<Message>): Identifiers => {
  const spoken = IdentifierExtraction.fromText(covered.map(UserSpeech.spokenText).join("\n"), { maxErrors: 0 })
  const items = covered.map((message, index) => ({ entryId: String(index), message }))
  const actions = ToolActions.actionsOf(items)
  const modified = actions.flatMap((action) =>
    (action.kind === "edit" || action.kind === "create") && action.outcome._tag === "ok" && action.path
      ? [action.path]
      : []
  )
  const live = liveSpoken(spoken, livenessIn(items, actions))
  return {
    ...IdentifierExtraction.empty(),
    paths: unique([...live.paths, ...modified]),
    ids: live.ids,
    hashes: live.hashes,
    urls: live.urls,
    ports: live.ports,
    errors: unresolvedErrors(actions)
  }
}

const tailOf = (path: string): string => path.split("/").filter(Boolean).slice(-2).join("/")

/**
 * Whether `summary` keeps one critical identifier (see the module doc).
 *
 * @category analysis
 */
export const kept = (category: IdentifierExtraction.Category, value: string, summary: string): boolean => {
  if (summary.includes(value)) return true
  if (category === "paths") {
    const short = tailOf(value.replace(/^@/, ""))
    return short.length >= 5 && summary.includes(short)
  }
  if (category === "errors") return summary.includes(value.slice(0, ERROR_PREFIX_CHARS))
  return false
}

/**
 * The critical identifiers `summary` lost.
 *
 * @category analysis
 */
export const missingFrom = (wanted: Identifiers, summary: string): Identifiers => {
  const out = IdentifierExtraction.empty() as { -readonly [K in IdentifierExtraction.Category]: Array<string> }
  for (const category of IdentifierExtraction.categories)
    out[category] = wanted[category].filter((value) => !kept(category, value, summary))
  return out
}
