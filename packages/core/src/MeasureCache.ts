/**
 * The count cache for any {@link Measurer.Measurer}: measurers built by
 * `Measurer.make` already cache per message (by identity, then by content
 * hash) and are returned as they are; any other measurer (a test double, a
 * user's own) gets an identity cache in front of its per-message counts, so
 * re-measuring a view after a pipeline stage costs only the messages that
 * stage replaced or inserted.
 *
 * @since 0.2.0
 */
import type { ItemSource } from "./ContextView.ts"
import type { Category } from "./Measurement.ts"
import type { CachedMeasurer, Measurer } from "./Measurer.ts"
import type { Message } from "./Message.ts"
import * as ReasoningTokens from "./ReasoningTokens.ts"

type Counts = Partial<Record<Category, number>>

const isCached = (measurer: Measurer): measurer is CachedMeasurer =>
  typeof (measurer as Partial<CachedMeasurer>).cacheSize === "function" &&
  typeof (measurer as Partial<CachedMeasurer>).clearCache === "function"

const sumCounts = (counts: Counts): number => {
  let total = 0
  for (const key in counts) {
    if (key !== "reservedOutput") total += counts[key as Category] ?? 0
  }
  return total
}

/**
 * `measurer` with a count cache (idempotent: a cached measurer is returned
 * as is). The cache keys messages by object identity per item source (and,
 * for messages with reasoning, per position — `ReasoningTokens`);
 * messages are immutable values (DESIGN.md invariants), so a new count needs
 * a new message object.
 *
 * @example
 * ```ts
 * import { MeasureCache } from "@context-engine/core"
 * import { FakeMeasurer } from "@context-engine/core/testing"
 * const measurer = MeasureCache.wrap(FakeMeasurer.make())
 * measurer.cacheSize() // 0
 * ```
 *
 * @category constructors
 */
export const wrap = (measurer: Measurer): CachedMeasurer => {
  if (isCached(measurer)) return measurer
  let bySource = new Map<string, WeakMap<Message, Counts>>()
  let size = 0
  const countMessage = (message: Message, source?: ItemSource, position?: ReasoningTokens.Position): Counts => {
    // Only reasoning counts differently by position (ReasoningTokens); other messages share one count.
    const prior = position === "prior" && ReasoningTokens.hasReasoning(message)
    const key = `${source ?? ""}|${prior ? "prior" : "current"}`
    let cache = bySource.get(key)
    if (cache === undefined) {
      cache = new WeakMap()
      bySource.set(key, cache)
    }
    let counts = cache.get(message)
    if (counts === undefined) {
      counts = measurer.countMessage(message, source, prior ? "prior" : "current")
      cache.set(message, counts)
      size++
    }
    return counts
  }
  return {
    tokenizer: measurer.tokenizer,
    countMessage,
    messageTokens: (message, source, position) => sumCounts(countMessage(message, source, position)),
    toolSchemaTokens: (tools) => measurer.toolSchemaTokens(tools),
    measure: (view, options) => measurer.measure(view, options),
    cacheSize: () => size,
    clearCache: () => {
      bySource = new Map()
      size = 0
    }
  }
}
