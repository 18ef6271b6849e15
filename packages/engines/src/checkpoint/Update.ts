/**
 * Iterative updates (issue #11 requirement 4; Pi's
 * `UPDATE_SUMMARIZATION_PROMPT`): the previous checkpoint's handoff merged
 * with the newly covered range's. Newer wins — the goal, the pending ask and
 * the next steps of the newer range replace the older ones when it has them,
 * and the goal keeps the session's overall goal (the earlier checkpoints'
 * goal) while it is open (issue #11 requirement 1);
 * finished work never regresses to pending (an item done in either is
 * removed from in-progress and next steps); a file edited in both ranges is
 * one Done item with the newer edit's change; a newer task-setting request
 * supersedes the earlier range's next steps (the plan for the earlier
 * request is not carried as pending); earlier constraints, decisions,
 * failed approaches (but a failed check a later passing check covers), the
 * artifact ledger and the key code identifiers (the newer range's ranking
 * first) survive; what the update drops
 * is said in `dropped`.
 *
 * @since 0.2.0
 */
import { type Checkpoint, CheckRun, IdentifierExtraction } from "@context-engine/core"
import { FAILED_PREFIX_RE, SESSION_START } from "./Extract.ts"
import * as Ledger from "./Ledger.ts"
import { EDIT_ITEM_RE } from "./Progress.ts"
import { clip } from "./Text.ts"

type Content = Checkpoint.CheckpointContent

const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => [...new Set([...a, ...b])]

/**
 * The Done lists merged: the earlier items, then the later ones, each once —
 * except a file edited in both ranges, which is one item where the later
 * range put it: the edits of both counted, `created` when the earlier range
 * created it, and only the later range's clause (the newest edit's change;
 * the line an earlier edit added may be gone since, `Progress.doneOf`).
 */
const mergeDone = (earlier: ReadonlyArray<string>, later: ReadonlyArray<string>): Array<string> => {
  const edits = new Map<string, { readonly created: boolean; readonly count: number }>()
  for (const item of earlier) {
    const match = EDIT_ITEM_RE.exec(item)
    if (match) edits.set(match[2]!, { created: match[1] === "created", count: Number(match[3] ?? 1) })
  }
  const merged = new Set<string>()
  const newer = later.map((item) => {
    const match = EDIT_ITEM_RE.exec(item)
    const before = match ? edits.get(match[2]!) : undefined
    if (!match || !before) return item
    merged.add(match[2]!)
    const count = before.count + Number(match[3] ?? 1)
    const verb = before.created ? "created" : match[1]
    return `${verb} ${match[2]} (${count} edits)${item.slice(match[0].length)}`
  })
  const older = earlier.filter((item) => {
    const path = EDIT_ITEM_RE.exec(item)?.[2]
    return path === undefined || !merged.has(path)
  })
  return union(older, newer)
}

/**
 * A `checks pass` Done item that shows its whole command (`Progress.checksPassOf`, one piece, not cut) and where it
 * started when not where the session did (`CommandText.directoryOf`).
 */
