/**
 * The provider's reported usage in measurement: the anchor (the usage of the
 * last response replaces the count of the prefix it covered, for as long as
 * that prefix is unchanged — {@link Anchor}, {@link prefixFingerprint};
 * `Measurer.measure` adds the count of what came after it) and one
 * measurement scale for the trigger and the acceptance of a compaction.
 *
 * The provider's reported usage (`usage.inputTokens`) is the truth for the
 * request it describes; a local count (exact tokenizer of another family, or
 * an estimator) can be far off on some content — C13: a self-hosted model's
 * 32K-vocabulary tokenizer counts code 1.35 × the generic estimate. A
 * compaction triggered on anchored usage must then measure its result on the
 * same scale, or it declines as "already fits" on the rough ruler, reports a
 * completed compaction that removed nothing (vercel/eve #2216), or keeps the
 * stale usage as the new baseline so every later turn re-triggers (pi #1860,
 * Hermes PR 35054).
 *
 * The rule here: when usage arrives, the ratio `usage.inputTokens / local
 * count of the same request` is recorded ({@link ratioFor}); until the next
 * usage, every count that is not anchored on usage is the local count times
 * that ratio ({@link scaled}), reported with method `estimate` and a note
 * (never as `anchored`: a local number is never presented as usage). An
 * anchored measurement is `usage + ratio × local count of what followed`.
 *
 * @since 0.3.0
 */

import { indexOfEntry } from "./AnchorPrefix.ts"
import type { ContextView } from "./ContextView.ts"
import { type Category, fromCounts, type Measurement } from "./Measurement.ts"
import type { CachedMeasurer, Measurer } from "./Measurer.ts"

export { type Anchor, anchorFor, locate, prefixFingerprint } from "./AnchorPrefix.ts"

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
 * A usage-to-local-count ratio and where it was observed.
 *
 * @category models
 */
export interface UsageRatio {
  /** `usage.inputTokens / local count` of the request that ended at {@link lastEntryId}. */
  readonly ratio: number
  readonly lastEntryId: string
}

/**
 * Bounds of a recorded ratio, 0.5..4. Own choice, asymmetric on purpose:
 * tokenizers of the families we know differ by well under 2× on the same
 * text (o200k vs cl100k vs Claude vs small-vocabulary models; C13's
 * 32K-vocabulary model counts code 1.35× the generic estimate). A usage
 * above the local count only makes compaction start earlier, so up to 4× is
 * believed; a usage below half the local count describes another request (a
 * proxy reporting only uncached tokens, a caller's test double reporting 10)
 * and, if believed, would hide a growing request from every trigger until
 * the provider rejects it — so it is clamped rather than trusted. The lower
 * bound is for estimated local counts; an exact count has a higher one
 * ({@link minRatio}).
 *
 * @category constants
 */
export const RATIO_BOUNDS = { min: 0.5, max: 4 } as const

/**
 * The lowest usage / local-count ratio believed for local counts made by a
 * tokenizer of `method`: {@link RATIO_BOUNDS}`.min` for an estimate, 1 for
 * an exact tokenizer — an exact count is never scaled below itself. A usage
 * below the exact count of the request it describes is another request's
 * number (uncached tokens only, a test double) or one of the few things an
 * exact count rounds up (framing, an image at its tile formula's bound);
 * believing it could send a request over the window while the measurement
 * says it fits (the session-14 new-user trial: a mock reporting 100 input
 * tokens halved gpt-4o-mini's exact counts, and a 21,631-token request went
 * into a 16,000-token window). Counting an exact request as it is only makes
 * compaction start a little earlier.
 *
 * @category constants
 */
export const minRatio = (method: "exact" | "estimate"): number => (method === "exact" ? 1 : RATIO_BOUNDS.min)

/**
 * Smallest local count (tokens) a ratio is derived from: below it, framing
 * and rounding dominate the ratio. Own choice.
 *
 * @category constants
 */
export const MIN_RATIO_BASIS_TOKENS = 256

/**
 * Reported usage for an anchored prefix, raised to at least `min` × the
 * prefix's local count ({@link minRatio}; see {@link RATIO_BOUNDS} why). A
 * usage above the local count is taken as reported: it only makes
 * compaction start earlier, and providers count what we cannot see
 * (server-side instructions, tool-use system prompts).
 */
const boundedUsage = (
  reportedTokens: number,
  localPrefixTokens: number,
  min: number
): { readonly tokens: number; readonly note?: string } => {
  const reported = Math.max(0, Math.round(reportedTokens))
  const floor = Math.ceil(localPrefixTokens * min)
  if (localPrefixTokens < MIN_RATIO_BASIS_TOKENS || reported >= floor) return { tokens: reported }
  return {
    tokens: floor,
    note:
      min >= 1
        ? `reported usage of ${reported} tokens is below the exact local count of ${localPrefixTokens} tokens for the prefix it covers (an exact count is not scaled down); counted as ${floor}`
        : `reported usage of ${reported} tokens is below ${min} × the local count of ${localPrefixTokens} tokens for the prefix it covers; counted as ${floor}`
  }
}

