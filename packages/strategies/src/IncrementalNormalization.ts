/**
 * {@link Normalization.normalize} step after step in O(new items), for the
 * request path (the middleware normalizes every request; issue #13: the
 * per-step cost must not grow with the session).
 *
 * It keeps the normalized form of a prefix of the view, "frozen" at a clean
 * boundary, and normalizes only the items after it. Normalizing the prefix
 * and the rest separately gives the whole view's normalization when:
 *
 * 1. the boundary item is a user or assistant message normalization keeps
 *    (so no run of tool messages, and no pairing repair, spans it);
 * 2. no tool-call id, tool-result id or entry id after the boundary (as
 *    given or as renamed/inserted by the repair) is a tool-call id or entry id
 *    before it (so pairing, id renames and inserts never look across it);
 * 3. the latest user message, which normalization never drops, is the same
 *    for the parts as for the whole wherever that matters (an empty one).
 *
 * Every step checks them and normalizes the whole view cold when one fails
 * or when the view does not extend the previous one (an app rewrote an
 * earlier message). The measurement is the pipeline's running measurement:
 * the given one, minus the counts of the items normalization removed or
 * replaced, plus those of the items it put in, each counted at its
 * reasoning position (`ReasoningTokens`: before the latest user message is
 * "prior").
 *
 * @since 0.1.0
 */
import type { ContextView, Measurer, Message } from "@context-engine/core"
import { MeasureCache, Measurement, Turns } from "@context-engine/core"
import * as Normalization from "./Normalization.ts"

type Item = ContextView.ViewItem
type Counts = { -readonly [K in Measurement.Category]: number }
interface Spot {
  readonly index: number
  readonly item: Item
}

/** One part of a view normalized on its own; indices are local to the part. */
interface Chunk {
  readonly raw: ReadonlyArray<Item>
  /** `raw` itself when nothing changed. */
  readonly out: ReadonlyArray<Item>
  readonly changedRaw: ReadonlyArray<Spot>
  readonly changedOut: ReadonlyArray<Spot>
}

/** The frozen prefix `[0, length)` of the raw view and its normalized form. Owned by one instance, grown in place. */
interface Frozen {
  readonly measurer: Measurer.Measurer
  raw: ReadonlyArray<Item>
  length: number
  readonly out: Array<Item>
  readonly callIds: Set<string>
  readonly entryIds: Set<string>
  readonly changedRaw: Array<Spot>
  readonly changedOut: Array<Spot>
  /** Count change of the prefix when every item of it is before the latest user message. */
  readonly priorDelta: Counts
  lastUserRaw: number
  lastUserOut: number
  /** Latest user message that is the user's words (`Turns.isUserWordsItem`), -1 when none. */
  lastUserWords: number
}

/**
 * A view normalized, with its measurement (see the module doc).
 *
 * @category models
 */
export interface Normalized {
  readonly view: ContextView.ContextView
  readonly after: Measurement.Measurement
}

/**
 * Normalizes one step's view, given its measurement `before` and the measurer that made it.
 *
 * @category models
 */
export interface Incremental {
  (view: ContextView.ContextView, measurer: Measurer.Measurer, before: Measurement.Measurement): Normalized
  /** How many items of the last view are frozen (reused at the next step without normalizing them again). */
  readonly frozenLength: () => number
}

const partsOf = (message: Message.Message): ReadonlyArray<Message.ContentPart> =>
  typeof message.content === "string" ? [] : message.content

const lastIndex = (items: ReadonlyArray<Item>, test: (item: Item) => boolean): number => {
  for (let index = items.length - 1; index >= 0; index--) if (test(items[index]!)) return index
  return -1
}
const isUser = (item: Item): boolean => item.message.role === "user"
const isWords = (item: Item): boolean => Turns.isUserWordsItem(item)

const sameItem = (a: Item, b: Item): boolean =>
  a === b ||
  (a.entryId === b.entryId &&
    a.message === b.message &&
    a.source === b.source &&
    a.editedBy.length === b.editedBy.length &&
    a.editedBy.every((name, index) => name === b.editedBy[index]))

const normalizeChunk = (raw: ReadonlyArray<Item>, tools: ContextView.ContextView["tools"]): Chunk => {
  const view = { items: raw, tools }
  const result = Normalization.normalize(view).view
  if (result === view) return { raw, out: raw, changedRaw: [], changedOut: [] }
  const kept = new Set(result.items)
  const given = new Set(raw)
  const changed = (items: ReadonlyArray<Item>, other: Set<Item>): Array<Spot> =>
    items.flatMap((item, index) => (other.has(item) ? [] : [{ index, item }]))
  return { raw, out: result.items, changedRaw: changed(raw, kept), changedOut: changed(result.items, given) }
}

const empty = (measurer: Measurer.Measurer, raw: ReadonlyArray<Item>): Frozen => ({
  measurer,
  raw,
  length: 0,
  out: [],
  callIds: new Set(),
  entryIds: new Set(),
  changedRaw: [],
  changedOut: [],
  priorDelta: Measurement.zeroCounts(),
  lastUserRaw: -1,
  lastUserOut: -1,
  lastUserWords: -1
})

