/**
 * Cut point: where the verbatim tail starts (DESIGN.md "Cut point").
 *
 * Follows Pi's `findCutPoint` (pi-mono `coding-agent/src/core/compaction`):
 * walk back from the newest message accumulating token counts until
 * `keepRecentTokens` is reached, then cut at the nearest legal point at or
 * after that message. Differences, each on purpose:
 *
 * - legal points are unit starts ({@link Turns.units}): a tool call and its
 *   result never part, and a parallel batch moves as one (Pi cuts at any
 *   user or assistant message, which is the same for one call per message);
 * - user-turn boundaries are preferred: the cut moves forward to the next
 *   user message when there is one, so a turn is split only when the turn in
 *   progress alone exceeds `keepRecentTokens` (Pi's `isSplitTurn` case), or
 *   when moving forward would keep less than half of `keepRecentTokens` and
 *   cutting inside the earlier turn lands closer to it (a long turn followed
 *   by a short one: the tail must not collapse to the latest user message);
 * - at least `minRecentTurns` turns are kept (their suffix, for a split turn);
 * - the latest user message is never covered alone: a split of the latest
 *   turn keeps that message verbatim (pinned) and covers only the assistant
 *   work between it and the cut (DESIGN.md invariant "the latest user message
 *   survives verbatim"); the latest message is the latest in the user's own
 *   words (`Turns.latestUserIndex`), so when only user-role data (shell
 *   output, command records) follows it, it is pinned too (shared case C21).
 *
 * @since 0.1.0
 */
import { Turns } from "@context-engine/core"

/**
 * What {@link find} needs. `tokens[i]` is the token count of `items[i]`.
 *
 * @category models
 */
export interface CutPointInput {
  readonly items: ReadonlyArray<Turns.WordsCandidate>
  readonly tokens: ReadonlyArray<number>
  /** Tokens to keep verbatim, newest first (Pi's `keepRecentTokens`, default 20,000). */
  readonly keepRecentTokens: number
  /** Most recent turns always kept, at least in part. Default {@link DEFAULT_MIN_RECENT_TURNS}. */
  readonly minRecentTurns?: number
}

/**
 * A cut. Items `[0, coveredEnd)` are summarized; items `[firstKeptIndex, n)`
 * stay verbatim. For a split turn, `[turnStartIndex, firstKeptIndex)` is the
 * turn's prefix, summarized separately and merged (Pi's turn-prefix summary).
 *
 * @category models
 */
export interface CutPoint {
  /** First item kept verbatim; `items.length` when nothing is kept. */
  readonly firstKeptIndex: number
  /** Start of the split turn, or -1 when the cut is at a turn boundary. */
  readonly turnStartIndex: number
  readonly splitTurn: boolean
  /** Index of a user message kept verbatim although it lies before the cut (split of the latest turn), or -1. */
  readonly pinnedUserIndex: number
  /** Tokens of the kept items. */
  readonly keptTokens: number
  /** Tokens of the covered items. */
  readonly coveredTokens: number
}

/**
 * Turns always kept by default: the turn in progress (DESIGN.md: the current
 * turn is protected; regression case C08).
 *
 * @category constants
 */
export const DEFAULT_MIN_RECENT_TURNS = 1

const sum = (tokens: ReadonlyArray<number>, from: number, to: number): number => {
  let total = 0
  for (let index = from; index < to; index++) total += tokens[index] ?? 0
  return total
}

/**
 * The split of an earlier (not the latest) turn when the walk-back point
 * lies inside it and moving forward to the next user message would keep
 * less than half of `keepRecentTokens` (a long turn followed by a short
 * one: the tail collapsed to the latest user message). Cuts at the first
 * unit start at or after the point, inside the turn (Pi cuts at any
 * message); used only when that kept tail is closer to `keepRecentTokens`
 * than the turn boundary's. `undefined` keeps the turn boundary.
 */
