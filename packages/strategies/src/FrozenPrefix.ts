/**
 * The state {@link IncrementalNormalization} keeps between steps — the
 * frozen prefix of the view and its normalized form — and the count change
 * normalization makes, counting only the items it removed, replaced or put
 * in (see `IncrementalNormalization`'s module doc for when a prefix may be
 * frozen).
 *
 * The frozen changed items keep their local counts (of the unscaled
 * measurer, before the latest user message: "prior"). The engine's measurer
 * is usage-scaled (`UsageScale.scaled`: a new object whenever the provider
 * reports usage, each count `scaleCounts(local, ratio)`), so a step with a
 * new ratio rescales the kept counts — arithmetic per changed item — instead
 * of looking each item up in the measurer's caches again. The sums are the
 * same: the scaled measurer's count of an item is by definition its local
 * count rescaled.
 *
 * Internal to the strategies package.
 *
 * @since 0.5.0
 */
import type { ContextView, Measurer } from "@context-engine/core"
import { MeasureCache, Measurement, UsageScale } from "@context-engine/core"

export type Item = ContextView.ViewItem
export type Counts = { -readonly [K in Measurement.Category]: number }
type LocalCounts = Partial<Record<Measurement.Category, number>>
export interface Spot {
  readonly index: number
  readonly item: Item
}

/** One part of a view normalized on its own; indices are local to the part. */
export interface Chunk {
  readonly raw: ReadonlyArray<Item>
  /** `raw` itself when nothing changed. */
  readonly out: ReadonlyArray<Item>
  readonly changedRaw: ReadonlyArray<Spot>
  readonly changedOut: ReadonlyArray<Spot>
}

/** The frozen prefix `[0, length)` of the raw view and its normalized form. Owned by one instance, grown in place. */
export interface Frozen {
  readonly measurer: Measurer.Measurer
  /** `measurer` unscaled (`UsageScale.scaleOf`), and the ratio it applies (`undefined`: none). */
  readonly local: Measurer.Measurer
  readonly ratio: number | undefined
  raw: ReadonlyArray<Item>
  length: number
  readonly out: Array<Item>
  readonly callIds: Set<string>
  readonly entryIds: Set<string>
  readonly changedRaw: Array<Spot>
  readonly changedOut: Array<Spot>
  /** `local`'s prior counts of `changedRaw` / `changedOut`, position by position. */
  readonly localRaw: Array<LocalCounts>
  readonly localOut: Array<LocalCounts>
  /** Their current counts (after the latest user message), each counted when first needed. */
  readonly currentRaw: Array<LocalCounts | undefined>
  readonly currentOut: Array<LocalCounts | undefined>
  /** Count change of the prefix when every item of it is before the latest user message. */
  readonly priorDelta: Counts
  lastUserRaw: number
  lastUserOut: number
  /** Latest user message that is the user's words (`Turns.isUserWordsItem`), -1 when none. */
  lastUserWords: number
}

export const lastIndex = (items: ReadonlyArray<Item>, test: (item: Item) => boolean): number => {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index]!)) return index
  return -1
}
export const isUser = (item: Item): boolean => item.message.role === "user"

export const sameItem = (a: Item, b: Item): boolean =>
  a === b ||
  (a.entryId === b.entryId &&
    a.message === b.message &&
    a.source === b.source &&
    a.editedBy.length === b.editedBy.length &&
    a.editedBy.every((name, index) => name === b.editedBy[index]))

/** An empty frozen prefix counted by `measurer`. */
export const empty = (measurer: Measurer.Measurer, raw: ReadonlyArray<Item>): Frozen => {
  const scale = UsageScale.scaleOf(measurer)
  return {
    measurer,
    local: scale?.local ?? measurer,
    ratio: scale?.ratio,
    raw,
    length: 0,
    out: [],
    callIds: new Set(),
    entryIds: new Set(),
    changedRaw: [],
    changedOut: [],
    localRaw: [],
    localOut: [],
    currentRaw: [],
    currentOut: [],
    priorDelta: Measurement.zeroCounts(),
    lastUserRaw: -1,
    lastUserOut: -1,
    lastUserWords: -1
  }
}

const countSpots = (
  measurer: Measurer.CachedMeasurer,
  sum: Counts,
  spots: ReadonlyArray<Spot>,
  sign: 1 | -1,
  offset: number,
  loopStart: number
): void => {
  for (const spot of spots) {
    const position = spot.index + offset < loopStart ? "prior" : "current"
    const counts = measurer.countMessage(spot.item.message, spot.item.source, position)
    for (const key in counts) sum[key as Measurement.Category] += sign * (counts[key as Measurement.Category] ?? 0)
  }
}

/** `local`'s prior counts of `spots`. */
const localCountsOf = (local: Measurer.Measurer, spots: ReadonlyArray<Spot>): Array<LocalCounts> => {
  const counting = MeasureCache.wrap(local)
  return spots.map((spot) => counting.countMessage(spot.item.message, spot.item.source, "prior"))
}

/** Adds `sign ×` the count `at` of `counts`, on `ratio`'s scale (`UsageScale.scaleCounts`), to `sum`. */
const addScaled = (sum: Counts, counts: LocalCounts, sign: 1 | -1, ratio: number | undefined): void => {
  const scaled = ratio === undefined ? counts : UsageScale.scaleCounts(counts, ratio)
  for (const key in scaled) sum[key as Measurement.Category] += sign * (scaled[key as Measurement.Category] ?? 0)
}

