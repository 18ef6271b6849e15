/**
 * Prefix fingerprints of views: chained content hashes of each item's entry
 * id, source and message, so two prefixes share a fingerprint exactly when
 * their items do. An anchor (`AnchorPrefix`) carries the fingerprint of the
 * items the provider's usage covered and is dropped when they change.
 * Computed incrementally: a process-wide memo ({@link fingerprintThrough})
 * and the caller's own chains ({@link extendChain}), extended by the items
 * appended since — matched by identity (`ViewPrefix.pick`), or by record when
 * the view is known to extend the chain's (`ArrayLineage`).
 *
 * @since 0.5.0
 */
import * as ArrayLineage from "./ArrayLineage.ts"
import * as ContentHash from "./ContentHash.ts"
import type { ViewItem } from "./ContextView.ts"
import * as ViewPrefix from "./ViewPrefix.ts"

interface ChainSlot {
  items: Array<ViewItem>
  fingerprints: Array<string>
  used: number
}

const chainSlots: Array<ChainSlot> = Array.from({ length: 4 }, () => ({ items: [], fingerprints: [], used: 0 }))
let chainClock = 0

/**
 * Fingerprint of `items[0 … lastIndex]`: chained content hashes of each
 * item's entry id, source and message (`f(i) = hash(f(i − 1), item i)`), so
 * two prefixes share a fingerprint exactly when their items do. Memoised
 * across calls: extending a known prefix hashes only the new items.
 *
 * @category fingerprints
 */
export const fingerprintThrough = (items: ReadonlyArray<ViewItem>, lastIndex: number): string => {
  const { slot, shared, identical } = ViewPrefix.pick(chainSlots, items, lastIndex + 1, ++chainClock)
  // Items matched by content (rebuilt objects, or another session's equal items) are remembered as these
  // objects, so the next step's view, which extends these, is matched by identity alone.
  if (!identical) for (let index = 0; index < shared; index++) slot.items[index] = items[index]!
  slot.items.length = shared
  slot.fingerprints.length = shared
  appendLinks(slot, items, shared, lastIndex)
  return slot.fingerprints[lastIndex]!
}

/** Pushes the fingerprints of `items[from … lastIndex]` onto `chain` (which holds `from` of them). */
const appendLinks = (chain: Chain, items: ReadonlyArray<ViewItem>, from: number, lastIndex: number): void => {
  for (let index = from; index <= lastIndex; index++) {
    const item = items[index]!
    const previous = index === 0 ? "" : chain.fingerprints[index - 1]!
    chain.fingerprints.push(
      ContentHash.hash(
        `${previous}\u0001${item.entryId}\u0000${item.source}\u0000${ViewPrefix.messageHash(item.message)}`
      )
    )
    chain.items.push(item)
  }
}

/**
 * A caller's own prefix fingerprints ({@link fingerprintThrough}'s values):
 * the first `length` of `items` / `fingerprints`. Positions below `length`
 * are never rewritten, so a later {@link extendChain} may push onto the same
 * arrays while this one stays valid.
 *
 * @category fingerprints
 */
export interface ChainRef {
  readonly chain: Chain
  readonly length: number
  /** The items these fingerprints were computed for: an array whose first `length` items they describe. */
  readonly source?: ReadonlyArray<ViewItem>
}

interface Chain {
  readonly items: Array<ViewItem>
  readonly fingerprints: Array<string>
}

/**
 * Length of the prefix of `items` (up to `limit`) that `known` holds, by `ViewPrefix.sameItem`: none compared when
 * `items` is recorded as extending `known`'s source (`ArrayLineage`), else a pointer loop while the objects are
 * the same.
 */
const sharedWith = (items: ReadonlyArray<ViewItem>, known: ChainRef, limit: number): number => {
  const end = Math.min(known.length, limit)
  if (known.source !== undefined && ArrayLineage.isExtensionOf(items, known.source)) return end
  const held = known.chain.items
  let index = 0
  while (index < end && ViewPrefix.sameItem(items[index]!, held[index]!)) index++
  return index
}

/**
 * The fingerprints of `items[0 … lastIndex]` ({@link fingerprintThrough}'s
 * values), extending `known` (the caller's chain from an earlier view, e.g.
 * the previous request's) where `items` holds the same items: only the items
 * after the shared prefix are hashed. Shares `known`'s arrays when `items`
 * extends or ends inside it, else copies the shared part. Kept by the caller
 * (one chain per session), not in {@link fingerprintThrough}'s process-wide
 * slots, which sessions stepping in turn take from each other.
 *
 * @category fingerprints
 */
export const extendChain = (
  known: ChainRef | undefined,
  items: ReadonlyArray<ViewItem>,
  lastIndex: number
): ChainRef => {
  const limit = lastIndex + 1
  const shared = known === undefined ? 0 : sharedWith(items, known, limit)
  if (known !== undefined && shared === limit) return { chain: known.chain, length: limit, source: items }
  const chain: Chain =
    known !== undefined && shared === known.length && known.chain.items.length === known.length
      ? known.chain
      : {
          items: known === undefined ? [] : known.chain.items.slice(0, shared),
          fingerprints: known === undefined ? [] : known.chain.fingerprints.slice(0, shared)
        }
  appendLinks(chain, items, shared, lastIndex)
  return { chain, length: limit, source: items }
}

/** Whether `items[0 … lastIndex]` are the items `known` holds (so their fingerprint is `known`'s last). */
export const chainCovers = (known: ChainRef, items: ReadonlyArray<ViewItem>, lastIndex: number): boolean =>
  known.length === lastIndex + 1 && sharedWith(items, known, lastIndex + 1) === lastIndex + 1
