/**
 * Token budgets derived from a {@link ModelPolicy}.
 *
 * `available = contextWindow − reservedOutput − toolLoopReserve − safetyMargin − fixedOverhead`
 * (DESIGN.md "Budget and triggers"). The fixed overhead is what every request
 * carries regardless of history: system messages and tool schemas.
 *
 * @since 0.1.0
 */
import { Effect } from "effect"
import { FixedOverheadExceedsBudget } from "./Errors.ts"
import type { ModelPolicy } from "./ModelPolicy.ts"

/**
 * A computed budget. All values in tokens.
 *
 * @category models
 */
export interface Budget {
  readonly contextWindowTokens: number
  readonly reservedOutputTokens: number
  readonly toolLoopReserveTokens: number
  readonly safetyMarginTokens: number
  /** System messages + tool schemas. */
  readonly fixedOverheadTokens: number
  /** Largest request input: window − reserved output − tool-loop reserve − safety margin. */
  readonly inputBudgetTokens: number
  /** What is left for the conversation: input budget − fixed overhead. May be ≤ 0. */
  readonly availableTokens: number
}

/**
 * Computes the budget for a policy and a fixed overhead.
 *
 * @category constructors
 */
export const make = (
  policy: ModelPolicy,
  overhead: { readonly systemTokens: number; readonly toolSchemaTokens: number }
): Budget => {
  const reservedOutputTokens = policy.reserveTokens
  const inputBudgetTokens =
    policy.contextWindowTokens - reservedOutputTokens - policy.toolLoopReserveTokens - policy.safetyMarginTokens
  const fixedOverheadTokens = overhead.systemTokens + overhead.toolSchemaTokens
  return {
    contextWindowTokens: policy.contextWindowTokens,
    reservedOutputTokens,
    toolLoopReserveTokens: policy.toolLoopReserveTokens,
    safetyMarginTokens: policy.safetyMarginTokens,
    fixedOverheadTokens,
    inputBudgetTokens,
    availableTokens: inputBudgetTokens - fixedOverheadTokens
  }
}

/**
 * Fails with {@link FixedOverheadExceedsBudget} when the fixed overhead alone
 * leaves nothing for the conversation.
 *
 * @category validation
 */
export const checkFixedOverhead = (
  budget: Budget,
  overhead: { readonly systemTokens: number; readonly toolSchemaTokens: number }
): Effect.Effect<Budget, FixedOverheadExceedsBudget> =>
  budget.availableTokens > 0
    ? Effect.succeed(budget)
    : Effect.fail(
        new FixedOverheadExceedsBudget({
          fixedOverheadTokens: budget.fixedOverheadTokens,
          systemTokens: overhead.systemTokens,
          toolSchemaTokens: overhead.toolSchemaTokens,
          contextWindowTokens: budget.contextWindowTokens,
          reservedTokens: budget.reservedOutputTokens + budget.toolLoopReserveTokens + budget.safetyMarginTokens
        })
      )
