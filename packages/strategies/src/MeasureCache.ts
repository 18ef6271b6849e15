/**
 * An identity cache in front of a {@link Measurer}: counts each message
 * object once. The core measurer already caches by content hash; this layer
 * skips even the hashing for messages the pipeline has seen, so re-measuring
 * after a stage costs only the messages that stage replaced or inserted.
 *
 * @since 0.1.0
 */
import { type ContextView, type Measurement, type Measurer, type Message, ReasoningTokens } from "@context-engine/core"

type Counts = Partial<Record<Measurement.Category, number>>

/**
 * A measurer whose per-message counts are cached by object identity.
 *
 * @category models
 */
export interface CachedMeasurer extends Measurer.Measurer {
  /** The measurer this one wraps. */
  readonly underlying: Measurer.Measurer
}

const sumCounts = (counts: Counts): number => {
  let total = 0
  for (const key in counts) {
    if (key !== "reservedOutput") total += counts[key as Measurement.Category] ?? 0
  }
  return total
}

/**
 * Wraps a measurer (idempotent: a cached measurer is returned as is).
 *
 * @category constructors
 */
export const wrap = (measurer: Measurer.Measurer): CachedMeasurer => {
  if ("underlying" in measurer) return measurer as CachedMeasurer
  const bySource = new Map<string, WeakMap<Message.Message, Counts>>()
  const countMessage: Measurer.MessageCounter = (message, source, position) => {
    // Only reasoning counts differently by position (core's ReasoningTokens); other messages share one count.
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
    }
    return counts
  }
  return {
    underlying: measurer,
    tokenizer: measurer.tokenizer,
    countMessage,
    messageTokens: (message, source, position) => sumCounts(countMessage(message, source, position)),
    toolSchemaTokens: (tools) => measurer.toolSchemaTokens(tools),
    measure: (view, options) => measurer.measure(view, options)
  }
}

/**
 * Tokens of one view item.
 *
 * @category getters
 */
export const itemTokens = (measurer: Measurer.Measurer, item: ContextView.ViewItem): number =>
  measurer.messageTokens(item.message, item.source)
