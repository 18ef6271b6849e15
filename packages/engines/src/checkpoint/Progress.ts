/**
 * What the agent did in a covered range, for the handoff's Progress, Failed
 * Approaches and Next Steps: finished side effects (files created and edited,
 * commands run with their outcome, commits, the user's own shell commands;
 * the agent's completion reports are `Reports`), failed calls no later call superseded
 * (with their attempts), calls whose outcome is unknown, and the next step a
 * failure sets. Read off `ToolActions` — tool calls and text actions alike.
 *
 * @since 0.3.0
 */
import {
  type Checkpoint,
  CriticalIdentifiers,
  type EditChange,
  IdentifierExtraction,
  ToolActions,
  ToolOutcome,
  UserSpeech
} from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"
import * as CommandText from "./CommandText.ts"
import { assistantText, clip, code, ITEM_CHARS, wholeWords } from "./Text.ts"

const dedupe = (items: ReadonlyArray<string>): Array<string> => [...new Set(items)]

/**
 * Longest line of code an edit's clause quotes, in characters: about one line of code — enough for a condition or
 * an import (`if not items:`, `from .client import Client, retry_policy`), short beside the Done item's
 * 220-character quote limit (`ITEM_CHARS`).
 */
const CHANGE_CHARS = 100

/** The clause an edit's Done item ends with: ` — adds \`line\`` (`EditChange`), cut only between words. */
const changeClause = (change: EditChange.Change | undefined): string =>
  change === undefined ? "" : ` — ${change.verb} ${code(change.line, (flat) => wholeWords(flat, CHANGE_CHARS))}`

/**
 * A Done item for a file's edits, as {@link doneOf} writes it: `edited` or `created`, the path in code, the count
 * when more than one (`(3 edits)`), `(by a sub-agent)` when sub-agents made every edit (`ToolActions.Action`'s
 * `source`), then any clause. Groups: verb, path as written, count.
 */
export const EDIT_ITEM_RE = /^(edited|created) (`[^`]*`…?|"[^"]*"…?)(?: \((\d+) edits\))?/

/** Where a Done item's edit clause starts ({@link changeClause}). */
const CHANGE_CLAUSE_RE = / — (?:adds|removes) [`"]/

/**
 * A Done item without the line its edit quotes ({@link changeClause}): the first thing a tight budget drops — the
 * file edit stays listed, its new line is still in the file.
 *
 * @category getters
 */
export const withoutChange = (item: string): string => {
  const clause = item.search(CHANGE_CLAUSE_RE)
  return clause < 0 ? item : item.slice(0, clause)
}

/** One finished item and where it happened (its entry's position), so Done reads oldest → newest across kinds. */
export interface DoneItem {
  readonly at: number
  readonly text: string
}

/**
 * Lines after a command's output that are not output: a shell prompt waiting
 * for the next command (`bash-$`, `$`) and a text-action agent's state footer
 * (SWE-agent's observation template ends "(Open file: …) (Current
 * directory: …) bash-$").
 */
