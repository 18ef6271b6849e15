/**
 * Per-model context policy: window, output reserve, keep-recent tail and the
 * tokenizer to count with. Built-in entries and lookup live in
 * `PolicyRegistry.ts`; budgets derived from a policy in `Budget.ts`.
 *
 * @since 0.1.0
 */
import { Schema } from "effect"

/**
 * How tokens are counted for a model family: an exact BPE encoding where the
 * family publishes one, otherwise a calibrated estimator.
 *
 * @category schemas
 */
export const TokenizerId = Schema.Literals([
  "o200k_base",
  "cl100k_base",
  "estimate:anthropic",
  "estimate:gemini",
  "estimate:generic"
])
/** @category models */
export type TokenizerId = typeof TokenizerId.Type

/**
 * Provider-native compaction features a model supports.
 *
 * @category schemas
 */
export const NativeCompaction = Schema.Struct({
  /** Anthropic context editing (`clear_tool_uses_20250919`, `clear_thinking_20251015`). */
  anthropicContextEditing: Schema.Boolean,
  /** Anthropic server-side compaction (`compact_20260112`). */
  anthropicCompaction: Schema.Boolean,
  /** OpenAI Responses API compaction. */
  openaiResponsesCompaction: Schema.Boolean
})
/** @category models */
export type NativeCompaction = typeof NativeCompaction.Type

/**
 * A model policy. All sizes are in tokens, durations in milliseconds.
 *
 * @category schemas
 */
export const ModelPolicy = Schema.Struct({
  /** Model id, e.g. `claude-sonnet-4-5` or `gpt-5.1`. */
  model: Schema.String,
  /** Total tokens the model accepts (input + output). */
  contextWindowTokens: Schema.Int,
  /** Largest output the model can produce in one response. */
  maxOutputTokens: Schema.Int,
  /** Tokens kept free for the next response (Pi's `reserveTokens`). */
  reserveTokens: Schema.Int,
  /** Recent tokens kept verbatim after a compaction (Pi's `keepRecentTokens`). */
  keepRecentTokens: Schema.Int,
  /** Room kept for tool results that arrive within one agent step. */
  toolLoopReserveTokens: Schema.Int,
  /** Margin for counting error (estimators, provider framing). */
  safetyMarginTokens: Schema.Int,
  /** Whether the model emits reasoning parts that must be sent back. */
  reasoning: Schema.Boolean,
  tokenizer: TokenizerId,
  /** Prompt-cache lifetime; 0 when the provider has no prompt cache. */
  promptCacheTtlMs: Schema.Int,
  nativeCompaction: NativeCompaction,
  /**
   * Whether the provider continues a trailing assistant message (prefill).
   * Absent means yes; `false` (Claude 4.6 and later, `RequestShape`) makes
   * `assembleContext` drop trailing assistant messages and report it.
   */
  assistantPrefill: Schema.optionalKey(Schema.Boolean)
})
/** @category models */
export type ModelPolicy = typeof ModelPolicy.Type
