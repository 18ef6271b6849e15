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
import { BudgetExceeded, FixedOverheadExceedsBudget } from "./Errors.ts"
import type { ModelPolicy } from "./ModelPolicy.ts"

/**
 * Which token limit of the route bounds the input budget: the window
 * (`contextWindowTokens − reserves − margin`), the provider's input cap
 * (`maxInputTokens − margin`) or its server-side compaction point
 * (`serverCompactionAtTokens − margin`). DESIGN.md: "the effective window of
 * a route is the smallest of" these (and a byte cap, checked apart).
 *
 * @category models
 */
export type BindingLimit = "context-window" | "max-input-tokens" | "server-compaction"

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
  /**
   * Largest request input: the smallest of window − reserved output −
   * tool-loop reserve − safety margin, `maxInputTokens` − safety margin and
   * `serverCompactionAtTokens` − safety margin.
   */
  readonly inputBudgetTokens: number
  /** The limit that gave `inputBudgetTokens` (the first of equal ones in the order above). */
  readonly bindingLimit: BindingLimit
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
  let inputBudgetTokens =
    policy.contextWindowTokens - reservedOutputTokens - policy.toolLoopReserveTokens - policy.safetyMarginTokens
  let bindingLimit: BindingLimit = "context-window"
  if (policy.maxInputTokens !== undefined && policy.maxInputTokens - policy.safetyMarginTokens < inputBudgetTokens) {
    inputBudgetTokens = policy.maxInputTokens - policy.safetyMarginTokens
    bindingLimit = "max-input-tokens"
  }
  const serverCompaction = policy.serverCompactionAtTokens
  if (serverCompaction !== undefined && serverCompaction - policy.safetyMarginTokens < inputBudgetTokens) {
    inputBudgetTokens = serverCompaction - policy.safetyMarginTokens
    bindingLimit = "server-compaction"
  }
  const fixedOverheadTokens = overhead.systemTokens + overhead.toolSchemaTokens
  return {
    contextWindowTokens: policy.contextWindowTokens,
    reservedOutputTokens,
    toolLoopReserveTokens: policy.toolLoopReserveTokens,
    safetyMarginTokens: policy.safetyMarginTokens,
    fixedOverheadTokens,
    inputBudgetTokens,
    bindingLimit,
    availableTokens: inputBudgetTokens - fixedOverheadTokens
  }
}

/**
 * How `inputBudgetTokens` was reached, in words and numbers (en-US digit
 * grouping), for reports: `window 128,000 − output reserve 16,384 −
 * tool-loop reserve 6,400 − safety margin 2,560`, or for the other binding
 * limits `max input tokens 272,000 − safety margin 2,560` /
 * `server compaction at 150,000 − safety margin 2,560` (the limit's value is
 * the budget plus the margin). The terms are those of {@link make}.
 *
 * @category getters
 */
export const formula = (
  budget: Pick<
    Budget,
    | "contextWindowTokens"
    | "reservedOutputTokens"
    | "toolLoopReserveTokens"
    | "safetyMarginTokens"
    | "inputBudgetTokens"
    | "bindingLimit"
  >
): string => {
  const n = (tokens: number) => tokens.toLocaleString("en-US")
  const margin = `safety margin ${n(budget.safetyMarginTokens)}`
  const limit = n(budget.inputBudgetTokens + budget.safetyMarginTokens)
  switch (budget.bindingLimit) {
    case "max-input-tokens":
      return `max input tokens ${limit} − ${margin}`
    case "server-compaction":
      return `server compaction at ${limit} − ${margin}`
    case "context-window":
      return `window ${n(budget.contextWindowTokens)} − output reserve ${n(budget.reservedOutputTokens)} − tool-loop reserve ${n(budget.toolLoopReserveTokens)} − ${margin}`
  }
}

/**
 * The {@link FixedOverheadExceedsBudget} error when the fixed overhead alone
 * leaves nothing for the conversation (`availableTokens ≤ 0`), else
 * `undefined`. `overhead` splits `fixedOverheadTokens` into system messages
 * and tool schemas for the message; without `systemTokens` (e.g. from a
 * decision's `measurement.byCategory.toolSchemas`) the system messages are
 * the rest, `fixedOverheadTokens − toolSchemaTokens`. One home for the check:
 * the engines' compaction, the controller's skipped event and the CLI use it.
 *
 * @category validation
 */
export const fixedOverheadError = (
  budget: Budget,
  overhead: { readonly systemTokens?: number; readonly toolSchemaTokens: number }
): FixedOverheadExceedsBudget | undefined =>
  budget.availableTokens > 0
    ? undefined
    : new FixedOverheadExceedsBudget({
        fixedOverheadTokens: budget.fixedOverheadTokens,
        systemTokens: overhead.systemTokens ?? budget.fixedOverheadTokens - overhead.toolSchemaTokens,
        toolSchemaTokens: overhead.toolSchemaTokens,
        contextWindowTokens: budget.contextWindowTokens,
        reservedTokens: budget.reservedOutputTokens + budget.toolLoopReserveTokens + budget.safetyMarginTokens,
        reservedOutputTokens: budget.reservedOutputTokens,
        inputBudgetTokens: budget.inputBudgetTokens
      })

/**
 * Fails with {@link FixedOverheadExceedsBudget} when the fixed overhead alone
 * leaves nothing for the conversation ({@link fixedOverheadError}).
 *
 * @category validation
 */
export const checkFixedOverhead = (
  budget: Budget,
  overhead: { readonly systemTokens: number; readonly toolSchemaTokens: number }
): Effect.Effect<Budget, FixedOverheadExceedsBudget> => {
  const error = fixedOverheadError(budget, overhead)
  return error === undefined ? Effect.succeed(budget) : Effect.fail(error)
}

/**
 * Fails with {@link BudgetExceeded} when the conversation that must be sent
 * (e.g. the latest user message, which is never dropped) does not fit what
 * the fixed overhead leaves: `conversationTokens > availableTokens`. The
 * error carries the whole request (`fixedOverheadTokens + conversationTokens`)
 * against `inputBudgetTokens`, so its excess equals the conversation's excess.
 * Shared case C09 (a budget smaller than the only message) ends here when
 * the engine may not clamp user input. `bestEffort`: the engine's reduction,
 * carried by the error (`BudgetExceeded.bestEffort`) when it made the request
 * smaller.
 *
 * @category validation
 */
export const checkConversation = (
  budget: Budget,
  conversationTokens: number,
  reason = "the minimum context (system prompt, tool schemas and the messages that must be kept verbatim) does not fit",
  bestEffort?: unknown
): Effect.Effect<Budget, BudgetExceeded> =>
  conversationTokens <= budget.availableTokens
    ? Effect.succeed(budget)
    : Effect.fail(
        new BudgetExceeded({
          requestTokens: budget.fixedOverheadTokens + conversationTokens,
          budgetTokens: budget.inputBudgetTokens,
          reason,
          ...(bestEffort !== undefined ? { bestEffort } : {})
        })
      )
