/**
 * Incremental per-prefix state of the views a measurer sees, so a step that
 * appends messages costs O(new items) in counting and hashing, not O(view).
 *
 * A view is matched against the last views seen (a few slots: an engine
 * measures both the view it derives and the repaired view it sends) by item
 * identity — same message object, source and entry id, position by position
 * — and, for counts, the same reasoning position (`ReasoningTokens`). The
 * matched prefix's cumulative counts (here) and chained fingerprints
 * (`PrefixFingerprint`) are reused; the rest is computed and remembered.
 * A view recorded as extending the one a slot last saw (`ArrayLineage`) is
 * matched without a compare; others by a tight loop of pointer checks. No
 * message is re-hashed or re-counted.
 *
 * @since 0.1.0
 */
import * as ArrayLineage from "./ArrayLineage.ts"
import * as ContentHash from "./ContentHash.ts"
import type { ViewItem } from "./ContextView.ts"
import { type Category, categories } from "./Measurement.ts"
import type { Message } from "./Message.ts"
import * as MessageSeal from "./MessageSeal.ts"

/** Categories in a fixed order: index `i` of a sums vector is `categories[i]`. */
const CATEGORY_COUNT = categories.length
const categoryIndex = new Map<Category, number>(categories.map((category, index) => [category, index]))

// Content hashes by message identity. Messages are immutable in this library
// (views and edits build new objects), so identity is a safe key.
const hashByIdentity = new WeakMap<object, string>()

/**
 * The content hash of a message (`ContentHash.hash`), memoised by identity.
 *
 * @category utils
 */
export const messageHash = (message: Message): string => {
  let hash = hashByIdentity.get(message)
  if (hash === undefined) {
    hash = ContentHash.hash(message)
    hashByIdentity.set(message, hash)
  }
  return hash
}

/**
 * Same item: same message object, or — for the few items an engine rebuilds
 * every call (repaired tool results, synthetic items) — equal content hashes
 * under the same entry id and source.
 */
export const sameItem = (a: ViewItem, b: ViewItem): boolean =>
  a === b ||
  (a.source === b.source &&
    a.entryId === b.entryId &&
    (a.message === b.message || messageHash(a.message) === messageHash(b.message)))

/** Length of the prefix `items` shares with `known` (by {@link sameItem}). */
const sharedPrefix = (items: ReadonlyArray<ViewItem>, known: ReadonlyArray<ViewItem>, limit: number): number => {
  const end = Math.min(items.length, known.length, limit)
  let index = 0
  while (index < end && sameItem(items[index]!, known[index]!)) index++
  return index
}

/**
 * Whether `items` extends the slot's whole remembered view (up to `limit`)
 * by item identity alone: the common step (the same item objects, new ones
 * appended). A tight loop over two arrays that stops at the first other
 * object, so a slot of another lineage costs a compare or two, and no item
 * or message object is read.
 */
const extendsByIdentity = (items: ReadonlyArray<ViewItem>, known: ReadonlyArray<ViewItem>, limit: number): boolean => {
  const end = Math.min(known.length, limit)
  if (items.length < end) return false
  for (let index = 0; index < end; index++) if (items[index] !== known[index]) return false
  return true
}

/**
 * Picks a slot for `items`: the one whose whole remembered view `items`
 * extends (longest first), else the least recently used one (its shared
 * prefix is kept). Views of different lineages (derived / repaired) thus keep
 * their own slots instead of truncating each other. A slot extended by item
 * identity is taken at once (the common step: the longest such); otherwise
 * every slot is compared item by item ({@link sameItem}).
 */
