/**
 * Provider items the model reads but we cannot: `custom` content parts
 * (AI SDK `LanguageModelV4` custom content, e.g. OpenAI Responses
 * compaction items with `encryptedContent`). Counted by a documented fixed
 * rule, never by the length of their opaque payload (shared case C14: a
 * 2 MiB encrypted compaction item counted as characters is over 500K
 * tokens and would trigger needless local compaction, Hermes #100611):
 *
 * - a provider compaction item (kind `openai.compaction`, or any kind ending
 *   in `.compaction`): {@link COMPACTION_ITEM_TOKENS}, in the `checkpoint`
 *   category (it stands for the compacted history, like our checkpoints).
 *   OpenAI documents no size ("carries forward key prior state … using fewer
 *   tokens", Compaction guide); the fixed figure is Codex's budget for the
 *   history kept after compaction (`COMPACT_USER_MESSAGE_MAX_TOKENS =
 *   20_000`, openai/codex `codex-rs/core/src/compact.rs`). Once the provider
 *   reports usage for a request that carried the item, measurement anchors
 *   on it (`Measurer.Anchor`) and this estimate no longer counts.
 * - any other custom part: its kind and the string leaves of its provider
 *   options through the tokenizer, except fields that are ids or opaque by
 *   name (`itemId`, `id`, `signature`, `encrypted*`), which count 0 — the
 *   rule `ReasoningTokens` applies to unknown provider options.
 *
 * @since 0.3.0
 */
/**
 * Tokens of one provider compaction item (see the module doc for the source).
 *
 * @category constants
 */
export const COMPACTION_ITEM_TOKENS = 20_000

/** A custom content part or tool-result item (`kind` is absent on the latter). */
type CustomPart = { readonly type: "custom"; readonly kind?: unknown; readonly providerOptions?: unknown }

/**
 * Whether a custom part is a provider compaction item.
 *
 * @category guards
 */
export const isCompactionItem = (part: { readonly type: string; readonly kind?: unknown }): boolean =>
  part.type === "custom" && typeof part.kind === "string" && /(^|\.)compaction$/.test(part.kind)

const OPAQUE_FIELD = /^(?:id|itemId|signature|encrypted.*)$/

const countLeaves = (value: unknown, count: (text: string) => number, depth: number): number => {
  if (depth > 8 || value === null || value === undefined) return 0
  if (typeof value === "string") return count(value)
  let tokens = 0
  if (Array.isArray(value)) for (const item of value) tokens += countLeaves(item, count, depth + 1)
  else if (typeof value === "object")
    for (const [key, item] of Object.entries(value))
      if (!OPAQUE_FIELD.test(key)) tokens += countLeaves(item, count, depth + 1)
  return tokens
}

/**
 * Tokens of a custom part by the rules of the module doc.
 *
 * @category counting
 */
export const customTokens = (part: CustomPart, count: (text: string) => number): number =>
  isCompactionItem(part)
    ? COMPACTION_ITEM_TOKENS
    : (typeof part.kind === "string" ? count(part.kind) : 0) + countLeaves(part.providerOptions, count, 0)
