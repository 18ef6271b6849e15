/**
 * Builders of a {@link Strategy.StrategyInput} for calling a strategy
 * directly in a test: a policy for a window, the budget of a view, a frozen
 * view (so any mutation throws) and the input itself.
 *
 * @since 0.2.0
 */
import * as Budget from "../Budget.ts"
import * as ContextView from "../ContextView.ts"
import type * as Measurer from "../Measurer.ts"
import type * as Message from "../Message.ts"
import type { ModelPolicy } from "../ModelPolicy.ts"
import type * as Strategy from "../Strategy.ts"
import * as Cases from "./Cases.ts"
import { deepFreeze } from "./DeepFreeze.ts"

/**
 * A policy for a model with a `contextWindow`-token window and
 * `maxOutputTokens` output tokens (default a quarter of the window, at most
 * 4,000); everything else derived as for any model.
 *
 * @category constructors
 */
export const policy = (contextWindow: number, maxOutputTokens = Math.min(4000, contextWindow / 4)): ModelPolicy =>
  Cases.policySync({ contextWindow, maxOutputTokens })

/**
 * The budget of `view` under `policy`: its system messages and tool schemas
 * are the fixed overhead.
 *
 * @category constructors
 */
export const budget = (policy: ModelPolicy, measurer: Measurer.Measurer, view: ContextView.ContextView) =>
  Budget.make(policy, {
    systemTokens: view.items
      .filter((item) => item.message.role === "system")
      .reduce((total, item) => total + measurer.messageTokens(item.message, item.source), 0),
    toolSchemaTokens: measurer.toolSchemaTokens(view.tools)
  })

/**
 * A deep-frozen view of `messages` (so a strategy that mutates its input throws).
 *
 * @category constructors
 */
export const frozenView = (messages: ReadonlyArray<Message.Message>): ContextView.ContextView =>
  deepFreeze(ContextView.fromMessages(messages))

/**
 * A strategy input: `view` measured by `measurer` against the budget of
 * `policy` (default: a 200,000-token window), asked to get under
 * `targetTokens`.
 *
 * @example
 * ```ts
 * import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
 * const measurer = FakeMeasurer.make()
 * const input = StrategyInput.make(StrategyInput.frozenView([{ role: "user", content: "hi" }]), measurer, 1_000)
 * ```
 *
 * @category constructors
 */
export const make = (
  view: ContextView.ContextView,
  measurer: Measurer.Measurer,
  targetTokens: number,
  modelPolicy: ModelPolicy = policy(200_000)
): Strategy.StrategyInput => {
  const inputBudget = budget(modelPolicy, measurer, view)
  return {
    view,
    measurement: measurer.measure(view, { budget: inputBudget }),
    targetTokens,
    budget: inputBudget,
    measurer,
    policy: modelPolicy
  }
}