/**
 * The anchored prefix's counts per category: the reported usage (bounded
 * below at `minRatioOfLocal` × their sum, {@link minRatio}) split over the
 * local counts `weights` by {@link apportion}, with a note when the usage
 * was bounded.
 *
 * @category anchors
 */
export const anchoredPrefix = (
  weights: ReadonlyArray<number>,
  reportedTokens: number,
  minRatioOfLocal: number = RATIO_BOUNDS.min
): { readonly tokens: Array<number>; readonly note?: string } => {
  const usage = boundedUsage(
    reportedTokens,
    weights.reduce((sum, tokens) => sum + tokens, 0),
    minRatioOfLocal
  )
  const tokens = apportion(weights, usage.tokens)
  return usage.note === undefined ? { tokens } : { tokens, note: usage.note }
}

/**
 * The ratio of a reported usage to the measurer's own count of the request
 * that ended at `lastEntryId` (the view's items up to it, its tools and
 * framing), bounded by {@link RATIO_BOUNDS} and {@link minRatio}. `undefined`
 * when the entry is not in the view, the local count is below
 * {@link MIN_RATIO_BASIS_TOKENS} or the usage is not a positive number.
 *
 * @category constructors
 */
export const ratioFor = (
  measurer: Measurer,
  view: ContextView,
  usage: { readonly inputTokens: number; readonly lastEntryId: string }
): UsageRatio | undefined => {
  const index = indexOfEntry(view, usage.lastEntryId)
  if (index < 0 || !(usage.inputTokens > 0) || !Number.isFinite(usage.inputTokens)) return undefined
  const local =
    (index === view.items.length - 1 ? localCountOf(measurer, view) : undefined) ??
    measurer.measure({ ...view, items: view.items.slice(0, index + 1) }).inputTokens
  if (local < MIN_RATIO_BASIS_TOKENS) return undefined
  const ratio = Math.min(RATIO_BOUNDS.max, Math.max(minRatio(measurer.tokenizer.method), usage.inputTokens / local))
  return { ratio, lastEntryId: usage.lastEntryId }
}

/**
 * Counts on the provider's scale: each category times `ratio`, rounded
 * (`reservedOutput`, not an input count, unchanged) — what the
 * {@link scaled} measurer's `countMessage` returns for a local count.
 *
 * @category constructors
 */
export const scaleCounts = <C extends Partial<Record<Category, number>>>(counts: C, ratio: number): C => {
  const out: Partial<Record<Category, number>> = {}
  for (const key in counts) {
    const value = counts[key as Category] ?? 0
    out[key as Category] = key === "reservedOutput" ? value : Math.round(value * ratio)
  }
  return out as C
}

const scaleMeasurement = (measurement: Measurement, usage: UsageRatio): Measurement => {
  const byCategory = scaleCounts(measurement.byCategory, usage.ratio)
  let inputTokens = 0
  for (const key in byCategory) if (key !== "reservedOutput") inputTokens += byCategory[key as Category]
  const note = `local count × ${usage.ratio.toFixed(3)}: the provider's usage / local count observed for the request ending at ${usage.lastEntryId}`
  return {
    ...measurement,
    byCategory,
    inputTokens,
    totalTokens: inputTokens + byCategory.reservedOutput,
    headroomTokens: measurement.budgetTokens - inputTokens,
    method: "estimate",
    notes: [...(measurement.notes ?? []), note]
  }
}

// What the measurements of `Measurer.make` counted locally on the way: per anchored measurement, the items after the
// anchor by category (scaling them needs no further measurement of the view); per view object, the local count of
// the whole view (the ratio of the usage the provider then reports for that view needs none either).
const anchoredSuffixes = new WeakMap<Measurement, Readonly<Record<Category, number>>>()
interface LocalCount {
  readonly measure: Measurer["measure"]
  readonly items: ContextView["items"]
  readonly itemCount: number
  readonly tools: ContextView["tools"]
  readonly inputTokens: number
}
const localCounts = new WeakMap<ContextView, LocalCount>()

/**
 * Remembers what `measure` counted locally for `measurement` of `view`: the
 * local counts by category of the items up to the anchor (`prefix`, with the
 * view's tool schemas and framing) and after it (`suffix`; the whole view
 * when not `anchored`). {@link scaled} and {@link ratioFor} reuse them instead
 * of measuring the view again. Returns `measurement`.
 *
 * @internal
 */