export const pick = <S extends { items: Array<ViewItem>; source?: ReadonlyArray<ViewItem> | undefined; used: number }>(
  slots: Array<S>,
  items: ReadonlyArray<ViewItem>,
  limit: number,
  clock: number
): { readonly slot: S; readonly shared: number; readonly identical: boolean } => {
  let extended: S | undefined
  let extendedLength = -1
  // A slot whose items were taken from an array `items` is recorded as extending (ArrayLineage) needs no compare.
  for (const slot of slots) {
    if (
      slot.items.length > 0 &&
      slot.source !== undefined &&
      slot.items.length <= limit &&
      ArrayLineage.isExtensionOf(items, slot.source) &&
      slot.items.length > extendedLength
    ) {
      extended = slot
      extendedLength = slot.items.length
    }
  }
  for (const slot of slots) {
    if (slot.items.length > 0 && slot.items.length > extendedLength && extendsByIdentity(items, slot.items, limit)) {
      extended = slot
      extendedLength = Math.min(slot.items.length, limit)
    }
  }
  // Any slot `items` extends serves (the counts and fingerprints of a prefix do not depend on the slot); the
  // item-by-item comparison is needed only when no slot is extended by identity.
  const identical = extended !== undefined
  if (!identical) {
    for (const slot of slots) {
      const length = sharedPrefix(items, slot.items, limit)
      if (length === Math.min(slot.items.length, limit) && length > extendedLength) {
        extended = slot
        extendedLength = length
      }
    }
  }
  let oldest = slots[0]!
  for (const slot of slots) if (slot.used < oldest.used) oldest = slot
  const slot = extended ?? oldest
  slot.used = clock
  return { slot, shared: extended ? extendedLength : sharedPrefix(items, slot.items, limit), identical }
}

/** Per-item counts, as the measurer produces them. */
export interface ItemCount {
  readonly byCategory: Partial<Record<Category, number>>
  readonly unknownImages: number
  readonly estimatedFiles: number
}

/** Cumulative sums of a view: `through(i)` is the sum of items `0 … i − 1`. */
export interface PrefixSums {
  /** Category vector (in `Measurement.categories` order) of items `0 … end − 1`. */
  readonly categories: (end: number) => Float64Array
  readonly unknownImages: (end: number) => number
  readonly estimatedFiles: (end: number) => number
}

interface SumSlot {
  items: Array<ViewItem>
  /** An array whose first `items.length` elements are `items`' objects (the last view counted), when there is one. */
  source: ReadonlyArray<ViewItem> | undefined
  /** Stamps of the unsealed items (`MessageSeal`), at `unsealed`'s indices (ascending); sealed items need none. */
  stamps: Array<unknown>
  unsealed: Array<number>
  /** Items before this index were counted as prior to the current tool loop, the rest as current. */
  loopStart: number
  /**
   * Cumulative sums of items `0 … end − 1` at `end × STRIDE`: the category vector, then unknown images, then
   * estimated files. One buffer per slot (grown by doubling), not an array per item: at 60,000 items a
   * compaction's measurements would otherwise leave ≈65 MiB of small arrays behind (issue #13 req 6).
   */
  sums: Float64Array
  used: number
}

/** Numbers per prefix in {@link SumSlot.sums}: the categories, unknown images, estimated files. */
const STRIDE = CATEGORY_COUNT + 2

const emptySlot = (): SumSlot => ({
  items: [],
  source: undefined,
  stamps: [],
  unsealed: [],
  loopStart: 0,
  sums: new Float64Array(STRIDE * 64),
  used: 0
})

/** `sums`, or a copy of it twice as long (or more) when it has no room for the prefixes `0 … ends`. */
const withRoom = (sums: Float64Array, ends: number): Float64Array => {
  if (sums.length >= (ends + 1) * STRIDE) return sums
  let length = sums.length
  while (length < (ends + 1) * STRIDE) length *= 2
  const grown = new Float64Array(length)
  grown.set(sums)
  return grown
}

/**
 * How to notice a message edited in place (against the immutability
 * invariant, but cheap to catch): a stamp taken when the item is counted and
 * a check that the message still matches it. A sealed message
 * (`MessageSeal.isSealed`) cannot change and is never checked.
 *
 * @category models
 */
export interface Stamps<S> {
  readonly stampOf: (message: Message) => S
  readonly stillSame: (stamp: S, message: Message) => boolean
}

/**
 * How many of the slot's first `keep` items are still valid for a view
 * counted with `loopStart`: the prior flags agree (the slot's items before
 * its `loopStart` were counted as prior, so the first disagreement is at the
 * smaller of the two), and no unsealed message held by the same object was
 * edited in place (a rebuilt item matched by content hash needs no stamp).
 * O(unsealed items), not O(view).
 */
const validPrefix = <S>(
  slot: SumSlot,
  items: ReadonlyArray<ViewItem>,
  shared: number,
  loopStart: number,
  stamps: Stamps<S>
): number => {
  let keep = shared
  if (slot.loopStart !== loopStart) keep = Math.min(keep, slot.loopStart, loopStart)
  for (let k = 0; k < slot.unsealed.length; k++) {
    const index = slot.unsealed[k]!
    if (index >= keep) break
    const message = items[index]!.message
    if (slot.items[index]!.message === message && !stamps.stillSame(slot.stamps[k] as S, message)) return index
  }
  return keep
}

