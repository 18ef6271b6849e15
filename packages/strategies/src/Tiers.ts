/**
 * The built-in stage lists, least destructive first (DESIGN.md "The tiered
 * pipeline"): clamp → dedupe → soft trim → hard clear → input clear → media, then the
 * sliding window for engines that allow loss. Engines and callers start from
 * these and append their own stages (a checkpoint, a custom strategy).
 *
 * @since 0.1.0
 */
import type { Budget, ModelPolicy, Strategy } from "@context-engine/core"
import * as Clamp from "./Clamp.ts"
import * as Dedupe from "./Dedupe.ts"
import * as Media from "./Media.ts"
import * as SlidingWindow from "./SlidingWindow.ts"
import * as ToolInputClear from "./ToolInputClear.ts"
import * as ToolTrim from "./ToolTrim.ts"

/**
 * Options of every built-in stage.
 *
 * @category models
 */
export interface Options {
  readonly clamp?: Clamp.Options
  readonly dedupe?: Dedupe.Options
  readonly toolTrim?: ToolTrim.Options
  readonly media?: Media.Options
  readonly slidingWindow?: SlidingWindow.Options
}

/**
 * Share of the conversation budget that the prompt-cache guard may demand
 * of a tool-trim stage: 10% (own choice), capped by OpenCode's
 * `PRUNE_MINIMUM` of 20,000 tokens, so small windows can still trim.
 *
 * @category constants
 */
export const cacheGuardShare = 0.1

/**
 * The prompt-cache guard for a policy and budget, in tokens: 0 when the
 * provider has no prompt cache (`promptCacheTtlMs === 0`), otherwise
 * `min(20,000, 10% of availableTokens)`.
 *
 * @category getters
 */
export const cacheGuardTokens = (policy: ModelPolicy.ModelPolicy, budget: Budget.Budget): number =>
  policy.promptCacheTtlMs === 0
    ? 0
    : Math.max(0, Math.min(ToolTrim.defaults.minReclaimTokens, Math.floor(budget.availableTokens * cacheGuardShare)))

/**
 * The lossless stages (everything stays recoverable from the transcript
 * through the references they leave).
 *
 * @category constructors
 */
export const deterministic = (
  policy: ModelPolicy.ModelPolicy,
  budget: Budget.Budget,
  options: Options = {}
): Array<Strategy.Strategy> => {
  const toolTrim: ToolTrim.Options = { minReclaimTokens: cacheGuardTokens(policy, budget), ...options.toolTrim }
  return [
    Clamp.make(options.clamp),
    Dedupe.make(options.dedupe),
    ToolTrim.soft(toolTrim),
    ToolTrim.clear(toolTrim),
    ToolInputClear.make(toolTrim),
    Media.make(options.media)
  ]
}

/**
 * {@link deterministic} followed by the sliding window.
 *
 * @category constructors
 */
export const withWindow = (
  policy: ModelPolicy.ModelPolicy,
  budget: Budget.Budget,
  options: Options = {}
): Array<Strategy.Strategy> => [...deterministic(policy, budget, options), SlidingWindow.make(options.slidingWindow)]
