/**
 * Token measurement results: a per-category breakdown of one request plus
 * the budget it is measured against (DESIGN.md "Measure").
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * Categories a request's tokens are split into. Content categories count the
 * text of messages by role or source; `framing` counts what the chat format
 * adds around them: the per-message wrapper of every message and the reply
 * priming once per request (`MessageTokens.messageFramingTokens`,
 * `MessageTokens.replyPrimingTokens`). The wrapper of tool definitions is
 * counted in `toolSchemas` (it exists only with tools; see
 * `Measurer.toolFramingTokens`).
 *
 * @category schemas
 */
export const Category = Schema.Literals([
  "system",
  "toolSchemas",
  "userText",
  "assistantText",
  "reasoning",
  "toolCalls",
  "toolResults",
  "media",
  "checkpoint",
  "memory",
  "framing",
  "reservedOutput"
])
/** @category models */
export type Category = typeof Category.Type

/** @category constants */
export const categories: ReadonlyArray<Category> = Category.literals

/**
 * Token counts per category.
 *
 * @category schemas
 */
export const CategoryCounts = Schema.Struct({
  system: Schema.Number,
  toolSchemas: Schema.Number,
  userText: Schema.Number,
  assistantText: Schema.Number,
  reasoning: Schema.Number,
  toolCalls: Schema.Number,
  toolResults: Schema.Number,
  media: Schema.Number,
  checkpoint: Schema.Number,
  memory: Schema.Number,
  framing: Schema.Number,
  reservedOutput: Schema.Number
})
/** @category models */
export type CategoryCounts = typeof CategoryCounts.Type

/** @category constructors */
export const zeroCounts = (): { -readonly [K in Category]: number } => ({
  system: 0,
  toolSchemas: 0,
  userText: 0,
  assistantText: 0,
  reasoning: 0,
  toolCalls: 0,
  toolResults: 0,
  media: 0,
  checkpoint: 0,
  memory: 0,
  framing: 0,
  reservedOutput: 0
})

/**
 * How the total was obtained.
 *
 * - `exact`: an exact tokenizer for the model family;
 * - `estimate`: a calibrated estimator;
 * - `anchored`: provider-reported input tokens of the last response plus a
 *   count of what was appended since.
 *
 * @category schemas
 */
export const Method = Schema.Literals(["exact", "estimate", "anchored"])
/** @category models */
export type Method = typeof Method.Type

/**
 * A measurement of one request.
 *
 * @category schemas
 */
export const Measurement = Schema.Struct({
  byCategory: CategoryCounts,
  /** Tokens of the request input: every category except `reservedOutput`. */
  inputTokens: Schema.Number,
  /** Input + reserved output: what must fit in the context window. */
  totalTokens: Schema.Number,
  /** The largest input allowed (see `Budget.inputBudgetTokens`); `Infinity` when unknown. */
  budgetTokens: Schema.Number,
  /** `budgetTokens − inputTokens`; negative when over budget. */
  headroomTokens: Schema.Number,
  method: Method,
  /** Tokenizer name, e.g. `o200k_base`. */
  tokenizer: Schema.String,
  /**
   * What in the count is an estimate beyond the method, in words: images
   * without readable pixel dimensions (counted at a conservative default),
   * estimated files, an anchor that was ignored. Absent when nothing applies.
   */
  notes: Schema.optionalKey(Schema.Array(Schema.String))
})
/** @category models */
export type Measurement = typeof Measurement.Type

/**
 * A measurement from its per-category counts — the one home of the
 * arithmetic the fields above define: `inputTokens` is the sum of every
 * category except `reservedOutput`, `totalTokens = inputTokens +
 * byCategory.reservedOutput`, `headroomTokens = budgetTokens − inputTokens`.
 * `of` gives the rest (a whole previous measurement will do: its counts are
 * replaced, its budget, method, tokenizer and notes kept). `byCategory` is
 * taken as is, not copied. Counts are whole tokens, so the sums are exact in
 * any order.
 *
 * @category constructors
 */
export const fromCounts = (
  byCategory: CategoryCounts,
  of: {
    readonly budgetTokens: number
    readonly method: Method
    readonly tokenizer: string
    readonly notes?: ReadonlyArray<string> | undefined
  }
): Measurement => {
  let inputTokens = 0
  for (const category of categories) if (category !== "reservedOutput") inputTokens += byCategory[category]
  return {
    byCategory,
    inputTokens,
    totalTokens: inputTokens + byCategory.reservedOutput,
    budgetTokens: of.budgetTokens,
    headroomTokens: of.budgetTokens - inputTokens,
    method: of.method,
    tokenizer: of.tokenizer,
    ...(of.notes !== undefined ? { notes: of.notes } : {})
  }
}

/**
 * The words for each category, in error messages ({@link breakdown}) and in
 * every CLI view (`inspect`, `compact`, `replay`, the HTML report): one
 * table, so every place names a category the same way. `framing` is what the
 * chat format adds around the messages (per-message wrapper and the reply
 * priming), not anyone's text; `reasoning` counts what the provider bills
 * (signatures and item ids are verification data the model does not read:
 * 0 tokens, `ReasoningTokens`).
 *
 * @category constants
 */
export const categoryLabels: Readonly<Record<Category, string>> = {
  system: "system",
  toolSchemas: "tool schemas",
  userText: "user text",
  assistantText: "assistant text",
  reasoning: "reasoning",
  toolCalls: "tool calls",
  toolResults: "tool results",
  media: "media",
  checkpoint: "checkpoint",
  memory: "memory",
  framing: "message framing",
  reservedOutput: "reserved output"
}

/**
 * The input categories that hold tokens, largest first, as text for an error
 * message: `"tool results 24,700, message framing 80, user text 25"`. What
 * needs the room, not only the total.
 *
 * @category getters
 */
export const breakdown = (measurement: Pick<Measurement, "byCategory">): string =>
  categories
    .filter((category) => category !== "reservedOutput" && measurement.byCategory[category] > 0)
    .sort((a, b) => measurement.byCategory[b] - measurement.byCategory[a])
    .map((category) => `${categoryLabels[category]} ${measurement.byCategory[category].toLocaleString("en-US")}`)
    .join(", ")