/**
 * Cumulative counts of views, memoised across calls in `slotCount` slots.
 *
 * @category constructors
 */
export const makeSums = <S>(slotCount: number, stamps: Stamps<S>) => {
  const slots = Array.from({ length: slotCount }, emptySlot)
  let clock = 0
  /**
   * Sums of `items`, each counted by `count(item, prior)`; items before
   * `loopStart` are before the current tool loop (`prior`).
   */
  return (
    items: ReadonlyArray<ViewItem>,
    loopStart: number,
    count: (item: ViewItem, prior: boolean) => ItemCount
  ): PrefixSums => {
    const { slot, shared, identical } = pick(slots, items, items.length, ++clock)
    const keep = validPrefix(slot, items, shared, loopStart, stamps)
    // The kept items are `items`' own objects when matched by identity (else some may be equal copies).
    slot.source = identical || keep === 0 ? items : undefined
    let unsealed = slot.unsealed.length
    while (unsealed > 0 && slot.unsealed[unsealed - 1]! >= keep) unsealed--
    slot.unsealed.length = unsealed
    slot.stamps.length = unsealed
    slot.loopStart = loopStart
    slot.items.length = keep
    const sums = withRoom(slot.sums, items.length)
    slot.sums = sums
    for (let index = keep; index < items.length; index++) {
      const item = items[index]!
      const result = count(item, index < loopStart)
      const at = index * STRIDE
      sums.copyWithin(at + STRIDE, at, at + STRIDE)
      for (const category in result.byCategory)
        sums[at + STRIDE + categoryIndex.get(category as Category)!]! += result.byCategory[category as Category]!
      sums[at + STRIDE + CATEGORY_COUNT]! += result.unknownImages
      sums[at + STRIDE + CATEGORY_COUNT + 1]! += result.estimatedFiles
      slot.items.push(item)
      if (!MessageSeal.isSealed(item.message)) {
        slot.unsealed.push(index)
        slot.stamps.push(stamps.stampOf(item.message))
      }
    }
    // a copy: the slot's buffer is rewritten by the next call that shares a shorter prefix
    return {
      categories: (end) => sums.slice(end * STRIDE, end * STRIDE + CATEGORY_COUNT),
      unknownImages: (end) => sums[end * STRIDE + CATEGORY_COUNT]!,
      estimatedFiles: (end) => sums[end * STRIDE + CATEGORY_COUNT + 1]!
    }
  }
}

/**
 * A shallow fingerprint of a message: its content and, per part, the part
 * and its payload field. An identity-cache hit is used only while the
 * fingerprint is unchanged, so replacing the content, adding or removing a
 * part, or assigning a part's text / input / output in place is noticed;
 * edits deeper inside a payload object are not (messages are immutable
 * values, DESIGN.md invariants).
 *
 * @category models
 */
export type Shape = ReadonlyArray<unknown>

const payloadOf = (part: object): unknown => {
  const p = part as Record<string, unknown>
  return p.text ?? p.input ?? p.output ?? p.image ?? p.data ?? p.providerOptions
}

const shapeOf = (message: Message): Shape => {
  const shape: Array<unknown> = [message.role, message.content]
  if (typeof message.content !== "string") {
    for (const part of message.content as ReadonlyArray<object>) shape.push(part, payloadOf(part))
  }
  return shape
}

const sameShape = (shape: Shape, message: Message): boolean => {
  if (shape[0] !== message.role || shape[1] !== message.content) return false
  if (typeof message.content === "string") return shape.length === 2
  const parts = message.content as ReadonlyArray<object>
  if (shape.length !== 2 + parts.length * 2) return false
  for (let index = 0; index < parts.length; index++) {
    const part = parts[index]!
    if (shape[2 + index * 2] !== part || shape[3 + index * 2] !== payloadOf(part)) return false
  }
  return true
}

/**
 * The stamps the measurer's caches use: a message is the same while its
 * {@link Shape} is.
 *
 * @category constructors
 */
export const shallowStamps: Stamps<Shape> = { stampOf: shapeOf, stillSame: sameShape }
