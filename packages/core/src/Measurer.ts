/**
 * The measurer: counts a view's tokens per category with a {@link Tokenizer},
 * caching each message's count by content hash so a step re-counts only what
 * is new. Strategies and engines measure through this interface.
 *
 * @since 0.1.0
 */
import type { Budget } from "./Budget.ts"
import type { ContextView, ItemSource, ToolDefinition } from "./ContextView.ts"
import type { Category, CategoryCounts, Measurement } from "./Measurement.ts"
import type { Message } from "./Message.ts"
import type { Tokenizer } from "./Tokenizer.ts"

/**
 * Counts one message, by category. `source` decides whether text counts as
 * `checkpoint` / `memory` rather than user or assistant text.
 *
 * @category models
 */
export type MessageCounter = (message: Message, source?: ItemSource) => Partial<Record<Category, number>>

/**
 * A measurer bound to one tokenizer.
 *
 * @category models
 */
export interface Measurer {
  readonly tokenizer: Tokenizer
  /** Tokens of one message (including per-message framing), by category. */
  readonly countMessage: MessageCounter
  /** Total tokens of one message. */
  readonly messageTokens: (message: Message, source?: ItemSource) => number
  /** Tokens of the tool schemas (name + description + JSON schema of each tool). */
  readonly toolSchemaTokens: (tools: ReadonlyArray<ToolDefinition>) => number
  /**
   * Measures a view against a budget. `reservedOutputTokens` is reported in
   * the `reservedOutput` category; `anchor` switches to anchored measurement.
   */
  readonly measure: (
    view: ContextView,
    options?: {
      readonly budget?: Budget
      readonly anchor?: Anchor
    }
  ) => Measurement
}

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
}

/** @category models */
export type { CategoryCounts }