const STATE_LINE_RE = /^\s*(?:[\w.-]*[$#%>]|\((?:Open file|Current directory): [^)]*\))\s*$/

/** Keys of a JSON tool result that identify what happened (ids, status, refs, targets). */
const RESULT_KEY_RE = /(?:id|status|state|ref|url|environment|version|sha|hash)$/i

/**
 * A tool result in one short line: for a JSON object, its identifying
 * scalar fields (`deploymentId dep_…, status succeeded`); otherwise its
 * first line that is not a markdown heading, clipped.
 */
const resultLine = (text: string): string => {
  const trimmed = text.trim()
  if (trimmed.startsWith("{"))
    try {
      const fields = Object.entries(JSON.parse(trimmed) as Record<string, unknown>).filter(
        ([key, value]) => RESULT_KEY_RE.test(key) && (typeof value === "string" || typeof value === "number")
      )
      if (fields.length > 0) return clip(fields.map(([key, value]) => `${key} ${value}`).join(", "), 140)
    } catch {
      // not JSON: the first line below
    }
  // A markdown heading ("## Summary", a subagent's report) names a section, not what happened: the first other line.
  const lines = trimmed.split("\n").filter((line) => line.trim().length > 0)
  return clip(lines.find((line) => !/^\s*#{1,6}\s/.test(line)) ?? lines[0] ?? "", 110)
}

/** Prefixed ids (`dep_01J9…`, `evt_1Qx…`, `cus_…`): the convention most APIs use for what they created. */
const PREFIXED_ID_RE = /\b[a-z]{2,12}_[A-Za-z0-9]{6,}\b/g
/** Longest short Done item without an outcome arrow, in characters. */
const SHORT_DONE_CHARS = 70

/**
 * A Done item in its short form, for a tight budget: the action with only
 * the identifiers of its outcome (hashes, prefixed ids) — `deploy → dep_01J9…`
 * — and an edit without the line it quotes ({@link changeClause}), so every
 * finished side effect can stay listed instead of the oldest being left out.
 *
 * @category getters
 */
export const shortDone = (done: string): string => {
  const item = withoutChange(done)
  // A command is shortened by its pieces (a long path by its tail), not cut at the end: its verb and SQL stay.
  const command = CommandText.shortened(item, SHORT_DONE_CHARS)
  const rest = command === undefined ? item : item.slice(command.length)
  const arrow = rest.indexOf(" → ")
  const action = arrow < 0 ? rest : rest.slice(0, arrow)
  // After a shortened command, what the item says next (` in package 2`, ` (pi:12)`), clipped.
  const head =
    command === undefined
      ? clip(action, SHORT_DONE_CHARS)
      : `${command.text}${action.length <= 20 ? action : ` ${clip(action, 20)}`}`
  if (arrow < 0) return head
  const result = rest.slice(arrow + 3)
  const ids = dedupe([...IdentifierExtraction.fromText(result).hashes, ...(result.match(PREFIXED_ID_RE) ?? [])])
  return `${head}${ids.length > 0 ? ` → ${ids.slice(0, 3).join(", ")}` : ""}`
}

export const doneOf = (
  actions: ReadonlyArray<ToolActions.Action>,
  artifacts: ReadonlyArray<Checkpoint.Artifact>,
  position: (entryId: string) => number
): Array<DoneItem> => {
  const edits = new Map<
    string,
    { count: number; created: boolean; entryId: string; change: EditChange.Change | undefined; bySubAgent: boolean }
  >()
  const done: Array<DoneItem> = []
  for (const action of actions) {
    // A check reports the state the work left and staging drafts a commit: neither is work done (`ToolActions.isWork`).
    if (action.outcome._tag !== "ok" || !ToolActions.isWork(action)) continue
    const at = position(action.entryId)
    if ((action.kind === "edit" || action.kind === "create") && action.path !== undefined) {
      const known = edits.get(action.path)
      edits.set(action.path, {
        count: (known?.count ?? 0) + 1,
        created: known?.created ?? action.kind === "create",
        entryId: action.entryId,
        // The newest edit's change: an older edit's line may be gone since.
        change: action.change,
        bySubAgent: (known?.bySubAgent ?? true) && action.source === "sub-agent"
      })
    } else if (action.command !== undefined && !/\bgit\s+commit\b/.test(action.command)) {
      const result = action.outcome.text
        .trim()
        .split("\n")
        .filter((line) => line.trim() && !STATE_LINE_RE.test(line))
        .slice(-1)[0]
      done.push({
        at,
        text: `ran ${CommandText.shown(CommandText.clipped(action.command))}${result ? ` → ${clip(result, 100)}` : ""}`
      })
    } else if (action.command === undefined) {
      done.push({
        at,
        text: `${action.toolName}${action.path ? ` ${code(action.path)}` : action.description ? ` "${clip(action.description, 60)}"` : ""} → ${resultLine(action.outcome.text)}`
      })
    }
  }
  for (const [path, edit] of edits)
    done.push({
      at: position(edit.entryId),
      text: `${edit.created ? "created" : "edited"} ${code(path)}${edit.count > 1 ? ` (${edit.count} edits)` : ""}${edit.bySubAgent ? " (by a sub-agent)" : ""}${changeClause(edit.change)}`
    })
  for (const artifact of artifacts)
    if (artifact.kind === "commit")
      done.push({
        at: position(artifact.entryIds[artifact.entryIds.length - 1] ?? ""),
        text: `committed ${code(artifact.value.split(" ")[0]!)} ${clip(artifact.value.slice(artifact.value.indexOf(" ") + 1), 120)}`
      })
  return done
}

/**
 * The checks that show the finished work passes: each check (`ToolActions`
 * kind `check` — tests, type-check, lint, build) run after the range's last
 * work that did not fail, whose newest run there passed, as one Done line
 * (`checks pass: \`npm test\``). Every other check run is left out of Done:
 * it reported a state the work went on to change, and a failed one is a
 * failure until a later run supersedes it. Runs of one check are told by
 * their supersede key (`CriticalIdentifiers.targetOf`).
 */
export const checksPassOf = (
  actions: ReadonlyArray<ToolActions.Action>,
  position: (entryId: string) => number
): Array<DoneItem> => {
  const lastWork = actions.findLastIndex((action) => ToolActions.isWork(action) && action.outcome._tag !== "failed")
  const newest = new Map<string, ToolActions.Action>()
  for (const action of actions.slice(lastWork + 1))
    if (action.kind === "check") newest.set(CriticalIdentifiers.targetOf(action), action)
  return [...newest.values()].flatMap((action) =>
    action.outcome._tag === "ok"
      ? [{ at: position(action.entryId), text: `checks pass: ${CommandText.shownRun(action)}` }]
      : []
  )
}

/** Shell commands the user ran themselves (pi's `!cmd`, Claude Code's `<bash-input>`, aider's `/run`): part of the work done. */
export const userCommandsOf = (
  items: ReadonlyArray<CoveredItem>,
  position: (entryId: string) => number
): Array<DoneItem> =>
  items.flatMap((item) => {
    const command = UserSpeech.shellCommand(item.message)
    return command
      ? [{ at: position(item.entryId), text: `the user ran ${CommandText.shown(command)} (${item.entryId})` }]
      : []
  })

/** Done items oldest first; an item said again (the same report, the same command) is listed once, at its newest. */
export const ordered = (items: ReadonlyArray<DoneItem>): Array<string> => {
  const newest = new Map<string, DoneItem>()
  for (const item of items) {
    const key = item.text.replace(/\s*\([^()]*\)$/, "")
    const known = newest.get(key)
    if (!known || item.at >= known.at) newest.set(key, item)
  }
  return [...newest.values()].sort((a, b) => a.at - b.at).map((item) => item.text)
}

/** The newest failed call no later call superseded; `declined` when the user declined it (`ToolOutcome.isDeclined`). */
export interface NewestFailure {
  readonly entryId: string
  readonly text: string
  readonly declined: boolean
}

/**
 * A call in words: its tool and target (and where it started, `CommandText.directoryOf`) — the file and the command for an edit whose command names no file (a text
 * action's `edit 12:15`), the tool name left out when the command already starts with it.
 */
const callText = (action: ToolActions.Action): string => {
  const target = action.command ?? action.path
  if (target === undefined) return action.toolName
  const call = `${target.startsWith(action.toolName) ? code(target) : `${action.toolName} ${code(target)}`}${CommandText.directoryOf(action)}`
  return action.path !== undefined && action.command !== undefined && !action.command.includes(action.path)
    ? `${call} on ${code(action.path)}`
    : call
}

/**
 * Whether the user declined a call (`ToolOutcome.isDeclined`): it never ran.
 *
 * @category guards
 */
export const isDeclined = (action: ToolActions.Action): boolean => ToolOutcome.isDeclined(action.outcome)

/**
 * Failed side-effect calls no later call superseded, and side-effect calls whose outcome is unknown (interrupted,
 * no result recorded). An unknown outcome is dropped once a later call on the same target ran (its result shows
 * the state since — the same rule as failures, `CriticalIdentifiers.isSuperseded`; calls of the same message ran in
 * parallel and do not supersede each other), and identical calls of one
 * message (parallel edits of a file the user interrupted) are one line with their count.
 */
export const failuresOf = (
  actions: ReadonlyArray<ToolActions.Action>,
  expected: ReadonlySet<ToolActions.Action> = new Set()
): { failed: Array<string>; unknown: Array<string>; newest?: NewestFailure } => {
  const failed: Array<string> = []
  let newest: NewestFailure | undefined
  const unknownCalls = new Map<string, { readonly action: ToolActions.Action; count: number }>()
  actions.forEach((action, index) => {
    const target = action.command ?? action.path
    if (action.outcome._tag === "failed" && !expected.has(action)) {
      // The same rule as the validator's unresolved errors: a later run of the same target supersedes a failure.
      if (!CriticalIdentifiers.isSuperseded(actions, index) && action.kind !== "read" && action.kind !== "look") {
        // Earlier failed runs of the same target are attempts of this one (a retried edit that kept failing).
        const retried = CriticalIdentifiers.targetOf(action)
        let attempts = 0
        for (let at = 0; at <= index; at++) {
          const earlier = actions[at]!
          if (earlier.outcome._tag === "failed" && CriticalIdentifiers.targetOf(earlier) === retried) attempts++
        }
        const declined = isDeclined(action)
        // A declined call never ran: the user said no, the approach did not fail.
        const verdict = declined ? "declined by the user" : `failed${attempts > 1 ? ` (${attempts} attempts)` : ""}`
        newest = {
          entryId: action.entryId,
          text: `${callText(action)} ${verdict}: ${clip(action.outcome.error, 160)}`,
          declined
        }
        failed.push(newest.text)
      }
    } else if (
      action.outcome._tag === "unknown" &&
      ToolActions.isSideEffect(action) &&
      // Calls issued in the same message ran in parallel: only a call of a later message shows the state since.
      !CriticalIdentifiers.isSuperseded(actions, index, { otherMessagesOnly: true })
    ) {
      const key = `${action.entryId}\u0000${action.toolName}\u0000${target ?? ""}`
      const known = unknownCalls.get(key)
      if (known) known.count++
      else unknownCalls.set(key, { action, count: 1 })
    }
  })
  const unknown = [...unknownCalls.values()].map(({ action, count }) => {
    const target = action.command ?? action.path
    const call = `${action.toolName}${target ? ` ${code(target)}` : ""}`
    // A check that ran and printed only what its filter let through (`CheckRun.shownOutcome`).
    if (action.outcome._tag === "unknown" && action.outcome.text !== undefined) {
      // A quiet filter (`| grep -q passed`) printed nothing: say so, not an empty quote.
      const shown = action.outcome.text.trim().split("\n")[0]!
      const printed = shown === "" ? "nothing" : code(shown, (flat) => flat.slice(0, 60))
      return `${call} ran, but its output filter hid whether it passed (it printed ${printed}, ${action.entryId}): outcome unknown — run it without the filter before relying on it`
    }
    return `${call} was issued${count > 1 ? ` ${count} times` : ""} but no result was recorded (${action.entryId}): outcome unknown — check its status before any retry`
  })
  return { failed: dedupe(failed), unknown, ...(newest ? { newest } : {}) }
}

/**
 * The agent's words that a failure was the outcome it wanted: it reproduced
 * the reported bug ("The script has successfully reproduced the bug", "This
 * confirms the issue"), or failed as expected (a test written to fail first).
 */
const EXPECTED_RE =
  /\b(?:reproduc(?:ed|es|ing)\b|confirm(?:s|ed|ing)? (?:the|this|that) (?:issue|bug|problem|error|failure|behaviou?r)|(?:fails?|failed|failing|errors?|raised?|raises|throws?|threw)\b[^.!?\n]{0,40}\bas expected)/i
/** A negation just before the words ("could not reproduce", "did not fail as expected"). */
const NEGATED_RE = /\b(?:not|n't|never|unable to|failed to|no longer)\s+(?:\w+\s+){0,3}$/i

/** Whether the agent's text says a failure was the outcome it wanted ({@link EXPECTED_RE}, not negated). */
const saysExpected = (text: string): boolean => {
  const head = text.slice(0, 600)
  const match = EXPECTED_RE.exec(head)
  return match !== null && !NEGATED_RE.test(head.slice(Math.max(0, match.index - 40), match.index))
}

/**
 * Failed calls whose failure was the point — a reproduction of the reported
 * bug, a test run that fails as expected — told by the agent's next words
 * (its first text after the call, before the user speaks again:
 * {@link EXPECTED_RE}). They are findings, not failed approaches: listed as
 * done with their error (`ran \`python repro.py\` → the expected failure: …`), so the
 * next model neither retries them as broken nor loses what they showed.
 */
export const expectedFailuresOf = (
  items: ReadonlyArray<CoveredItem>,
  actions: ReadonlyArray<ToolActions.Action>,
  position: (entryId: string) => number
): { readonly expected: Set<ToolActions.Action>; readonly done: Array<DoneItem> } => {
  const expected = new Set<ToolActions.Action>()
  const done: Array<DoneItem> = []
  for (const action of actions) {
    if (action.outcome._tag !== "failed" || !ToolActions.isSideEffect(action)) continue
    const from = position(action.entryId)
    for (let at = from + 1; at < items.length; at++) {
      const message = items[at]!.message
      if (UserSpeech.isSpeech(message)) break
      const text = message.role === "assistant" ? assistantText(message).trim() : ""
      if (text.length === 0) continue
      if (saysExpected(text)) {
        expected.add(action)
        done.push({
          at: from,
          text: `ran ${callText(action)} → the expected failure: ${clip(action.outcome.error, 160)}`
        })
      }
      break
    }
  }
  return { expected, done }
}

/**
 * The next step a failure sets: the newest failed call no later call
 * superseded, when it happened after the user's latest message — the work
 * stopped at it (Claude Code's compact prompt: the next step "directly in
 * line with the most recent work"; its "Errors and fixes" section). An
 * older failure stays a failed approach only: the user has moved on since.
 * A call the user declined is not a failure to resolve: it stays a failed
 * approach (not to be retried blindly), and the user's next words say what
 * follows.
 */
export const failureStep = (
  newest: NewestFailure | undefined,
  latestAskAt: number,
  position: (entryId: string) => number
): Array<string> =>
  newest !== undefined && !newest.declined && position(newest.entryId) > latestAskAt
    ? [`Resolve the failure the work stopped at: ${clip(newest.text, ITEM_CHARS)}`]
    : []
