/**
 * The route's request-body byte cap (`ModelPolicy.maxRequestBodyBytes`,
 * shared case C20): a trigger apart from the token budget, and the stage
 * that reduces bytes rather than tokens. Base64 media dominate a body's
 * bytes (local-operator PR 596: 42 screenshots made a 34.2 MB body at 154K
 * tokens) while costing few tokens, so the token ladder can fit the window
 * and still send a body the gateway rejects.
 *
 * The stage replaces media by text references (`Media.replaceMedia`: name,
 * media type, pixel size, the entry that keeps the original), oldest first:
 * first before the turn in progress, then inside it (never the latest user
 * message or the last item), and stops once the body fits the cap less
 * `RequestBytes.MARGIN_SHARE`.
 *
 * @since 0.3.0
 */
import {
  type ContextEngine,
  type ContextView,
  type Measurer,
  type ModelPolicy,
  RequestBytes,
  type ViewEdit
} from "@context-engine/core"
import { Invariants, Media } from "@context-engine/strategies"

/**
 * Name of the stage (and of its edits' `strategy`).
 *
 * @category constants
 */
export const STAGE = "request-bytes"

/**
 * The bytes the view may use on this route, `undefined` without a cap.
 *
 * @category utils
 */
export const budgetBytes = (policy: ModelPolicy.ModelPolicy): number | undefined =>
  policy.maxRequestBodyBytes === undefined ? undefined : RequestBytes.budgetBytes(policy.maxRequestBodyBytes)

/**
 * Whether the view's body is over the route's byte budget.
 *
 * @category guards
 */
export const isOver = (policy: ModelPolicy.ModelPolicy, view: ContextView.ContextView): boolean => {
  const budget = budgetBytes(policy)
  return budget !== undefined && RequestBytes.viewBytes(view) > budget
}

/**
 * What the stage did: the view, its edits, its report; `undefined` when the
 * route has no cap or the body already fits.
 *
 * @category models
 */
export interface Reduced {
  readonly view: ContextView.ContextView
  readonly edits: ReadonlyArray<ViewEdit.ViewEdit>
  readonly stage: ContextEngine.StageReport
  /** Bytes of the view before and after. */
  readonly bytesBefore: number
  readonly bytesAfter: number
}

/** Indices in the order media is given up: before the turn in progress, then inside it. */
const order = (view: ContextView.ContextView, guard: Invariants.Protected): Array<number> => {
  const last = view.items.length - 1
  const indices: Array<number> = []
  for (let index = 0; index < guard.currentTurnStart; index++) indices.push(index)
  for (let index = guard.currentTurnStart; index < last; index++) indices.push(index)
  return indices
}

/**
 * Replaces media, oldest first, until the body fits the cap.
 *
 * @category constructors
 */
export const reduce = (
  view: ContextView.ContextView,
  policy: ModelPolicy.ModelPolicy,
  measurer: Measurer.Measurer
): Reduced | undefined => {
  const budget = budgetBytes(policy)
  if (budget === undefined) return undefined
  const bytesBefore = RequestBytes.viewBytes(view)
  if (bytesBefore <= budget) return undefined
  const startMs = Date.now()
  const guard = Invariants.protectedOf(view)
  const items = [...view.items]
  const edits: Array<ViewEdit.ViewEdit> = []
  let bytes = bytesBefore
  let tokensFreed = 0
  for (const index of order(view, guard)) {
    if (bytes <= budget) break
    const item = items[index]!
    if (!Invariants.isEditable(guard, item.entryId)) continue
    const replaced = Media.replaceMedia(item.message, item.entryId)
    if (replaced === undefined) continue
    bytes -= RequestBytes.messageBytes(item.message) - RequestBytes.messageBytes(replaced)
    tokensFreed += measurer.messageTokens(item.message, item.source) - measurer.messageTokens(replaced, item.source)
    items[index] = { ...item, message: replaced, editedBy: [...item.editedBy, STAGE] }
    edits.push({
      op: "replace",
      entryId: item.entryId,
      message: replaced,
      strategy: STAGE,
      reason: `media replaced by a text reference: the request body (${bytesBefore} bytes) is over the route's ${policy.maxRequestBodyBytes}-byte cap`
    })
  }
  const tokensBefore = measurer.measure(view).inputTokens
  return {
    view: { ...view, items },
    edits,
    bytesBefore,
    bytesAfter: bytes,
    stage: {
      stage: STAGE,
      tokensBefore,
      tokensAfter: tokensBefore - tokensFreed,
      edits: edits.length,
      durationMs: Date.now() - startMs,
      status: edits.length > 0 ? "applied" : "skipped",
      note: `request body ${bytesBefore} → ${bytes} bytes (cap ${policy.maxRequestBodyBytes}, margin ${RequestBytes.MARGIN_SHARE * 100}%)`
    }
  }
}