const PASSED_CHECK_RE = /^checks pass: `([^`]+)`(?: in `([^`]+)`)?$/
/** Where a failed call started (`CommandText.directoryOf`), after its command. */
const FAILED_IN_RE = /` in `([^`]+)` (?:failed|declined)/

/**
 * The earlier range's failed approaches the later range did not supersede: a failed check is dropped when a check
 * the later range shows passing covers it (`CheckRun.covers`: the same check, or the same tool on a broader scope) —
 * what `CriticalIdentifiers.isSuperseded` does within one range. Only a failure whose command is shown whole is
 * read; a declined call never ran, so no pass supersedes it. Each run is read in the directory its line names
 * (`CommandText.directoryOf`; none: where the session started — a directory we could not name is not shown, so an
 * update compares such runs as the session's own).
 */
const stillFailing = (failed: ReadonlyArray<string>, laterDone: ReadonlyArray<string>): Array<string> => {
  const passed = laterDone.flatMap((item) => {
    const match = PASSED_CHECK_RE.exec(item)
    return match === null ? [] : [{ command: match[1]!, directory: match[2] }]
  })
  return failed.filter((line) => {
    const prefix = FAILED_PREFIX_RE.exec(line)?.[0]
    const command =
      prefix?.endsWith(" failed: ") || / failed \(\d+ attempts\): $/.test(prefix ?? "")
        ? /`([^`]+)`(?!…)/.exec(prefix!)?.[1]
        : undefined
    const earlier = FAILED_IN_RE.exec(prefix ?? "")?.[1]
    return (
      command === undefined ||
      !passed.some((check) => CheckRun.covers(check.command, command, { later: check.directory, earlier }))
    )
  })
}

/** Lower-cased words of 4+ letters, to recognise the same work item in two wordings. */
const words = (text: string): Set<string> => new Set(text.toLowerCase().match(/[\p{L}\p{N}_]{4,}/gu) ?? [])

const sameItem = (a: string, b: string): boolean => {
  const left = words(a)
  const right = words(b)
  if (left.size === 0 || right.size === 0) return a.trim() === b.trim()
  const shared = [...left].filter((word) => right.has(word)).length
  return shared / Math.min(left.size, right.size) >= 0.8
}

const notDone = (items: ReadonlyArray<string>, done: ReadonlyArray<string>): Array<string> =>
  items.filter((item) => !done.some((finished) => sameItem(item, finished)))

/** Label of the goal line that carries the session's overall goal through later checkpoints. */
export const OVERALL_GOAL = "Overall goal (from earlier checkpoints; still open)"

/** Longest overall goal carried, in characters. */
const OVERALL_CHARS = 400

/** The overall goal a goal text carries: its {@link OVERALL_GOAL} line, else the whole text. */
const overallOf = (goal: string): string => {
  const line = goal.split("\n").find((candidate) => candidate.startsWith(`${OVERALL_GOAL}: `))
  return (line ? line.slice(OVERALL_GOAL.length + 2) : goal).trim()
}

/** A goal text without its {@link OVERALL_GOAL} line: the current goal. */
const currentOf = (goal: string): string =>
  goal
    .split("\n")
    .filter((line) => !line.startsWith(`${OVERALL_GOAL}: `))
    .join("\n")

/**
 * The goal after an update: the newer range's current goal (its latest
 * task-setting request) with the overall goal the earlier checkpoints carried,
 * while it is still open — unless a done item finished it, or the newer goal
 * is the same request.
 */
const goalOf = (
  earlier: string,
  later: string,
  done: ReadonlyArray<string>
): { readonly goal: string; readonly dropped: ReadonlyArray<string> } => {
  if (later.trim().length === 0) return { goal: earlier, dropped: [] }
  if (earlier.trim().length === 0) return { goal: later, dropped: [] }
  const overall = overallOf(earlier)
  const current = currentOf(later)
  const clipped = overall.length <= OVERALL_CHARS ? overall : clip(overall, OVERALL_CHARS)
  if (sameItem(overall, current)) return { goal: current, dropped: [] }
  if (done.some((item) => sameItem(overall, item)))
    return { goal: current, dropped: [`earlier goal, finished: ${clipped.slice(0, 200)}`] }
  return { goal: `${current}\n${OVERALL_GOAL}: ${clipped}`, dropped: [] }
}

/**
 * Merges `earlier` (the previous checkpoint) with `later` (the newer range,
 * or a split turn's prefix): see the module doc.
 *
 * @category combinators
 */
export const mergeContent = (earlier: Content, later: Content): Content => {
  const done = mergeDone(earlier.progress.done, later.progress.done)
  const inProgress = notDone(union(earlier.progress.inProgress, later.progress.inProgress), done)
  // Newer steps first; earlier ones survive until done (the budget fill drops the oldest when short).
  const nextSteps = notDone(union(later.nextSteps, earlier.nextSteps), done)
  const decisions = [...earlier.decisions]
  for (const decision of later.decisions)
    if (!decisions.some((known) => known.decision === decision.decision)) decisions.push(decision)
  const artifacts = Ledger.merge(Ledger.fromContent(earlier), Ledger.fromContent(later))
  const goal = goalOf(earlier.goal, later.goal, done)
  // A newer task-setting request supersedes the plan made for the earlier one: its steps are not carried.
  const newTask = later.goal.trim().length > 0 && !sameItem(currentOf(earlier.goal), currentOf(later.goal))
  const superseded = newTask
    ? notDone(earlier.nextSteps, done).filter((step) => !later.nextSteps.some((next) => sameItem(step, next)))
    : []
  const carried = newTask ? notDone(later.nextSteps, done) : nextSteps
  return {
    goal: goal.goal,
    constraints: union(earlier.constraints, later.constraints),
    progress: {
      done,
      inProgress,
      blocked: later.progress.blocked.length > 0 ? [...later.progress.blocked] : [...earlier.progress.blocked]
    },
    decisions,
    nextSteps: carried.length > 0 ? carried : [...later.nextSteps],
    // The newer range's first request is not the session's start: the earlier checkpoint already says that.
    criticalContext: union(
      earlier.criticalContext,
      later.criticalContext.map((line) =>
        line.startsWith(SESSION_START) ? `User${line.slice(SESSION_START.length)}` : line
      )
    ),
    pendingUserAsks: later.pendingUserAsks.length > 0 ? [...later.pendingUserAsks] : [],
    identifiers: IdentifierExtraction.merge(earlier.identifiers, later.identifiers),
    filesRead: artifacts.filter((a) => a.kind === "file" && a.status === "read").map((a) => a.value),
    filesModified: artifacts.filter((a) => a.kind === "file" && a.status !== "read").map((a) => a.value),
    failedApproaches: union(
      stillFailing(earlier.failedApproaches ?? [], later.progress.done),
      later.failedApproaches ?? []
    ),
    artifacts,
    // Newer range's ranking first: the budget fill keeps the top of the list.
    keyIdentifiers: union(later.keyIdentifiers ?? [], earlier.keyIdentifiers ?? []),
    dropped: [
      ...goal.dropped,
      ...(superseded.length > 0
        ? [`${superseded.length} earlier next step(s), superseded by a newer request: ${superseded[0]!.slice(0, 120)}`]
        : [])
    ]
  }
}