export const noteLocalCounts = (
  measurement: Measurement,
  view: ContextView,
  measure: Measurer["measure"],
  counts: {
    readonly prefix: Readonly<Record<Category, number>>
    readonly suffix: Readonly<Record<Category, number>>
    readonly anchored: boolean
  }
): Measurement => {
  if (counts.anchored) anchoredSuffixes.set(measurement, counts.suffix)
  let inputTokens = 0
  for (const key in counts.prefix)
    if (key !== "reservedOutput") inputTokens += counts.prefix[key as Category] + counts.suffix[key as Category]
  localCounts.set(view, { measure, items: view.items, itemCount: view.items.length, tools: view.tools, inputTokens })
  return measurement
}

/**
 * The local count of the whole `view` when `measurer` measured this view
 * object last (its request was built from it; an in-place edit since then is
 * not what the provider's usage describes, and the next measurement sees it).
 */
const localCountOf = (measurer: Measurer, view: ContextView): number | undefined => {
  const known = localCounts.get(view)
  return known !== undefined &&
    known.measure === measurer.measure &&
    known.items === view.items &&
    known.itemCount === view.items.length &&
    known.tools === view.tools
    ? known.inputTokens
    : undefined
}

/**
 * Local counts of what followed the anchor: recorded by the measurer, else
 * the items after the anchor measured alone, less the view's own framing
 * (the view with no items). Alone, those items keep the reasoning positions
 * they have in the whole view (the current tool loop starts at the last user
 * message; without one in them, the whole view's loop started at or before
 * the anchor).
 */
const suffixCounts = (
  measurer: Measurer,
  view: ContextView,
  anchored: Measurement,
  lastEntryId: string
): Readonly<Record<Category, number>> | undefined => {
  const recorded = anchoredSuffixes.get(anchored)
  if (recorded !== undefined) return recorded
  const index = indexOfEntry(view, lastEntryId)
  if (index < 0 || index === view.items.length - 1) return undefined
  const after = measurer.measure({ ...view, items: view.items.slice(index + 1) }).byCategory
  const framing = measurer.measure({ ...view, items: [] }).byCategory
  const suffix = { ...after }
  for (const key in suffix) suffix[key as Category] = after[key as Category] - framing[key as Category]
  return suffix
}

/** An anchored measurement with what followed the anchor scaled too: `usage + ratio × local(suffix)`. */
const scaleSuffix = (
  measurer: Measurer,
  view: ContextView,
  anchored: Measurement,
  lastEntryId: string,
  ratio: number
): Measurement => {
  const suffix = suffixCounts(measurer, view, anchored, lastEntryId)
  if (suffix === undefined) return anchored
  const byCategory = { ...anchored.byCategory }
  let changed = false
  for (const key in byCategory) {
    const category = key as Category
    if (category === "reservedOutput") continue
    const added = Math.round((ratio - 1) * (suffix[category] ?? 0))
    changed ||= added !== 0
    byCategory[category] += added
  }
  return changed ? fromCounts(byCategory, anchored) : anchored
}

/**
 * The measurer on the provider's scale: every count is the local count
 * times `usage.ratio` (rounded per message); an anchored measurement is
 * `usage + ratio × local count of the items after the anchor`. A ratio of 1 returns the measurer unchanged.
 *
 * @category constructors
 */
export const scaled = <M extends Measurer>(measurer: M, usage: UsageRatio): M => {
  if (usage.ratio === 1) return measurer
  const { ratio } = usage
  const cached = measurer as Partial<CachedMeasurer>
  const result = {
    ...(cached.cacheSize && cached.clearCache ? { cacheSize: cached.cacheSize, clearCache: cached.clearCache } : {}),
    tokenizer: measurer.tokenizer,
    countMessage: (message, source, position) => scaleCounts(measurer.countMessage(message, source, position), ratio),
    messageTokens: (message, source, position) => Math.round(measurer.messageTokens(message, source, position) * ratio),
    toolSchemaTokens: (tools) => Math.round(measurer.toolSchemaTokens(tools) * ratio),
    measure: (view, options) => {
      const measurement = measurer.measure(view, options)
      return measurement.method === "anchored"
        ? scaleSuffix(measurer, view, measurement, options?.anchor?.lastEntryId ?? "", ratio)
        : scaleMeasurement(measurement, usage)
    }
  } as Measurer as M
  scales.set(result, { local: measurer, ratio })
  return result
}

// The local measurer and ratio of each measurer `scaled` made.
const scales = new WeakMap<Measurer, { readonly local: Measurer; readonly ratio: number }>()

/**
 * The local measurer and ratio a {@link scaled} measurer applies (its
 * `countMessage` is `scaleCounts(local.countMessage(…), ratio)`), or
 * `undefined` for any other measurer. Lets a caller that keeps local counts
 * rescale them when the ratio changes instead of counting again.
 *
 * @category constructors
 */
export const scaleOf = (measurer: Measurer): { readonly local: Measurer; readonly ratio: number } | undefined =>
  scales.get(measurer)