const splitEarlierTurn = (
  input: CutPointInput,
  turnSpans: ReadonlyArray<Turns.Span>,
  reached: number,
  nextTurnStart: number
): { readonly cut: number; readonly turnStart: number } | undefined => {
  const { items, tokens, keepRecentTokens } = input
  const boundaryKept = sum(tokens, nextTurnStart, items.length)
  if (boundaryKept * 2 >= keepRecentTokens) return undefined
  const span = turnSpans.find((turn) => turn.start <= reached && reached < turn.end)
  if (span === undefined || items[span.start]?.message.role !== "user") return undefined
  const cut = Turns.legalCutIndices(items).find((start) => start >= reached && start > span.start)
  if (cut === undefined || cut >= nextTurnStart) return undefined
  const splitKept = sum(tokens, cut, items.length)
  return Math.abs(splitKept - keepRecentTokens) < keepRecentTokens - boundaryKept
    ? { cut, turnStart: span.start }
    : undefined
}

/**
 * Finds the cut point. Pure; `O(n)`.
 *
 * @category analysis
 */
export const find = (input: CutPointInput): CutPoint => {
  const { items, tokens, keepRecentTokens } = input
  const n = items.length
  const result = (firstKeptIndex: number, turnStartIndex: number, pinnedUserIndex: number): CutPoint => ({
    firstKeptIndex,
    turnStartIndex,
    splitTurn: turnStartIndex !== -1,
    pinnedUserIndex,
    keptTokens: sum(tokens, firstKeptIndex, n) + (pinnedUserIndex >= 0 ? (tokens[pinnedUserIndex] ?? 0) : 0),
    coveredTokens: sum(tokens, 0, firstKeptIndex) - (pinnedUserIndex >= 0 ? (tokens[pinnedUserIndex] ?? 0) : 0)
  })
  if (n === 0) return result(0, -1, -1)

  // Walk back until keepRecentTokens is reached.
  let reached = -1
  let accumulated = 0
  for (let index = n - 1; index >= 0; index--) {
    accumulated += tokens[index] ?? 0
    if (accumulated >= keepRecentTokens) {
      reached = index
      break
    }
  }
  if (reached <= 0) return result(0, -1, -1)

  const turnSpans = Turns.turns(items)
  const userTurnStarts = turnSpans.map((span) => span.start).filter((start) => items[start]?.message.role === "user")
  const minTurns = Math.max(1, input.minRecentTurns ?? DEFAULT_MIN_RECENT_TURNS)
  const minTurnSpan = turnSpans[Math.max(0, turnSpans.length - minTurns)]!
  const latestTurn = turnSpans[turnSpans.length - 1]!

  // The latest message in the user's own words (`Turns.latestUserIndex`: shell output, command records and
  // other user-role data after it do not count) is never covered alone: it is kept verbatim (pinned) even
  // when only data follows it and the cut falls after it (shared case C21).
  const latestUser = Turns.latestUserIndex(items)
  const pinLatest = (firstKept: number): number => (latestUser >= 0 && latestUser < firstKept ? latestUser : -1)
  // a split turn: the latest words inside the covered part of the turn (or before the turn) are pinned
  const pinSplit = (cut: number, turnStart: number): number =>
    latestUser >= turnStart && latestUser < cut ? latestUser : pinLatest(turnStart)

  // Prefer the first user-turn start at or after the walk-back point, unless that keeps less than half of
  // keepRecentTokens and splitting the earlier turn lands closer to it (see splitEarlierTurn).
  const nextTurnStart = userTurnStarts.find((start) => start >= reached)
  if (nextTurnStart !== undefined) {
    const firstKept = Math.min(nextTurnStart, minTurnSpan.start)
    const split = firstKept === nextTurnStart ? splitEarlierTurn(input, turnSpans, reached, nextTurnStart) : undefined
    if (split !== undefined) return result(split.cut, split.turnStart, pinSplit(split.cut, split.turnStart))
    return result(firstKept, -1, pinLatest(firstKept))
  }

  // The walk-back point lies inside the latest turn: that turn alone exceeds
  // keepRecentTokens. Split it at the first unit start at or after the point.
  const unitStarts = Turns.legalCutIndices(items)
  const turnStart = latestTurn.start
  let cut = unitStarts.find((start) => start >= reached && start > turnStart)
  if (cut === undefined) {
    // The point is inside the last unit: keep that whole unit.
    const containing = [...unitStarts].reverse().find((start) => start <= reached)
    cut = containing !== undefined && containing > turnStart ? containing : turnStart
  }
  if (cut <= turnStart) return result(turnStart, -1, pinLatest(turnStart))
  return result(cut, turnStart, pinSplit(cut, turnStart))
}
