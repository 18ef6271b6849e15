/**
 * A small deterministic measurer for unit tests: 1 token per 4 characters
 * (rounded up) plus 3 tokens of framing per message, 85 tokens per image or
 * file. Categories follow the core measurer's split, so budgets and stage
 * reports behave as with a real tokenizer while the expected numbers stay
 * easy to compute by hand.
 *
 * @since 0.2.0
 */
import type * as Budget from "../Budget.ts"
import type * as ContextView from "../ContextView.ts"
import * as Measurement from "../Measurement.ts"
import type * as Measurer from "../Measurer.ts"
import type * as Message from "../Message.ts"
import type * as Tokenizer from "../Tokenizer.ts"

/**
 * The fake tokenizer: `ceil(characters / 4)` tokens.
 *
 * @category constructors
 */
export const tokenizer: Tokenizer.Tokenizer = {
  name: "fake:chars/4",
  method: "estimate",
  count: (text) => Math.ceil(text.length / 4)
}

const FRAMING = 3

const countMessage: Measurer.MessageCounter = (message: Message.Message, source) => {
  const counts: Partial<Record<Measurement.Category, number>> = {}
  const add = (category: Measurement.Category, tokens: number) => {
    counts[category] = (counts[category] ?? 0) + tokens
  }
  const textCategory: Measurement.Category =
    source === "checkpoint"
      ? "checkpoint"
      : source === "memory"
        ? "memory"
        : message.role === "system"
          ? "system"
          : message.role === "assistant"
            ? "assistantText"
            : message.role === "tool"
              ? "toolResults"
              : "userText"
  add("framing", FRAMING)
  if (typeof message.content === "string") {
    add(textCategory, tokenizer.count(message.content))
    return counts
  }
  for (const part of message.content as ReadonlyArray<Message.ContentPart>) {
    switch (part.type) {
      case "text":
        add(textCategory, tokenizer.count(part.text))
        break
      case "reasoning":
        add("reasoning", tokenizer.count(part.text) + tokenizer.count(JSON.stringify(part.providerOptions ?? {})))
        break
      case "tool-call":
        add("toolCalls", tokenizer.count(part.toolName) + tokenizer.count(JSON.stringify(part.input) ?? ""))
        break
      case "tool-result": {
        const output = part.output
        if (output.type === "content") {
          for (const item of output.value) {
            if (item.type === "text") add("toolResults", tokenizer.count(item.text))
            else add("media", 85)
          }
        } else add("toolResults", tokenizer.count(JSON.stringify(output)))
        break
      }
      case "image":
      case "file":
        add("media", 85)
        break
      default:
        add(textCategory, tokenizer.count(JSON.stringify(part)))
    }
  }
  return counts
}

const sum = (counts: Partial<Record<Measurement.Category, number>>): number =>
  Object.values(counts).reduce((total: number, value) => total + (value ?? 0), 0)

/**
 * The fake measurer. `onCount` is called on every message count (tests use
 * it to assert what a stage re-measures).
 *
 * @example
 * ```ts
 * import { ContextView } from "@context-engine/core"
 * import { FakeMeasurer } from "@context-engine/core/testing"
 * const measurer = FakeMeasurer.make()
 * measurer.measure(ContextView.fromMessages([{ role: "user", content: "12345678" }])).inputTokens // 3 + 2
 * ```
 *
 * @category constructors
 */
export const make = (options: { readonly onCount?: () => void } = {}): Measurer.Measurer => {
  const count: Measurer.MessageCounter = (message, source) => {
    options.onCount?.()
    return countMessage(message, source)
  }
  const toolSchemaTokens = (tools: ReadonlyArray<ContextView.ToolDefinition>) =>
    tools.reduce((total, tool) => total + tokenizer.count(JSON.stringify(tool)), 0)
  return {
    tokenizer,
    countMessage: count,
    messageTokens: (message, source) => sum(count(message, source)),
    toolSchemaTokens,
    measure: (view, measureOptions?: { readonly budget?: Budget.Budget }) => {
      const byCategory = {
        system: 0,
        toolSchemas: toolSchemaTokens(view.tools),
        userText: 0,
        assistantText: 0,
        reasoning: 0,
        toolCalls: 0,
        toolResults: 0,
        media: 0,
        checkpoint: 0,
        memory: 0,
        framing: 0,
        reservedOutput: measureOptions?.budget?.reservedOutputTokens ?? 0
      }
      for (const item of view.items) {
        const counts = count(item.message, item.source)
        for (const [key, value] of Object.entries(counts)) byCategory[key as Measurement.Category] += value ?? 0
      }
      return Measurement.fromCounts(byCategory, {
        budgetTokens: measureOptions?.budget?.inputBudgetTokens ?? Number.POSITIVE_INFINITY,
        method: "estimate",
        tokenizer: tokenizer.name
      })
    }
  }
}
