/**
 * Iterative updates (issue #11 requirement 4; Pi's
 * `UPDATE_SUMMARIZATION_PROMPT`): the previous checkpoint's handoff merged
 * with the newly covered range's. Newer wins — the goal, the pending ask and
 * the next steps of the newer range replace the older ones when it has them;
 * finished work never regresses to pending (an item done in either is
 * removed from in-progress and next steps); earlier constraints, decisions,
 * failed approaches and the artifact ledger survive; what the update drops
 * is said in `dropped`.
 *
 * @since 0.2.0
 */
import { type Checkpoint, IdentifierExtraction } from "@context-engine/core"
import * as Ledger from "./Ledger.ts"

type Content = Checkpoint.CheckpointContent

const union = (a: ReadonlyArray<string>, b: ReadonlyArray<string>): Array<string> => [...new Set([...a, ...b])]

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

/**
 * Merges `earlier` (the previous checkpoint) with `later` (the newer range,
 * or a split turn's prefix): see the module doc.
 *
 * @category combinators
 */
export const mergeContent = (earlier: Content, later: Content): Content => {
  const done = union(earlier.progress.done, later.progress.done)
  const inProgress = notDone(union(earlier.progress.inProgress, later.progress.inProgress), done)
  // Newer steps first; earlier ones survive until done (the budget fill drops the oldest when short).
  const nextSteps = notDone(union(later.nextSteps, earlier.nextSteps), done)
  const decisions = [...earlier.decisions]
  for (const decision of later.decisions)
    if (!decisions.some((known) => known.decision === decision.decision)) decisions.push(decision)
  const replacedGoal =
    later.goal.trim().length > 0 && earlier.goal.trim().length > 0 && later.goal !== earlier.goal
      ? [`earlier goal, superseded by a newer request: ${earlier.goal.slice(0, 200)}`]
      : []
  const artifacts = Ledger.merge(Ledger.fromContent(earlier), Ledger.fromContent(later))
  return {
    goal: later.goal.trim().length > 0 ? later.goal : earlier.goal,
    constraints: union(earlier.constraints, later.constraints),
    progress: {
      done,
      inProgress,
      blocked: later.progress.blocked.length > 0 ? [...later.progress.blocked] : [...earlier.progress.blocked]
    },
    decisions,
    nextSteps: nextSteps.length > 0 ? nextSteps : [...later.nextSteps],
    criticalContext: union(
      replacedGoal.length > 0 ? [`Earlier goal: ${earlier.goal.slice(0, 300)}`] : [],
      union(earlier.criticalContext, later.criticalContext)
    ),
    pendingUserAsks: later.pendingUserAsks.length > 0 ? [...later.pendingUserAsks] : [],
    identifiers: IdentifierExtraction.merge(earlier.identifiers, later.identifiers),
    filesRead: artifacts.filter((a) => a.kind === "file" && a.status === "read").map((a) => a.value),
    filesModified: artifacts.filter((a) => a.kind === "file" && a.status !== "read").map((a) => a.value),
    failedApproaches: union(earlier.failedApproaches ?? [], later.failedApproaches ?? []),
    artifacts,
    dropped: [...replacedGoal]
  }
}
