/**
 * What a provider counts of reasoning (thinking) parts sent back in a
 * request: prior-turn reasoning, signatures, redacted and encrypted
 * reasoning. Measure what the provider counts (DESIGN.md, "Reasoning, opaque
 * content and the effective window"), never opaque fields as text.
 *
 * Rules, per provider family (`MediaTokens.MediaFamily` of the measurer):
 *
 * - **Anthropic** (`current-tool-loop`): "previous thinking blocks are
 *   automatically stripped from the context window calculation by the
 *   Anthropic API", `context_window = (input_tokens − previous_thinking_tokens)
 *   + current_turn_tokens`; thinking blocks returned with tool results in the
 *   current tool-use loop count (Anthropic docs, "Context windows → The
 *   context window with extended thinking and tool use",
 *   https://docs.anthropic.com/en/docs/build-with-claude/context-windows).
 *   The current tool loop is everything after the last user message (tool
 *   results are `tool` messages in the AI SDK shape).
 * - **OpenAI** (`current-tool-loop`): the model "discards the reasoning tokens
 *   from its context" after answering; older reasoning items may be dropped
 *   "unless you're responding to a function call, in which case you must
 *   include all reasoning items between the function call and the last user
 *   message" (OpenAI docs, "Reasoning models → How reasoning works / Managing
 *   the context window", https://platform.openai.com/docs/guides/reasoning).
 * - **Gemini and unknown providers** (`all-turns`): no documented stripping
 *   rule we can rely on; reasoning text is counted as sent (conservative).
 *
 * Opaque fields, every family: an Anthropic `signature` and an OpenAI
 * `itemId` are verification / reference data, not text the model reads: 0
 * tokens. Redacted thinking (`anthropic.redactedData`) and encrypted reasoning
 * (`openai.reasoningEncryptedContent`) stand for thinking the provider counts
 * while the block is in the current tool loop; its size is unknown locally,
 * so it is counted through the tokenizer there (an upper bound; the
 * provider's reported usage replaces it once recorded, `Measurer.Anchor`) and
 * as 0 where the rule strips prior reasoning. Fields of other providers'
 * options are counted as sent (every string leaf).
 *
 * @since 0.1.0
 */
import type { MediaFamily } from "./MediaTokens.ts"
import type { ContentPart, Message } from "./Message.ts"

/**
 * How prior-turn reasoning counts.
 *
 * @category models
 */
export type Rule = "current-tool-loop" | "all-turns"

/**
 * Whether a reasoning part is in the current tool loop (counted) or in an
 * earlier turn (stripped under `current-tool-loop`).
 *
 * @category models
 */
export type Position = "current" | "prior"

/**
 * The rule of a provider family (see the module doc for the sources).
 *
 * @category constructors
 */
export const ruleFor = (family: MediaFamily): Rule =>
  family === "anthropic" || family === "openai" ? "current-tool-loop" : "all-turns"

/** Opaque provider-option fields that are never model-visible text. */
const NOT_COUNTED: Readonly<Record<string, ReadonlySet<string>>> = {
  anthropic: new Set(["signature"]),
  openai: new Set(["itemId"])
}

/** Opaque fields that stand for reasoning the provider counts in the current tool loop. */
const ENCRYPTED: Readonly<Record<string, ReadonlySet<string>>> = {
  anthropic: new Set(["redactedData"]),
  openai: new Set(["reasoningEncryptedContent"])
}

const stringLeaves = (value: unknown, out: Array<string>, depth = 0): void => {
  if (depth > 8 || value === null || value === undefined) return
  if (typeof value === "string") out.push(value)
  else if (Array.isArray(value)) for (const item of value) stringLeaves(item, out, depth + 1)
  else if (typeof value === "object") for (const item of Object.values(value)) stringLeaves(item, out, depth + 1)
}

/**
 * Tokens of one reasoning part: 0 when `rule` strips it at `position`;
 * otherwise its text plus the counted fields of its provider options (see
 * the module doc).
 *
 * @category counting
 */
export const partTokens = (
  part: Extract<ContentPart, { type: "reasoning" }>,
  rule: Rule,
  position: Position,
  count: (text: string) => number
): number => {
  if (rule === "current-tool-loop" && position === "prior") return 0
  let tokens = count(part.text)
  const options = (part.providerOptions ?? {}) as Record<string, unknown>
  for (const provider of Object.keys(options)) {
    const fields = options[provider]
    if (typeof fields !== "object" || fields === null) continue
    for (const [key, value] of Object.entries(fields as Record<string, unknown>)) {
      if (NOT_COUNTED[provider]?.has(key)) continue
      if (ENCRYPTED[provider]?.has(key) && typeof value === "string") {
        tokens += count(value)
        continue
      }
      const leaves: Array<string> = []
      stringLeaves(value, leaves)
      for (const leaf of leaves) tokens += count(leaf)
    }
  }
  return tokens
}

/**
 * Index of the first item of the current tool loop: the last item whose
 * message is a `user` message (0 when there is none). Items before it are
 * prior turns.
 *
 * @category getters
 */
export const currentLoopStart = <A>(items: ReadonlyArray<A>, messageOf: (item: A) => Message): number => {
  for (let index = items.length - 1; index >= 0; index--) if (messageOf(items[index]!).role === "user") return index
  return 0
}

/**
 * Whether a message has reasoning parts (only those messages count
 * differently by position).
 *
 * @category guards
 */
export const hasReasoning = (message: Message): boolean =>
  message.role === "assistant" &&
  typeof message.content !== "string" &&
  message.content.some((part) => part.type === "reasoning")