/** Whether `items` starts with the frozen prefix (same messages, entry ids and sources) and goes beyond it. */
const extendsPrefix = (frozen: Frozen, items: ReadonlyArray<Item>): boolean => {
  if (items.length <= frozen.length) return false
  if (frozen.raw === items) return true
  for (let index = 0; index < frozen.length; index++) if (!sameItem(frozen.raw[index]!, items[index]!)) return false
  return true
}

const cleanBoundary = (item: Item): boolean =>
  (item.message.role === "user" || item.message.role === "assistant") && !Normalization.isDroppable(item.message)

/** Condition 2 of the module doc: nothing in `items` (and `changed`, the repair's output) names an id of `callIds` / `entryIds`. */
const disjoint = (
  callIds: ReadonlySet<string>,
  entryIds: ReadonlySet<string>,
  items: ReadonlyArray<Item>,
  changed: ReadonlyArray<Spot>
): boolean => {
  const clear = (item: Item): boolean =>
    !entryIds.has(item.entryId) &&
    partsOf(item.message).every(
      (part) => (part.type !== "tool-call" && part.type !== "tool-result") || !callIds.has(part.toolCallId)
    )
  return items.every(clear) && changed.every((spot) => clear(spot.item))
}

/** Condition 3: the protected latest user message of the whole view and of the suffix agree where it matters. */
const sameProtection = (frozen: Frozen, items: ReadonlyArray<Item>, suffix: Chunk): boolean => {
  const offset = frozen.length
  const words = lastIndex(suffix.raw, isWords)
  const anyUser = lastIndex(suffix.raw, isUser)
  const local = words !== -1 ? offset + words : anyUser !== -1 ? offset + anyUser : -1
  const whole =
    words !== -1
      ? offset + words
      : frozen.lastUserWords !== -1
        ? frozen.lastUserWords
        : anyUser !== -1
          ? offset + anyUser
          : frozen.lastUserRaw
  if (local === whole) return true
  const matters = (index: number): boolean => index !== -1 && Normalization.isDroppable(items[index]!.message)
  return !matters(local) && !matters(whole)
}

const compatible = (frozen: Frozen, items: ReadonlyArray<Item>, suffix: Chunk): boolean =>
  cleanBoundary(suffix.raw[0]!) &&
  disjoint(frozen.callIds, frozen.entryIds, suffix.raw, suffix.changedOut) &&
  sameProtection(frozen, items, suffix)

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

/** The last clean boundary in `raw` (index > 0) before which no tool call is left open, -1 when none. */
const lastBoundary = (raw: ReadonlyArray<Item>): number => {
  const open = new Set<string>()
  let found = -1
  raw.forEach((item, index) => {
    const role = item.message.role
    // A user message closes the calls before it: they were interrupted (a later result would be an anomaly).
    if (index > 0 && cleanBoundary(item) && (role === "user" || open.size === 0)) found = index
    if (role === "user") open.clear()
    for (const part of partsOf(item.message)) {
      if (part.type === "tool-call") open.add(part.toolCallId)
      else if (part.type === "tool-result") open.delete(part.toolCallId)
    }
  })
  return found
}

/** The tool-call ids and entry ids `items` and `spots` bring. */
const idsOf = (items: ReadonlyArray<Item>, spots: ReadonlyArray<Spot>) => {
  const callIds = new Set<string>()
  const entryIds = new Set<string>()
  const add = (item: Item): void => {
    entryIds.add(item.entryId)
    for (const part of partsOf(item.message)) if (part.type === "tool-call") callIds.add(part.toolCallId)
  }
  for (const item of items) add(item)
  for (const spot of spots) add(spot.item)
  return { callIds, entryIds }
}

/**
 * Freezes more of the view, in place: the suffix up to its last clean
 * boundary, when that boundary holds for the items after it too.
 */
