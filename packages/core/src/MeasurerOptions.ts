/**
 * The options of `Measurer.make` and the constants behind their defaults
 * (per-tool framing, Anthropic's tool-use system prompt, the media family a
 * tokenizer implies).
 *
 * @since 0.3.0
 */
import type { MediaFamily } from "./MediaTokens.ts"
import type * as ReasoningTokens from "./ReasoningTokens.ts"
import type { Tokenizer } from "./Tokenizer.ts"

/**
 * Options of {@link make}. All token counts are in tokens.
 *
 * @category models
 */
export interface Options {
  /**
   * Whose image formula to use. Default: from the tokenizer name —
   * `o200k_base` / `cl100k_base` → `openai`, `estimate:anthropic` →
   * `anthropic`, `estimate:gemini` → `gemini`, otherwise `generic` (the
   * largest of the three).
   */
  readonly mediaFamily?: MediaFamily
  /** Per-message framing; default {@link MessageTokens.messageFramingTokens} (3, OpenAI cookbook). */
  readonly messageFramingTokens?: number
  /** Reply priming per request; default {@link MessageTokens.replyPrimingTokens} (3, OpenAI cookbook). */
  readonly replyPrimingTokens?: number
  /**
   * Tokens the provider adds to the system prompt when tools are present.
   * Default: 346 for `anthropic` (Anthropic "Tool use → Pricing": tool use
   * system prompt of 346 tokens for Claude 4.x / 3.7 with `tool_choice`
   * auto or none), 0 otherwise.
   */
  readonly toolUseSystemPromptTokens?: number
  /**
   * How prior-turn reasoning counts; default `ReasoningTokens.ruleFor(mediaFamily)`
   * (Anthropic and OpenAI: only the current tool loop's reasoning counts;
   * see `ReasoningTokens` for the sources). `measure` applies it by position;
   * `countMessage` / `messageTokens` count a message as if in the current loop.
   */
  readonly reasoningRule?: ReasoningTokens.Rule
  /** Cache per-message counts (default true). The cache never changes a result. */
  readonly cache?: boolean
  /** Content-hash cache capacity in entries (default 100,000); oldest entries are evicted first. */
  readonly maxCacheEntries?: number
}

/**
 * Per-tool framing: 7 tokens (`func_init` for gpt-4o in OpenAI's cookbook
 * "How to count tokens with tiktoken", function-calling section), plus 12 per
 * request with tools (`func_end`). The tool's text is the JSON of
 * `{ name, description, parameters }`.
 *
 * @category constants
 */
export const toolFramingTokens = { perTool: 7, perRequest: 12 } as const

/**
 * Anthropic's tool-use system prompt, in tokens (see {@link Options}).
 *
 * @category constants
 */
export const anthropicToolUseSystemPromptTokens = 346

/** The media family a tokenizer implies (see {@link Options.mediaFamily}). @category constructors */
export const defaultMediaFamily = (tokenizer: Tokenizer): MediaFamily => {
  if (tokenizer.name === "o200k_base" || tokenizer.name === "cl100k_base") return "openai"
  if (tokenizer.name === "estimate:anthropic") return "anthropic"
  if (tokenizer.name === "estimate:gemini") return "gemini"
  return "generic"
}
