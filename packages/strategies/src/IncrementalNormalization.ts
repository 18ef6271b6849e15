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
import type { ContextView, Measurement, Measurer, Message } from "@context-engine/core"
import { ArrayLineage, MeasureCache, Turns } from "@context-engine/core"
import {
  type Chunk,
  delta,
  empty,
  type Frozen,
  freezeSpots,
  type Item,
  isUser,
  lastIndex,
  measuredBy,
  type Spot,
  sameItem,
  withDelta
} from "./FrozenPrefix.ts"
import * as Normalization from "./Normalization.ts"

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

const isWords = (item: Item): boolean => Turns.isUserWordsItem(item)

const partsOf = (message: Message.Message): ReadonlyArray<Message.ContentPart> =>
  typeof message.content === "string" ? [] : message.content

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

/**
 * Whether `items` starts with the frozen prefix (same messages, entry ids and sources) and goes beyond it: without
 * a compare when `items` is recorded as extending the view the prefix was frozen in (`ArrayLineage`).
 */
const extendsPrefix = (frozen: Frozen, items: ReadonlyArray<Item>): boolean => {
  if (items.length <= frozen.length) return false
  if (frozen.raw === items || ArrayLineage.isExtensionOf(items, frozen.raw)) return true
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
  const offset = frozen.length
  const outOffset = frozen.out.length
  freezeSpots(
    frozen,
    middle.changedOut.map((spot) => ({ index: spot.index + outOffset, item: spot.item })),
    middle.changedRaw.map((spot) => ({ index: spot.index + offset, item: spot.item }))
  )
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

/** An instance's last output: its items, and the frozen output (an array grown in place) and its length then. */
interface Output {
  readonly items: ReadonlyArray<Item>
  readonly frozenOut: ReadonlyArray<Item>
  readonly frozenLength: number
}

/**
 * `frozenOut` then `suffixOut`, as one new array recorded with `ArrayLineage`: an extension of the previous
 * output when it is one — the frozen output is the same array, only grown since (`advance` pushes onto it), and
 * the previous output's items after its frozen part are the new output's there (compared over that unfrozen
 * part only) — so the request path knows the new view extends the last one without comparing its items.
 */
const joined = (
  previous: Output | undefined,
  frozenOut: ReadonlyArray<Item>,
  suffixOut: ReadonlyArray<Item>
): ReadonlyArray<Item> => {
  const length = frozenOut.length + suffixOut.length
  const itemAt = (index: number): Item =>
    index < frozenOut.length ? frozenOut[index]! : suffixOut[index - frozenOut.length]!
  const prior = previous?.items
  if (
    prior !== undefined &&
    previous!.frozenOut === frozenOut &&
    previous!.frozenLength <= frozenOut.length &&
    prior.length <= length
  ) {
    let index = previous!.frozenLength
    while (index < prior.length && prior[index] === itemAt(index)) index++
    if (index === prior.length) {
      const added: Array<Item> = []
      for (let at = prior.length; at < length; at++) added.push(itemAt(at))
      return ArrayLineage.extend(prior, added)
    }
  }
  return ArrayLineage.extend(frozenOut, suffixOut)
}

const normalized = (
  start: Frozen,
  suffix: Chunk,
  view: ContextView.ContextView,
  measurer: Measurer.Measurer,
  before: Measurement.Measurement,
  previous: Output | undefined
): Normalized => {
  if (start.changedRaw.length === 0 && start.changedOut.length === 0 && suffix.out === suffix.raw)
    return { view, after: before }
  const out = joined(previous, start.out, suffix.out)
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
  let output: Output | undefined
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
    const result = normalized(start, suffix, view, measurer, before, output)
    output = { items: result.view.items, frozenOut: start.out, frozenLength: start.out.length }
    // Mutates `start` (owned by this instance), so after the result is built.
    frozen = advance(start, items, suffix, view.tools)
    return result
  }
  return Object.assign(step, { frozenLength: () => frozen?.length ?? 0 })
}
