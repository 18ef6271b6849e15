/**
 * The covered user messages a checkpoint keeps verbatim beside its summary
 * (Codex's rule: its compacted history is the summary plus the user's
 * messages, newest first within a token budget): the user's own words are
 * short, carry the goals, corrections and decisions a summary most often
 * loses, and cost little next to the tool output a checkpoint replaces.
 *
 * @since 0.3.0
 */
import { type ContextView, Turns } from "@context-engine/core"
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
