/**
 * The provider families of the model catalog: what one entry holds and one
 * constructor per family, so each family's shared facts (tokenizer,
 * prompt-cache lifetime, native compaction) are written once with their
 * source. The entries themselves live in `ModelCatalog.ts` (models up to
 * 2025) and `ModelCatalog2026.ts`.
 *
 * @since 0.1.0
 */
import type { NativeCompaction, TokenizerId } from "./ModelPolicy.ts"

/**
 * What the provider documents about one model. Sizes in tokens, durations in
 * milliseconds.
 *
 * @category models
 */
export interface ModelFacts {
  /** Total tokens the model accepts (input + output); for Gemini, the documented input token limit. */
  readonly contextWindowTokens: number
  /** Largest output of one response. */
  readonly maxOutputTokens: number
  /** Whether reasoning parts (signatures, encrypted items) must be sent back. */
  readonly reasoning: boolean
  readonly tokenizer: TokenizerId
  /** Prompt-cache lifetime; 0 when the provider documents no prompt cache. */
  readonly promptCacheTtlMs: number
  readonly nativeCompaction: NativeCompaction
}

/**
 * One catalog entry: the ids (exact ids or prefixes) it answers for, its
 * facts, and the page the numbers come from.
 *
 * @category models
 */
export interface CatalogEntry extends ModelFacts {
  /** Lower-case ids or id prefixes, e.g. `claude-sonnet-4-5`. The first is canonical. */
  readonly ids: ReadonlyArray<string>
  /** URL of the provider page or model card the numbers come from. */
  readonly source: string
}

/** No provider-native compaction. @category constants */
export const none: NativeCompaction = {
  anthropicContextEditing: false,
  anthropicCompaction: false,
  openaiResponsesCompaction: false
}

// OpenAI: "Cached prefixes generally remain active for 5 to 10 minutes of
// inactivity, up to a maximum of one hour during off-peak periods"
// (https://platform.openai.com/docs/guides/prompt-caching). We take the lower bound.
const OPENAI_PROMPT_CACHE_TTL_MS = 5 * 60 * 1000
// Anthropic: the cache has a 5-minute lifetime by default, refreshed each time it is read
// (`cache_control.ttl` "5m"; "1h" costs more)
// (https://docs.claude.com/en/docs/build-with-claude/prompt-caching).
const ANTHROPIC_PROMPT_CACHE_TTL_MS = 5 * 60 * 1000
// Gemini: "If not set, the TTL defaults to 1 hour" (explicit context caching,
// https://ai.google.dev/gemini-api/docs/caching).
const GEMINI_PROMPT_CACHE_TTL_MS = 60 * 60 * 1000

/** An OpenAI model: `o200k_base`, OpenAI prompt-cache lifetime. @category constructors */
export const openai = (
  ids: ReadonlyArray<string>,
  contextWindowTokens: number,
  maxOutputTokens: number,
  reasoning: boolean,
  source = `https://platform.openai.com/docs/models/${ids[0]}`
): CatalogEntry => ({
  ids,
  contextWindowTokens,
  maxOutputTokens,
  reasoning,
  tokenizer: "o200k_base",
  promptCacheTtlMs: OPENAI_PROMPT_CACHE_TTL_MS,
  // Responses-API compaction is not claimed for any model here; opt in per model in a policy file.
  nativeCompaction: none,
  source
})

/** A Claude model: calibrated Anthropic estimate, 5-minute prompt cache. @category constructors */
export const anthropic = (
  ids: ReadonlyArray<string>,
  contextWindowTokens: number,
  maxOutputTokens: number,
  options: { readonly reasoning: boolean; readonly contextEditing: boolean; readonly source?: string }
): CatalogEntry => ({
  ids,
  contextWindowTokens,
  maxOutputTokens,
  reasoning: options.reasoning,
  tokenizer: "estimate:anthropic",
  promptCacheTtlMs: ANTHROPIC_PROMPT_CACHE_TTL_MS,
  // Context editing (`clear_tool_uses_20250919`) is documented for the Claude 4 family
  // (https://docs.claude.com/en/docs/build-with-claude/context-editing). Server-side
  // compaction is not claimed here; opt in per model in a policy file.
  nativeCompaction: { ...none, anthropicContextEditing: options.contextEditing },
  source: options.source ?? "https://docs.claude.com/en/docs/about-claude/models/overview"
})

/** A Gemini model: calibrated Gemini estimate, 1-hour explicit cache. @category constructors */
export const gemini = (
  ids: ReadonlyArray<string>,
  contextWindowTokens: number,
  maxOutputTokens: number,
  reasoning: boolean,
  source = `https://ai.google.dev/gemini-api/docs/models/${ids[0]}`
): CatalogEntry => ({
  ids,
  contextWindowTokens,
  maxOutputTokens,
  reasoning,
  tokenizer: "estimate:gemini",
  promptCacheTtlMs: GEMINI_PROMPT_CACHE_TTL_MS,
  nativeCompaction: none,
  source
})

/**
 * An open-weight model or a provider without a published tokenizer or
 * prompt-cache lifetime (Llama, Qwen, Mistral, DeepSeek, xAI): generic estimate.
 *
 * @category constructors
 */
export const openWeight = (
  ids: ReadonlyArray<string>,
  contextWindowTokens: number,
  maxOutputTokens: number,
  source: string
): CatalogEntry => ({
  ids,
  contextWindowTokens,
  maxOutputTokens,
  // Open-weight chat templates drop earlier thinking from the history (Qwen3, DeepSeek-R1 cards).
  reasoning: false,
  tokenizer: "estimate:generic",
  // Served by many hosts; no provider-documented prompt cache to plan around.
  promptCacheTtlMs: 0,
  nativeCompaction: none,
  source
})

/**
 * Where an open-weight model card gives a context length but no output cap,
 * the output limit is ours: 8,192 tokens, a common serving default. Override
 * it per host in a policy file.
 *
 * @category constants
 */
export const OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS = 8_192
