/** Small builders of message parts and filler text in strategy tests (views, budgets and inputs: `@context-engine/core/testing`). */

import type { Message, ViewEdit } from "@context-engine/core"

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
