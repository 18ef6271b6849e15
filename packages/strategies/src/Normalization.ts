/**
 * Normalization: the pipeline's first stage, applied to every request
 * whether or not it is compacted (DESIGN.md "Invariants"): empty messages and
 * reasoning-only assistant messages are dropped (system messages and the
 * latest user message excepted), then tool pairing is repaired
 * ({@link Invariants.enforce} → `ToolPairing.repairEdits`).
 *
 * {@link normalize} does it over a whole view; `IncrementalNormalization`
 * gives the same result step after step in O(new items).
 *
 * @since 0.1.0
 */
import type { ContextView, Message, ViewEdit } from "@context-engine/core"
import { MessageParts } from "@context-engine/core"
import * as Invariants from "./Invariants.ts"

/**
 * Stage name of the normalization that runs before the strategies
 * (tool-pairing repair, empty messages dropped).
 *
 * @category constants
 */
export const NORMALIZE_STAGE = "normalize"

/**
 * The drops normalization starts from: every editable empty message and
 * reasoning-only assistant message (an interrupted response).
 *
 * @category analysis
 */
export const dropEdits = (view: ContextView.ContextView): Array<ViewEdit.ViewEdit> => {
  const guard = Invariants.protectedOf(view)
  return view.items.flatMap((item): Array<ViewEdit.ViewEdit> => {
    if (!Invariants.isEditable(guard, item.entryId)) return []
    if (MessageParts.isEmptyMessage(item.message))
      return [{ op: "drop", entryId: item.entryId, strategy: NORMALIZE_STAGE, reason: "empty message" }]
    if (MessageParts.isReasoningOnly(item.message))
      return [
        {
          op: "drop",
          entryId: item.entryId,
          strategy: NORMALIZE_STAGE,
          reason: "assistant message with only reasoning (an interrupted response)"
        }
      ]
    return []
  })
}

/**
 * Normalizes a whole view: the drops of {@link dropEdits}, then the pairing
 * repairs. Returns `view` itself when nothing changes.
 *
 * @category combinators
 */
export const normalize = (view: ContextView.ContextView): Invariants.Enforced =>
  Invariants.enforce(view, dropEdits(view), NORMALIZE_STAGE)

/**
 * Whether normalization drops the message unless it is protected (empty, or
 * an assistant message with only reasoning).
 *
 * @category guards
 */
export const isDroppable = (message: Message.Message): boolean =>
  MessageParts.isEmptyMessage(message) || MessageParts.isReasoningOnly(message)
