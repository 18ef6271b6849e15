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

/**
 * Tool-trim protection of the last-resort rungs ({@link lastResort}, and the
 * tiered engine's reduction when no checkpoint can be written): the
 * prompt-cache guard off, and only the newest tool result and the results of
 * the latest assistant message kept whole — the step the agent acts on.
 * Anthropic's `clear_tool_uses_20250919` and Claude Code's microcompact
 * likewise count tool uses, not turns: a long tool loop's older results are
 * cleared like any others.
 *
 * @category constants
 */
export const lastResortToolTrim = {
  minReclaimTokens: 0,
  keepRecentToolResults: 1,
  keepLastAssistants: 1
} as const satisfies ToolTrim.Options

/**
 * A strategy that acts only while the request is over `fitTokens` (the
 * request's own target), and then aims at the run's target. For the turn in
 * progress (`SlidingWindow.turnSteps`): its steps go only when the request
 * cannot fit otherwise, and then, like the window's turns, down to the
 * low-water mark — aimed at the budget, a long tool loop compacted at every
 * other step (a prompt-cache rewrite each time).
 *
 * @category combinators
 */
export const whenOver = (strategy: Strategy.Strategy, fitTokens: number): Strategy.Strategy => ({
  ...strategy,
  apply: (input) =>
    input.measurement.inputTokens <= fitTokens
      ? { edits: [], tokensFreed: 0, note: `within the request's target (${fitTokens} tokens)` }
      : strategy.apply(input)
})

/**
 * Prefix of the last-resort rungs' stage names ({@link lastResort}): the
 * reports tell them from the ladder's own tool trims.
 *
 * @category constants
 */
export const LAST_RESORT_PREFIX = "lastResort:"

/**
 * A strategy that aims at `targetTokens` (never below the run's own target)
 * whatever the run aims at: the last cut of the newest output goes only as
 * far as the request needs.
 *
 * @category combinators
 */
export const aimingAt = (strategy: Strategy.Strategy, targetTokens: number): Strategy.Strategy => ({
  ...strategy,
  apply: (input) => strategy.apply({ ...input, targetTokens: Math.max(input.targetTokens, targetTokens) })
})

/**
 * The rungs after the sliding window, for when the turn in progress alone is
 * over the request's target — a tool loop whose newest results the ladder's
 * trims protect: soft trim, hard clear and input clear of everything but the
 * latest step ({@link lastResortToolTrim}), then the oldest steps of the turn
 * in progress (`SlidingWindow.turnSteps`: its ask and latest step stay), then
 * `Clamp.fit` of the largest editable messages (never a system message or the
 * latest user message).
 * Every rung but the turn's steps aims at `fitTokens`, the request's own
 * target, not the low-water mark: the protections the caller chose give way
 * only as far as the request needs; the turn's steps go only when the
 * request is over it, and then, like the window's turns, to the run's target
 * ({@link whenOver}), so the next compaction is as far off. Every
 * rung leaves a marker naming the transcript entry, or drops what the
 * transcript keeps, so nothing is lost. Stage names carry
 * {@link LAST_RESORT_PREFIX}.
 *
 * @category constructors
 */
export const lastResort = (fitTokens: number, options: Options = {}): Array<Strategy.Strategy> => {
  const toolTrim: ToolTrim.Options = { ...options.toolTrim, ...lastResortToolTrim }
  return [
    aimingAt(ToolTrim.soft(toolTrim), fitTokens),
    aimingAt(ToolTrim.clear(toolTrim), fitTokens),
    aimingAt(ToolInputClear.make(toolTrim), fitTokens),
    whenOver(SlidingWindow.turnSteps(), fitTokens),
    aimingAt(Clamp.fit(options.clamp), fitTokens)
  ].map((aimed): Strategy.Strategy => {
    const name = `${LAST_RESORT_PREFIX}${aimed.name}`
    // The edits say which rung made them (the view's and the transcript's edit entries name the stage).
    return {
      ...aimed,
      name,
      apply: (input) => {
        const result = aimed.apply(input)
        return { ...result, edits: result.edits.map((edit) => ({ ...edit, strategy: name })) }
      }
    }
  })
}
