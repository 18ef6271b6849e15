/** Small builders for views, budgets and policies in strategy tests. */

import type { Measurer, Message, ModelPolicy, Strategy, ViewEdit } from "@context-engine/core"
import { Budget, ContextView, PolicyRegistry } from "@context-engine/core"
import { deepFreeze } from "./deepFreeze.ts"

export const policyFor = (
  contextWindow: number,
  maxOutputTokens = Math.min(4000, contextWindow / 4)
): ModelPolicy.ModelPolicy => PolicyRegistry.fromCasePolicySync({ contextWindow, maxOutputTokens })

export const budgetFor = (
  policy: ModelPolicy.ModelPolicy,
  measurer: Measurer.Measurer,
  view: ContextView.ContextView
) =>
  Budget.make(policy, {
    systemTokens: view.items
      .filter((item) => item.message.role === "system")
      .reduce((total, item) => total + measurer.messageTokens(item.message, item.source), 0),
    toolSchemaTokens: measurer.toolSchemaTokens(view.tools)
  })

export const frozenView = (messages: ReadonlyArray<Message.Message>): ContextView.ContextView =>
  deepFreeze(ContextView.fromMessages(messages))

/** A strategy input for calling a strategy directly. */
export const inputFor = (
  view: ContextView.ContextView,
  measurer: Measurer.Measurer,
  targetTokens: number,
  policy: ModelPolicy.ModelPolicy = policyFor(200_000)
): Strategy.StrategyInput => {
  const budget = budgetFor(policy, measurer, view)
  return { view, measurement: measurer.measure(view, { budget }), targetTokens, budget, measurer, policy }
}

export const call = (id: string, toolName: string, input: unknown): Message.ToolCallPart => ({
  type: "tool-call",
  toolCallId: id,
  toolName,
  input
})

export const result = (id: string, toolName: string, text: string): Message.ToolResultPart => ({
  type: "tool-result",
  toolCallId: id,
  toolName,
  output: { type: "text", value: text }
})

export const text = (value: string): Message.TextPart => ({ type: "text", text: value })

/** Deterministic filler text of `chars` characters (words with line breaks). */
export const filler = (chars: number, seed = 1): string => {
  const words = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "kappa", "lambda"]
  let out = ""
  let state = seed
  while (out.length < chars) {
    state = (state * 1103515245 + 12345) % 2147483648
    out += words[state % words.length]! + (state % 7 === 0 ? "\n" : " ")
  }
  return out.slice(0, chars)
}

/** The entry an edit names (`id` for an insert). */
export const targetOf = (edit: ViewEdit.ViewEdit): string => (edit.op === "insert" ? edit.id : edit.entryId)