const advance = (
  frozen: Frozen,
  items: ReadonlyArray<Item>,
  suffix: Chunk,
  tools: ContextView.ContextView["tools"]
): Frozen => {
  const cut = lastBoundary(suffix.raw)
  if (cut === -1) return frozen
  const middle = normalizeChunk(suffix.raw.slice(0, cut), tools)
  const protectedIndex = Turns.latestUserIndex(middle.raw)
  if (protectedIndex !== -1 && Normalization.isDroppable(middle.raw[protectedIndex]!.message)) return frozen
  const ids = idsOf(middle.raw, middle.changedOut)
  if (!disjoint(ids.callIds, ids.entryIds, suffix.raw.slice(cut), [])) return frozen
  for (const id of ids.callIds) frozen.callIds.add(id)
  for (const id of ids.entryIds) frozen.entryIds.add(id)
  const measurer = MeasureCache.wrap(frozen.measurer)
  countSpots(measurer, frozen.priorDelta, middle.changedOut, 1, 0, Number.POSITIVE_INFINITY)
  countSpots(measurer, frozen.priorDelta, middle.changedRaw, -1, 0, Number.POSITIVE_INFINITY)
  const offset = frozen.length
  const outOffset = frozen.out.length
  for (const spot of middle.changedRaw) frozen.changedRaw.push({ index: spot.index + offset, item: spot.item })
  for (const spot of middle.changedOut) frozen.changedOut.push({ index: spot.index + outOffset, item: spot.item })
  for (const item of middle.out) frozen.out.push(item)
  const lastUser = lastIndex(middle.raw, isUser)
  const lastUserOut = lastIndex(middle.out, isUser)
  const lastWords = lastIndex(middle.raw, isWords)
  if (lastUser !== -1) frozen.lastUserRaw = offset + lastUser
  if (lastUserOut !== -1) frozen.lastUserOut = outOffset + lastUserOut
  if (lastWords !== -1) frozen.lastUserWords = offset + lastWords
  frozen.raw = items
  frozen.length = offset + cut
  return frozen
}

/**
 * The frozen prefix counted by `measurer`. What is frozen (which items
 * normalization changed) does not depend on the measurer; only the prior
 * delta is a count, so another measurer — the engine's usage-scaled one is a
 * new object whenever the provider reports usage — recounts just the changed
 * items (O(changed items), not O(view)). The old state is dropped by the caller.
 */
const measuredBy = (frozen: Frozen, measurer: Measurer.Measurer): Frozen => {
  if (frozen.measurer === measurer) return frozen
  const priorDelta = Measurement.zeroCounts()
  const counting = MeasureCache.wrap(measurer)
  countSpots(counting, priorDelta, frozen.changedOut, 1, 0, Number.POSITIVE_INFINITY)
  countSpots(counting, priorDelta, frozen.changedRaw, -1, 0, Number.POSITIVE_INFINITY)
  return { ...frozen, measurer, priorDelta }
}

/**
 * Count change from the raw view to the normalized one: only the items that
 * differ are counted. An unchanged item is before the latest user message in
 * both views or in neither, since that message is the same item in both
 * (when it is not, every item is summed).
 */
const delta = (
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
    countSpots(measurer, sum, frozen.changedOut, 1, 0, outStart)
    countSpots(measurer, sum, frozen.changedRaw, -1, 0, rawStart)
  }
  countSpots(measurer, sum, suffix.changedOut, 1, frozen.out.length, outStart)
  countSpots(measurer, sum, suffix.changedRaw, -1, frozen.length, rawStart)
  return sum
}

const withDelta = (before: Measurement.Measurement, change: Counts): Measurement.Measurement => {
  const byCategory = { ...before.byCategory } as Counts
  let inputTokens = 0
  for (const category of Measurement.categories) {
    byCategory[category] += change[category]
    if (category !== "reservedOutput") inputTokens += byCategory[category]
  }
  return {
    ...before,
    byCategory,
    inputTokens,
    totalTokens: inputTokens + byCategory.reservedOutput,
    headroomTokens: before.budgetTokens - inputTokens
  }
}

const normalized = (
  start: Frozen,
  suffix: Chunk,
  view: ContextView.ContextView,
  measurer: Measurer.Measurer,
  before: Measurement.Measurement
): Normalized => {
  if (start.changedRaw.length === 0 && start.changedOut.length === 0 && suffix.out === suffix.raw)
    return { view, after: before }
  const out = start.out.length === 0 ? suffix.out : start.out.concat(suffix.out)
  const change = delta(start, suffix, view.items, out, MeasureCache.wrap(measurer))
  return { view: { items: out, tools: view.tools }, after: withDelta(before, change) }
}

/**
 * A fresh {@link Incremental}. An instance follows one lineage of views (one
 * session); a view that does not extend the previous one is normalized cold
 * and starts a new lineage. Its view equals `Normalization.normalize(view).view`
 * item for item and its measurement equals the pipeline's (`Pipeline.run`
 * with no strategies) — property-tested against both.
 *
 * @category constructors
 */
export const make = (): Incremental => {
  let frozen: Frozen | undefined
  const step = (
    view: ContextView.ContextView,
    measurer: Measurer.Measurer,
    before: Measurement.Measurement
  ): Normalized => {
    const items = view.items
    let base = frozen !== undefined && extendsPrefix(frozen, items) ? measuredBy(frozen, measurer) : undefined
    let suffix = normalizeChunk(base === undefined ? items : items.slice(base.length), view.tools)
    if (base !== undefined && !compatible(base, items, suffix)) {
      base = undefined
      suffix = normalizeChunk(items, view.tools)
    }
    const start = base ?? empty(measurer, items)
    const result = normalized(start, suffix, view, measurer, before)
    // Mutates `start` (owned by this instance), so after the result is built.
    frozen = advance(start, items, suffix, view.tools)
    return result
  }
  return Object.assign(step, { frozenLength: () => frozen?.length ?? 0 })
}
