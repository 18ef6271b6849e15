/**
 * The covered user messages a checkpoint keeps verbatim beside its summary
 * (Codex's rule: its compacted history is the summary plus the user's
 * messages, newest first within a token budget): the user's own words are
 * short, carry the goals, corrections and decisions a summary most often
 * loses, and cost little next to the tool output a checkpoint replaces.
 *
 * @since 0.3.0
 */
import { type Checkpoint, type ContextView, Turns } from "@context-engine/core"
import type * as CutPoint from "../CutPoint.ts"

/**
 * Largest share of user messages, in tokens, a checkpoint keeps verbatim
 * from its covered range: Codex's `COMPACT_USER_MESSAGE_MAX_TOKENS` (20,000;
 * codex-rs `core/src/compact.rs`, `build_compacted_history` keeps the user
 * messages newest first within it beside the summary).
 *
 * @category constants
 */
export const COVERED_USER_MESSAGES_MAX_TOKENS = 20_000

/**
 * Indices of the covered user messages kept verbatim after the checkpoint,
 * in conversation order: the user's own words (`Turns.isUserWordsItem`: an
 * edited item — clamped, offloaded — never is) before
 * `firstKeptIndex`, newest first while their tokens fit `budgetTokens`
 * (Codex's rule; a message that does not fit ends the walk, so the kept
 * ones are the newest run), plus the pinned latest ask whatever its size.
 *
 * @category constructors
 */
export const keptUserIndices = (
  conversation: ReadonlyArray<ContextView.ViewItem>,
  tokens: ReadonlyArray<number>,
  cut: CutPoint.CutPoint,
  budgetTokens: number
): Array<number> => {
  const kept: Array<number> = []
  let used = 0
  for (let index = cut.firstKeptIndex - 1; index >= 0; index--) {
    if (index === cut.pinnedUserIndex) {
      kept.push(index)
      continue
    }
    if (!Turns.isUserWordsItem(conversation[index]!)) continue
    const count = tokens[index] ?? 0
    if (used + count > budgetTokens) break
    used += count
    kept.push(index)
  }
  return kept.reverse()
}

/** Where a checkpoint's range lies and what it keeps ({@link continuation}). @category models */
export interface Continuation {
  /**
   * Where the covered range starts: null for a first checkpoint (the
   * transcript's start); when it replaces a previous one, the first covered
   * entry after the previous range (the covered items can start earlier: the
   * user messages the previous checkpoint kept are covered again).
   */
  readonly coveredFromEntryId: string | null
  /** The covered range's last entry, never earlier than the previous checkpoint's. */
  readonly lastCoveredEntryId: string
  /** The first kept transcript entry after every covered range (`Checkpoint.firstKeptEntryId`). */
  readonly firstKept: ContextView.ViewItem | undefined
  /** Every user message kept verbatim before `firstKept` (`Checkpoint.keptUserEntryIds`), in order. */
  readonly keptUserEntryIds: ReadonlyArray<string>
}

/** Inputs of {@link continuation}. @category models */
export interface ContinuationInput {
  readonly entries: ReadonlyArray<{ readonly id: string }>
  /** The covered view items, in order. */
  readonly covered: ReadonlyArray<{ readonly entryId: string }>
  /** The covered range's last transcript entry (`Prepare.lastRealEntryId`). */
  readonly lastCoveredEntryId: string
  /** Covered user messages kept verbatim ({@link keptUserIndices}). */
  readonly keptUsers: ReadonlyArray<ContextView.ViewItem>
  /** The view items from the cut on. */
  readonly tail: ReadonlyArray<ContextView.ViewItem>
  readonly previous: Checkpoint.Checkpoint | undefined
}

/**
 * What a checkpoint records so that the view `ActiveView.reconstruct`
 * rebuilds from the transcript is the view it returns. When it replaces
 * `previous`, that checkpoint's kept user messages open the conversation but
 * lie inside its range in the transcript: those the new cut leaves in the
 * tail stay kept (listed after the newly kept ones), the first kept entry is
 * the first tail entry after the previous range, and the new range ends no
 * earlier than the previous one (it replaces it). Synthesized items (no
 * transcript entry) are never named.
 *
 * @category constructors
 */
export const continuation = (input: ContinuationInput): Continuation => {
  const { previous, tail } = input
  const keptIds = input.keptUsers.map((item) => item.entryId)
  if (previous === undefined)
    return {
      coveredFromEntryId: null,
      lastCoveredEntryId: input.lastCoveredEntryId,
      firstKept: tail[0],
      keptUserEntryIds: keptIds
    }
  const positions = new Map(input.entries.map((entry, index) => [entry.id, index]))
  const end = positions.get(previous.coveredRange.toEntryId) ?? -1
  const after = (item: { readonly entryId: string }): boolean => (positions.get(item.entryId) ?? -1) > end
  const within = (item: { readonly entryId: string }): boolean => (positions.get(item.entryId) ?? end + 1) <= end
  return {
    coveredFromEntryId: (input.covered.find(after) ?? input.covered[0])?.entryId ?? null,
    lastCoveredEntryId: after({ entryId: input.lastCoveredEntryId })
      ? input.lastCoveredEntryId
      : previous.coveredRange.toEntryId,
    firstKept: tail.find(after),
    keptUserEntryIds: [...keptIds, ...tail.filter(within).map((item) => item.entryId)]
  }
}
