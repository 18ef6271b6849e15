/**
 * Anchors: the provider's reported usage of a request, tied to the view
 * items it covered (entry ids, sources and content, as a chained prefix
 * fingerprint), so an anchor expires by itself when a compaction changes any
 * of them. `UsageScale` turns anchors into measurements.
 *
 * Each anchor built by {@link anchorFor} keeps its fingerprint chain (held
 * weakly, by the anchor object): {@link locate} checks the next view against
 * it by item identity, and the next {@link anchorFor} given this anchor as
 * `previous` hashes only the items appended since. Sessions in one process
 * thus never share or evict each other's chains.
 *
 * @since 0.3.0
 */
import type { ContextView } from "./ContextView.ts"
import * as PrefixFingerprint from "./PrefixFingerprint.ts"

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

// Each anchor's own fingerprint chain (PrefixFingerprint.extendChain), by anchor object.
const chains = new WeakMap<Anchor, PrefixFingerprint.ChainRef>()

/**
 * Index of the item with `entryId` in `view` (-1 when absent), searched from
 * the end: an anchor is the previous request's last item, so it sits at or
 * near the end of the view and the search costs O(items appended since), not
 * O(view). Entry ids are unique within a view.
 */
export const indexOfEntry = (view: ContextView, entryId: string): number => {
  const items = view.items
  for (let index = items.length - 1; index >= 0; index--) if (items[index]!.entryId === entryId) return index
  return -1
}

/**
 * Fingerprint (entry ids, sources and content hashes) of the view's items up
 * to and including `lastEntryId`; `undefined` when that entry is not in the
 * view. Two views share a fingerprint exactly when that prefix is the same.
 *
 * @category anchors
 */
export const prefixFingerprint = (view: ContextView, lastEntryId: string): string | undefined => {
  const index = indexOfEntry(view, lastEntryId)
  return index < 0 ? undefined : PrefixFingerprint.fingerprintThrough(view.items, index)
}

/**
 * An {@link Anchor} for provider-reported usage of a request built from
 * `view`. It carries the prefix fingerprint, so it expires by itself when a
 * later compaction changes any item it covered (the reported number would
 * then overstate the new request). `previous`: the session's anchor before
 * this one, whose fingerprints are extended (only the items after the prefix
 * both views share are hashed; an anchor without a fingerprint passes on
 * the one it was given); the value is the same with or without it.
 *
 * @category anchors
 */
export const anchorFor = (
  view: ContextView,
  usage: { readonly inputTokens: number; readonly lastEntryId: string },
  previous?: Anchor
): Anchor => {
  const index = indexOfEntry(view, usage.lastEntryId)
  const known = previous === undefined ? undefined : chains.get(previous)
  const chain = index < 0 ? undefined : PrefixFingerprint.extendChain(known, view.items, index)
  const anchor: Anchor = {
    inputTokens: usage.inputTokens,
    lastEntryId: usage.lastEntryId,
    ...(chain !== undefined ? { prefixFingerprint: chain.chain.fingerprints[index]! } : {})
  }
  // An anchor whose last entry is not in the view (e.g. a message normalization dropped) passes the chain on.
  const kept = chain ?? known
  if (kept !== undefined) chains.set(anchor, kept)
  return anchor
}

/**
 * Where `anchor` sits in `view`: the index of its `lastEntryId` (-1 when
 * absent or when the items up to it changed since the provider reported
 * usage, i.e. its `prefixFingerprint` no longer matches), with the note a
 * measurement reports when the anchor is ignored.
 *
 * @category constructors
 */
export const locate = (
  view: ContextView,
  anchor: Anchor | undefined
): { readonly index: number; readonly note?: string } => {
  if (anchor === undefined) return { index: -1 }
  const index = indexOfEntry(view, anchor.lastEntryId)
  if (index < 0) return { index, note: `anchor entry ${anchor.lastEntryId} is not in the view; anchor ignored` }
  const chain = chains.get(anchor)
  if (
    anchor.prefixFingerprint !== undefined &&
    !(chain !== undefined && PrefixFingerprint.chainCovers(chain, view.items, index)) &&
    PrefixFingerprint.fingerprintThrough(view.items, index) !== anchor.prefixFingerprint
  )
    return {
      index: -1,
      note: `items at or before anchor entry ${anchor.lastEntryId} changed since the provider reported usage (e.g. a compaction); anchor ignored`
    }
  return { index }
}
