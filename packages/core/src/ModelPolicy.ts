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
  assistantPrefill: Schema.optionalKey(Schema.Boolean),
  /**
   * The provider's cap on input tokens when it is below window − output
   * (GPT-5: 272,000 input tokens of a 400,000 window, OpenAI model page;
   * senpi #1422 found a catalog window overstating a 922K input cap). The
   * input budget is at most this less the safety margin (`Budget.make`).
   */
  maxInputTokens: Schema.optionalKey(Schema.Int),
  /**
   * Input size at which the provider (or the harness that owns the model)
   * compacts server-side (OpenClaw #121230: Codex compacted at about 205K
   * while OpenClaw planned from a 1.05M window). The engine's own compaction
   * (and anything before it, such as a memory flush) must happen below it:
   * the input budget is at most this less the safety margin.
   */
  serverCompactionAtTokens: Schema.optionalKey(Schema.Int),
  /**
   * Cap on the serialized request body in bytes (UTF-8 bytes of the JSON
   * request; base64 images count by their bytes, not their tokens), e.g. a
   * gateway's `client_max_body_size` (pi #9064: a gateway 413s every request;
   * local-operator PR 596: 42 screenshots made a 34.2 MB body at 154K
   * tokens). Checked separately from the token budget (`RequestBytes`).
   */
  maxRequestBodyBytes: Schema.optionalKey(Schema.Int)
})
/** @category models */
export type ModelPolicy = typeof ModelPolicy.Type
