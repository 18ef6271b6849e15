/**
 * The options every engine takes (the kernel's, `Engine.ts`).
 *
 * @since 0.3.0
 */
import type { Budget, Measurer, ModelPolicy, Strategy } from "@context-engine/core"
import type { Tiers } from "@context-engine/strategies"

/**
 * Options every engine takes. Shares are fractions 0..1; token counts are in
 * tokens of the policy's tokenizer.
 *
 * @category models
 */
export interface Options {
  /**
   * Measurer per policy. Default: `Measurer.make(Tokenizers.forPolicy(policy))`,
   * one per tokenizer id, kept for the engine's lifetime so counts are cached.
   */
  readonly measurer?: (policy: ModelPolicy.ModelPolicy) => Measurer.Measurer
  /** Options of the built-in stages (see each strategy for defaults and their sources). */
  readonly strategies?: Tiers.Options
  /**
   * Custom strategies, kept with the built-in stages: they run after the
   * lossless built-in stages (clamp → dedupe → soft trim → hard clear →
   * media) and before the engine's lossy tier (the sliding window, or a
   * checkpoint), each with its own stage report.
   */
  readonly extraStrategies?: ReadonlyArray<Strategy.Strategy>
  /**
   * Replaces the built-in stages (explicit; `[]` runs none). The custom
   * strategies and the engine's lossy tier still follow.
   */
  readonly replaceBuiltInStrategies?: (
    policy: ModelPolicy.ModelPolicy,
    budget: Budget.Budget
  ) => ReadonlyArray<Strategy.Strategy>
  /**
   * Low-water mark of a threshold-triggered compaction as a share of the
   * conversation budget (default `Engine.DEFAULT_LOW_WATER_SHARE`); 1 turns
   * the hysteresis off (compact only until the request fits).
   */
  readonly lowWaterShare?: number
  /**
   * Clock for entry timestamps and `createdAt`. Default: the last input
   * entry's timestamp, so a retried compaction appends the very same entries
   * (a store treats an identical retry as a no-op).
   */
  readonly now?: () => Date
  /**
   * Deadline of a custom strategy's `apply` in ms: `apply` is synchronous (an `async apply`'s Promise is a
   * `malformed` result), so the deadline cannot interrupt it — a result that took longer is discarded
   * (`Pipeline.Input.strategyTimeoutMs`).
   */
  readonly strategyTimeoutMs?: number
}