/** Freezes `changedOut` / `changedRaw` (indices already global) into `frozen`, in place. */
export const freezeSpots = (frozen: Frozen, changedOut: ReadonlyArray<Spot>, changedRaw: ReadonlyArray<Spot>): void => {
  const outCounts = localCountsOf(frozen.local, changedOut)
  const rawCounts = localCountsOf(frozen.local, changedRaw)
  changedOut.forEach((spot, index) => {
    frozen.changedOut.push(spot)
    frozen.localOut.push(outCounts[index]!)
    addScaled(frozen.priorDelta, outCounts[index]!, 1, frozen.ratio)
  })
  changedRaw.forEach((spot, index) => {
    frozen.changedRaw.push(spot)
    frozen.localRaw.push(rawCounts[index]!)
    addScaled(frozen.priorDelta, rawCounts[index]!, -1, frozen.ratio)
  })
}

/**
 * The frozen prefix counted by `measurer`. What is frozen (which items
 * normalization changed) does not depend on the measurer; only the prior
 * delta is a count: under the same local measurer it is the kept local
 * counts rescaled (O(changed items) arithmetic, no lookups); under another
 * one the changed items are counted again. The old state is dropped by the
 * caller.
 */
export const measuredBy = (frozen: Frozen, measurer: Measurer.Measurer): Frozen => {
  if (frozen.measurer === measurer) return frozen
  const scale = UsageScale.scaleOf(measurer)
  const local = scale?.local ?? measurer
  const same = local === frozen.local
  const localOut = same ? frozen.localOut : localCountsOf(local, frozen.changedOut)
  const localRaw = same ? frozen.localRaw : localCountsOf(local, frozen.changedRaw)
  const priorDelta = Measurement.zeroCounts()
  for (const counts of localOut) addScaled(priorDelta, counts, 1, scale?.ratio)
  for (const counts of localRaw) addScaled(priorDelta, counts, -1, scale?.ratio)
  const current = same ? {} : { currentOut: [], currentRaw: [] }
  return { ...frozen, ...current, measurer, local, ratio: scale?.ratio, localOut, localRaw, priorDelta }
}

/** The frozen spots' count change for a latest user message at `loopStart`: prior counts before it, current after. */
const frozenSpots = (
  frozen: Frozen,
  sum: Counts,
  spots: ReadonlyArray<Spot>,
  prior: ReadonlyArray<LocalCounts>,
  current: Array<LocalCounts | undefined>,
  sign: 1 | -1,
  loopStart: number
): void => {
  const counting = MeasureCache.wrap(frozen.local)
  spots.forEach((spot, index) => {
    if (spot.index < loopStart) addScaled(sum, prior[index]!, sign, frozen.ratio)
    else {
      current[index] ??= counting.countMessage(spot.item.message, spot.item.source, "current")
      addScaled(sum, current[index]!, sign, frozen.ratio)
    }
  })
}

/**
 * Count change from the raw view to the normalized one: only the items that
 * differ are counted. An unchanged item is before the latest user message in
 * both views or in neither, since that message is the same item in both
 * (when it is not, every item is summed). `frozen` is counted by `measurer`'s
 * measurer ({@link measuredBy}).
 */
export const delta = (
  frozen: Frozen,
  suffix: Chunk,
  items: ReadonlyArray<Item>,
  out: ReadonlyArray<Item>,
  measurer: Measurer.CachedMeasurer
): Counts => {
  const sum = Measurement.zeroCounts()
  const userRaw = lastIndex(suffix.raw, isUser)
  const userOut = lastIndex(suffix.out, isUser)
  const loopRaw = userRaw === -1 ? frozen.lastUserRaw : frozen.length + userRaw
  const loopOut = userOut === -1 ? frozen.lastUserOut : frozen.out.length + userOut
  const aligned = loopRaw === -1 ? loopOut === -1 : loopOut !== -1 && sameItem(items[loopRaw]!, out[loopOut]!)
  const rawStart = Math.max(loopRaw, 0)
  const outStart = Math.max(loopOut, 0)
  if (!aligned) {
    countSpots(
      measurer,
      sum,
      out.map((item, index) => ({ index, item })),
      1,
      0,
      outStart
    )
    countSpots(
      measurer,
      sum,
      items.map((item, index) => ({ index, item })),
      -1,
      0,
      rawStart
    )
    return sum
  }
  if (loopRaw >= frozen.length && loopOut >= frozen.out.length) {
    for (const category of Measurement.categories) sum[category] += frozen.priorDelta[category]
  } else {
    frozenSpots(frozen, sum, frozen.changedOut, frozen.localOut, frozen.currentOut, 1, outStart)
    frozenSpots(frozen, sum, frozen.changedRaw, frozen.localRaw, frozen.currentRaw, -1, rawStart)
  }
  countSpots(measurer, sum, suffix.changedOut, 1, frozen.out.length, outStart)
  countSpots(measurer, sum, suffix.changedRaw, -1, frozen.length, rawStart)
  return sum
}

export const withDelta = (before: Measurement.Measurement, change: Counts): Measurement.Measurement => {
  const byCategory = { ...before.byCategory } as Counts
  for (const category of Measurement.categories) byCategory[category] += change[category]
  return Measurement.fromCounts(byCategory, before)
}
