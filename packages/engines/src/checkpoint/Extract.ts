/**
 * Fills the handoff from a covered range's structure (DESIGN.md
 * "Checkpoints are handoffs"; issue #11 requirement 1): the user's own words
 * (never shell output, slash commands, pasted logs, observations or
 * demonstrations — `UserSpeech`), the agent's tool calls and their outcomes
 * (`ToolActions`), its todo / plan tool calls and its own last report.
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
import { assistantText, clip, sentences } from "./Text.ts"

/** Longest quoted user ask, in characters. */
export const ASK_CHARS = 500
/** Longest other quoted item, in characters. */
export const ITEM_CHARS = 220
/** Label of the critical-context line quoting the session's first request (kept with priority by `Fit`). */
export const SESSION_START = "The session started with this request"
/** Label of the critical-context line quoting the latest user message when it was answered (kept with priority). */
export const LATEST_ANSWERED = "Latest user message (answered)"
/** Prefix of a Done item that is the agent's own completion report (not a tool's evidence). */
export const REPORTED = "reported:"
/** An assistant's report of finished work ("Fixed …", "I've added …"). */
const REPORT_RE =
  /^(?:i(?:'ve| have)? )?(?:fixed|added|created|updated|removed|implemented|committed|refactored|renamed|moved|wrote|changed|replaced|deleted|converted|extracted|split|merged|pushed|installed|reverted|done)\s+\S+(?:\s+\S+){2}/i
/** Code or a lead-in rather than a report sentence ("updated=…", "… into clear steps:"). */
const NOT_REPORT_RE = /[=;{}]|:$/
const PLAN_RE = /^(?:next,?|now,?|then,?|i'?ll|i will|let me|let'?s|the next step|remaining|still to do|todo)\b/i

const dedupe = (items: ReadonlyArray<string>): Array<string> => [...new Set(items)]

interface Said {
  readonly entryId: string
  readonly text: string
}

const userSpeech = (items: ReadonlyArray<CoveredItem>): Array<Said> =>
  items.flatMap((item) => {
    const text = UserSpeech.spokenText(item.message).trim()
    return text.length > 0 ? [{ entryId: item.entryId, text }] : []
  })

/** A command or path in backticks: a verbatim prefix (the ellipsis outside the quotes), so it still occurs in the transcript. */
const code = (text: string): string => {
  const flat = text.trim()
  const head = flat.length <= 140 ? flat : flat.slice(0, 139)
  return head.includes("`") ? `"${head}"${head === flat ? "" : "…"}` : `\`${head}\`${head === flat ? "" : "…"}`
}

/** One finished item and where it happened (its entry's position), so Done reads oldest → newest across kinds. */
interface DoneItem {
  readonly at: number
  readonly text: string
}

/** Keys of a JSON tool result that identify what happened (ids, status, refs, targets). */
const RESULT_KEY_RE = /(?:id|status|state|ref|url|environment|version|sha|hash)$/i

/**
 * A tool result in one short line: for a JSON object, its identifying
 * scalar fields (`deploymentId dep_…, status succeeded`); otherwise its
 * first line, clipped.
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
  return clip(trimmed.split("\n")[0] ?? "", 110)
}

/** Prefixed ids (`dep_01J9…`, `evt_1Qx…`, `cus_…`): the convention most APIs use for what they created. */
const PREFIXED_ID_RE = /\b[a-z]{2,12}_[A-Za-z0-9]{6,}\b/g
/** Longest short Done item without an outcome arrow, in characters. */
const SHORT_DONE_CHARS = 70

/**
 * A Done item in its short form, for a tight budget: the action with only
 * the identifiers of its outcome (hashes, prefixed ids) — `deploy → dep_01J9…`
 * — so every finished side effect can stay listed instead of the oldest being
 * left out.
 *
 * @category getters
 */
export const shortDone = (item: string): string => {
  const arrow = item.indexOf(" → ")
  if (arrow < 0) return clip(item, SHORT_DONE_CHARS)
  const result = item.slice(arrow + 3)
  const ids = dedupe([...IdentifierExtraction.fromText(result).hashes, ...(result.match(PREFIXED_ID_RE) ?? [])])
  return `${clip(item.slice(0, arrow), SHORT_DONE_CHARS)}${ids.length > 0 ? ` → ${ids.slice(0, 3).join(", ")}` : ""}`
}

const doneOf = (
  actions: ReadonlyArray<ToolActions.Action>,
  artifacts: ReadonlyArray<Checkpoint.Artifact>,
  position: (entryId: string) => number
): Array<DoneItem> => {
  const edits = new Map<string, { count: number; created: boolean; entryId: string }>()
  const done: Array<DoneItem> = []
  for (const action of actions) {
    if (action.outcome._tag !== "ok" || !ToolActions.isSideEffect(action)) continue
    const at = position(action.entryId)
    if ((action.kind === "edit" || action.kind === "create") && action.path !== undefined) {
      const known = edits.get(action.path)
      edits.set(action.path, {
        count: (known?.count ?? 0) + 1,
        created: known?.created ?? action.kind === "create",
        entryId: action.entryId
      })
    } else if (action.command !== undefined && !/\bgit\s+commit\b/.test(action.command)) {
      const result = action.outcome.text
        .trim()
        .split("\n")
        .filter((line) => line.trim())
        .slice(-1)[0]
      done.push({ at, text: `ran ${code(action.command)}${result ? ` → ${clip(result, 100)}` : ""}` })
    } else if (action.command === undefined) {
      done.push({
        at,
        text: `${action.toolName}${action.path ? ` ${code(action.path)}` : ""} → ${resultLine(action.outcome.text)}`
      })
    }
  }
  for (const [path, edit] of edits)
    done.push({
      at: position(edit.entryId),
      text: `${edit.created ? "created" : "edited"} ${code(path)}${edit.count > 1 ? ` (${edit.count} edits)` : ""}`
    })
  for (const artifact of artifacts)
    if (artifact.kind === "commit")
      done.push({
        at: position(artifact.entryIds[artifact.entryIds.length - 1] ?? ""),
        text: `committed ${code(artifact.value.split(" ")[0]!)} ${clip(artifact.value.slice(artifact.value.indexOf(" ") + 1), 120)}`
      })
  return done
}

/** Shell commands the user ran themselves (pi's `!cmd`, Claude Code's `<bash-input>`, aider's `/run`): part of the work done. */
const userCommandsOf = (items: ReadonlyArray<CoveredItem>, position: (entryId: string) => number): Array<DoneItem> =>
  items.flatMap((item) => {
    const command = UserSpeech.shellCommand(item.message)
    return command ? [{ at: position(item.entryId), text: `the user ran ${code(command)} (${item.entryId})` }] : []
  })

/** Done items oldest first; an item said again (the same report, the same command) is listed once, at its newest. */
const ordered = (items: ReadonlyArray<DoneItem>): Array<string> => {
  const newest = new Map<string, DoneItem>()
  for (const item of items) {
    const key = item.text.replace(/\s*\([^()]*\)$/, "")
    const known = newest.get(key)
    if (!known || item.at >= known.at) newest.set(key, item)
  }
  return [...newest.values()].sort((a, b) => a.at - b.at).map((item) => item.text)
}

/**
 * Failed side-effect calls no later call superseded, and side-effect calls whose outcome is unknown (interrupted,
 * no result recorded). An unknown outcome is dropped once a later call on the same target ran (its result shows
 * the state since — the same rule as failures, `CriticalIdentifiers.isSuperseded`; calls of the same message ran in
 * parallel and do not supersede each other), and identical calls of one
 * message (parallel edits of a file the user interrupted) are one line with their count.
 */
const failuresOf = (actions: ReadonlyArray<ToolActions.Action>): { failed: Array<string>; unknown: Array<string> } => {
  const failed: Array<string> = []
  const unknownCalls = new Map<string, { readonly action: ToolActions.Action; count: number }>()
  actions.forEach((action, index) => {
    const target = action.command ?? action.path
    if (action.outcome._tag === "failed") {
      // The same rule as the validator's unresolved errors: a later run of the same target supersedes a failure.
      if (!CriticalIdentifiers.isSuperseded(actions, index) && action.kind !== "read" && action.kind !== "look")
        failed.push(`${action.toolName}${target ? ` ${code(target)}` : ""} failed: ${clip(action.outcome.error, 160)}`)
    } else if (
      action.outcome._tag === "unknown" &&
      ToolActions.isSideEffect(action) &&
      // Calls issued in the same message ran in parallel: only a call of a later message shows the state since.
      !CriticalIdentifiers.isSuperseded(
        actions.filter((later, at) => at <= index || later.entryId !== action.entryId),
        index
      )
    ) {
      const key = `${action.entryId}\u0000${action.toolName}\u0000${target ?? ""}`
      const known = unknownCalls.get(key)
      if (known) known.count++
      else unknownCalls.set(key, { action, count: 1 })
    }
  })
  const unknown = [...unknownCalls.values()].map(({ action, count }) => {
    const target = action.command ?? action.path
    return `${action.toolName}${target ? ` ${code(target)}` : ""} was issued${count > 1 ? ` ${count} times` : ""} but no result was recorded (${action.entryId}): outcome unknown — check its status before any retry`
  })
  return { failed: dedupe(failed), unknown }
}

/** Completion reports of assistant answers (messages without tool calls): one per answer, its first report sentence. */
const reportsOf = (items: ReadonlyArray<CoveredItem>, position: (entryId: string) => number): Array<DoneItem> =>
  items.flatMap((item) => {
    const message = item.message
    if (
      message.role !== "assistant" ||
      (typeof message.content !== "string" && message.content.some((part) => part.type === "tool-call"))
    )
      return []
    const sentence = sentences(assistantText(message).slice(0, 3000)).find(
      (line) => REPORT_RE.test(line) && !NOT_REPORT_RE.test(line)
    )
    return sentence
      ? [{ at: position(item.entryId), text: `${REPORTED} ${clip(sentence, ITEM_CHARS)} (${item.entryId})` }]
      : []
  })

const latestTodos = (actions: ReadonlyArray<ToolActions.Action>): ReadonlyArray<ToolActions.TodoItem> | undefined =>
  [...actions].reverse().find((action) => action.kind === "todo" && action.todos !== undefined)?.todos

const lastAssistant = (items: ReadonlyArray<CoveredItem>): Said | undefined => {
  for (let index = items.length - 1; index >= 0; index--) {
    const text = assistantText(items[index]!.message).trim()
    if (text.length > 0) return { entryId: items[index]!.entryId, text }
  }
  return undefined
}

const plansOf = (said: Said | undefined): Array<string> =>
  said === undefined
    ? []
    : sentences(said.text.slice(-3000))
        .filter((sentence) => PLAN_RE.test(sentence) && sentence.length >= 20)
        .slice(-3)
        .map((sentence) => `${clip(sentence, ITEM_CHARS)} (the agent's plan, ${said.entryId})`)

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

/**
 * Identifiers a handoff must keep verbatim: those in the user's own words
 * and the unresolved errors (see `CheckpointValidation` for the same rule).
 *
 * @category getters
 */
export const criticalIdentifiers = (speech: ReadonlyArray<string>, failed: ReadonlyArray<string>) => {
  const spoken = IdentifierExtraction.fromText(speech.join("\n"), { maxErrors: 0 })
  return {
    ...spoken,
    commands: [],
    errors: dedupe(failed.map((line) => line.slice(line.indexOf("failed: ") + 8))).slice(-5)
  }
}

/** How the handoff points at a message it does not repeat. */
export const KEPT_NOTE = "kept verbatim after this checkpoint"

/**
 * The goal line: the latest task-setting request quoted with its entry id —
 * or, when that request is the message kept verbatim after the checkpoint,
 * a pointer to it and the request before it.
 */
const goalText = (goal: Said | undefined, kept: boolean, before: Said | undefined): string => {
  if (goal === undefined) return ""
  if (!kept) return `${clip(goal.text, ASK_CHARS)} (${goal.entryId})`
  const pointer = `The latest user request this checkpoint covers (${goal.entryId}), ${KEPT_NOTE}.`
  return before ? `${pointer}\nBefore it (${before.entryId}): "${clip(before.text, ASK_CHARS)}"` : pointer
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
  const actions = ToolActions.actionsOf(all)
  const artifacts = Ledger.fromRange(all, actions)
  const { failed, unknown } = failuresOf(actions)
  const todos = latestTodos(actions) ?? []
  const latest = CheckpointValidation.latestUserAsk(all.map((item) => item.message))
  // The user's latest message kept verbatim after the checkpoint is not repeated in it (requirement 3).
  const latestKept = latest !== undefined && keptEntryIds.has(all[latest.index]!.entryId)
  const prefixAsk =
    turnPrefix.length > 0 ? CheckpointValidation.latestUserAsk(turnPrefix.map((item) => item.message)) : undefined
  const pendingUserAsks =
    prefixAsk && !latestKept
      ? [`${clip(prefixAsk.text, ASK_CHARS)} (in progress; the turn continues verbatim after this checkpoint)`]
      : latest?.unresolved && !latestKept
        ? [clip(latest.text, ASK_CHARS)]
        : []
  const open = todos.filter((todo) => todo.status !== "completed")
  const report = lastAssistant(all)
  const goal = requests[requests.length - 1]
  const latestId = latest ? all[latest.index]!.entryId : ""
  const nextSteps = [
    ...open.map((todo) => `${todo.status === "in_progress" ? "[in progress] " : ""}${clip(todo.text, ITEM_CHARS)}`),
    ...(open.length === 0 ? plansOf(report) : []),
    ...(pendingUserAsks.length > 0 && open.length === 0
      ? [`Answer the pending ask: ${clip(pendingUserAsks[0]!, ITEM_CHARS)}`]
      : latestKept && (latest?.unresolved || prefixAsk) && open.length === 0
        ? [`Answer the latest user message this checkpoint covers (${latestId}, ${KEPT_NOTE}).`]
        : [])
  ]
  const positions = new Map(all.map((item, index) => [item.entryId, index]))
  const position = (entryId: string) => positions.get(entryId) ?? all.length
  const done = [
    ...ordered([
      ...doneOf(actions, artifacts, position),
      ...reportsOf(all, position),
      ...userCommandsOf(all, position)
    ]),
    ...todos.filter((todo) => todo.status === "completed").map((todo) => `todo done: ${clip(todo.text, ITEM_CHARS)}`)
  ]
  const content: Checkpoint.CheckpointContent = {
    ...Checkpoint.emptyContent(),
    goal: goalText(goal, isKept(goal), requests.at(-2)),
    constraints: Constraints.fromSpeech(speech, [
      ...(goal && !isKept(goal) ? [clip(goal.text, ASK_CHARS)] : []),
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
      ...(requests[0] && requests[0] !== goal && !isKept(requests[0])
        ? [`${SESSION_START} (${requests[0].entryId}): "${clip(requests[0].text, ASK_CHARS)}"`]
        : []),
      ...requests
        .slice(1)
        .filter((said) => said !== goal && !isKept(said))
        .map((said) => `User (${said.entryId}): "${clip(said.text, ITEM_CHARS)}"`),
      ...(latest && !latest.unresolved && !prefixAsk && !latestKept && latest.text !== goal?.text
        ? [`${LATEST_ANSWERED}: "${clip(latest.text, ASK_CHARS)}"`]
        : []),
      ...(report ? [`Last assistant report (${report.entryId}): ${clip(report.text, ASK_CHARS)}`] : [])
    ],
    pendingUserAsks,
    identifiers: criticalIdentifiers(
      speech.filter((said) => !isKept(said)).map((said) => said.text),
      failed
    ),
    filesRead: artifacts.filter((a) => a.kind === "file" && a.status === "read").map((a) => a.value),
    filesModified: artifacts.filter((a) => a.kind === "file" && a.status !== "read").map((a) => a.value),
    failedApproaches: failed,
    artifacts,
    keyIdentifiers: KeyIdentifiers.rank(all)
  }
  return content
}
