/**
 * The strategy contract. A strategy looks at the current view and proposes
 * view edits; it never mutates its input and never edits the transcript. The
 * pipeline runner (packages/strategies) applies the edits, re-measures, and
 * stops as soon as the view fits.
 *
 * A custom strategy in a few lines:
 *
 * ```ts
 * const dropBanners: Strategy.Strategy = {
 *   name: "dropBanners",
 *   apply: ({ view }) => ({
 *     edits: view.items
 *       .filter((item) => item.message.role === "user" && item.message.content === "[banner]")
 *       .map((item) => ({ op: "drop", entryId: item.entryId, strategy: "dropBanners", reason: "banner" }))
 *   })
 * }
 * ```
 *
 * @since 0.1.0
 */
import type { Budget } from "./Budget.ts"
import type { ContextView } from "./ContextView.ts"
import type { Measurement } from "./Measurement.ts"
import type { Measurer } from "./Measurer.ts"
import type { ModelPolicy } from "./ModelPolicy.ts"
import type { ViewEdit } from "./ViewEdit.ts"

/**
 * What a strategy sees.
 *
 * @category models
 */
export interface StrategyInput {
  readonly view: ContextView
  readonly measurement: Measurement
  /** The input size (tokens) the pipeline is trying to reach. */
  readonly targetTokens: number
  readonly budget: Budget
  readonly measurer: Measurer
  readonly policy: ModelPolicy
}

/**
 * What a strategy returns. `tokensFreed` is the strategy's own estimate; the
 * pipeline re-measures and reports the real figure.
 *
 * @category models
 */
export interface StrategyResult {
  readonly edits: ReadonlyArray<ViewEdit>
  readonly tokensFreed?: number
  readonly note?: string
}

/**
 * The version of the strategy contract this release defines (the same
 * literal as `ContextEngine.SPECIFICATION_VERSION`). A strategy may declare
 * it; one that declares another version is skipped by the pipeline with a
 * stage report saying so, instead of being called with inputs it does not
 * expect.
 *
 * @category constants
 */
export const SPECIFICATION_VERSION = "v1" as const

/**
 * A strategy.
 *
 * @category models
 */
export interface Strategy {
  /**
   * The contract version the strategy implements. Optional (absent means
   * {@link SPECIFICATION_VERSION}), so the few-line strategies above stay valid.
   */
  readonly specificationVersion?: typeof SPECIFICATION_VERSION
  readonly name: string
  /**
   * Prompt-cache guard: the pipeline discards this strategy's edits when they
   * free fewer tokens than this (editing a cached prefix costs a cache miss).
   */
  readonly minReclaimTokens?: number
  /** Whether the strategy loses information that no reference recovers (sliding window). */
  readonly lossy?: boolean
  /**
   * Proposes edits for `input.view`. Synchronous: the pipeline is pure and
   * does not await, so a Promise (an `async apply`) is reported as a
   * malformed result. Every edit names an entry of `input.view` (or an
   * insert earlier in the same result); one that names another entry makes
   * the whole result malformed, and none of its edits apply.
   */
  readonly apply: (input: StrategyInput) => StrategyResult
}
