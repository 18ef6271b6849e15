/**
 * Anchored measurement: the provider-reported usage of the last response
 * ({@link Anchor}) replaces the count of the prefix it covered, for as long
 * as that prefix is unchanged (its fingerprint, {@link prefixFingerprint});
 * `Measurer.measure` adds the count of what came after it.
 *
 * @since 0.2.0
 */
import type { ContextView } from "./ContextView.ts"
import * as ViewPrefix from "./ViewPrefix.ts"

/**
 * Provider-reported usage of the last response, for anchored measurement:
 * `measure = inputTokens + count(items appended after lastEntryId)`.
 *
 * @category models
 */
export interface Anchor {
  /** `usage.inputTokens` the provider reported for the request that ended at `lastEntryId`. */
  readonly inputTokens: number
  /** The last view item that request contained. */
  readonly lastEntryId: string
  /**
   * Fingerprint of the view items up to `lastEntryId` as they were sent
   * (see {@link prefixFingerprint}). When present, the anchor is used only
   * while those items are unchanged: after a compaction edits or drops any of
   * them, the reported usage no longer describes the prefix and the measurer
   * counts instead. Build anchors with {@link anchorFor} to get one.
   */
  readonly prefixFingerprint?: string
}

/**
 * Splits `target` over `weights` proportionally, integers summing exactly to
 * `target` (largest remainder): how an anchored measurement scales the
 * counted categories of the anchored prefix to the provider's number.
 *
 * @category anchors
 */
export const apportion = (weights: ReadonlyArray<number>, target: number): Array<number> => {
  const total = weights.reduce((sum, weight) => sum + weight, 0)
  if (total <= 0) return weights.map((_, index) => (index === 0 ? target : 0))
  const exact = weights.map((weight) => (weight * target) / total)
  const result = exact.map(Math.floor)
  let remainder = target - result.reduce((sum, value) => sum + value, 0)
  const order = exact.map((value, index) => [value - Math.floor(value), index] as const).sort((a, b) => b[0] - a[0])
  for (let k = 0; remainder > 0 && k < order.length; k++, remainder--) result[order[k]![1]]!++
  return result
}

/**
 * Fingerprint (entry ids, sources and content hashes) of the view's items up
 * to and including `lastEntryId`; `undefined` when that entry is not in the
 * view. Two views share a fingerprint exactly when that prefix is the same.
 *
 * @category anchors
 */
export const prefixFingerprint = (view: ContextView, lastEntryId: string): string | undefined => {
  const index = view.items.findIndex((item) => item.entryId === lastEntryId)
  return index < 0 ? undefined : ViewPrefix.fingerprintThrough(view.items, index)
}

/**
 * An {@link Anchor} for provider-reported usage of a request built from
 * `view`. It carries the prefix fingerprint, so it expires by itself when a
 * later compaction changes any item it covered (the reported number would
 * then overstate the new request).
 *
 * @category anchors
 */
export const anchorFor = (
  view: ContextView,
  usage: { readonly inputTokens: number; readonly lastEntryId: string }
): Anchor => {
  const fingerprint = prefixFingerprint(view, usage.lastEntryId)
  return {
    inputTokens: usage.inputTokens,
    lastEntryId: usage.lastEntryId,
    ...(fingerprint !== undefined ? { prefixFingerprint: fingerprint } : {})
  }
}
