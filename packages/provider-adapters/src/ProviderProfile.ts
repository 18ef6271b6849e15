/**
 * Provider profiles: what context management needs to know about a provider
 * API, as opposed to one model (per-model windows live in core's model
 * catalog / policy registry). A profile says which tokenizer family to count
 * with, the window and output defaults for models the catalog does not know,
 * how the provider's prompt cache behaves, which provider-native compaction it
 * offers, and how it words a context overflow ({@link OverflowClassifier}).
 *
 * Profiles are matched against the AI SDK `LanguageModelV4.provider` string
 * (`openai.chat`, `openai.responses`, `anthropic.messages`,
 * `google.generative-ai`, `<name>.chat` for `@ai-sdk/openai-compatible`).
 *
 * @since 0.1.0
 */
import type { ModelPolicy } from "@context-engine/core"
import * as OverflowClassifier from "./OverflowClassifier.ts"

/**
 * Profile ids.
 *
 * @category models
 */
export type ProfileId =
  | "openai-chat"
  | "openai-responses"
  | "anthropic"
  | "google"
  | "openrouter"
  | "vllm"
  | "ollama"
  | "llama.cpp"
  | "openai-compatible"

/**
 * How the provider's prompt cache works.
 *
 * - `automatic-prefix`: the provider caches the longest previously seen
 *   prefix by itself (OpenAI, Gemini implicit caching, vLLM APC, llama.cpp slots);
 * - `explicit-breakpoints`: only prefixes ending at a `cache_control`
 *   breakpoint are cached (Anthropic);
 * - `none`: no prompt cache we can rely on.
 *
 * @category models
 */
export interface PromptCacheBehaviour {
  readonly kind: "automatic-prefix" | "explicit-breakpoints" | "none"
  /** Shortest prefix that is cached, in tokens (0 when the provider documents none). */
  readonly minPrefixTokens: number
  /** Lifetime of a cached prefix without reuse, in milliseconds (0 when no cache). */
  readonly ttlMs: number
  /** Where the provider reports cache reads in usage. */
  readonly usageField: string
  /** The page that documents it. */
  readonly source: string
}

/**
 * Provider-native compaction the API offers, and where its options go.
 *
 * @category models
 */
export interface NativeCompactionSupport {
  /** `providerOptions` key the AI SDK provider reads (`anthropic`, `openai`). */
  readonly providerOptionsKey: string | undefined
  /** Context editing (`clear_tool_uses_20250919`, `clear_thinking_20251015`). */
  readonly contextEditing: boolean
  /** Server-side summarizing compaction (`compact_20260112`, OpenAI `context_management`). */
  readonly compaction: boolean
  readonly source: string | undefined
}

/**
 * A provider profile.
 *
 * @category models
 */
export interface ProviderProfile {
  readonly id: ProfileId
  /** Name reported in {@link Errors.ContextOverflow}'s `provider`. */
  readonly provider: string
  /** Whether this profile answers for an AI SDK provider string (`model.provider`). */
  readonly matches: (provider: string) => boolean
  /** Tokenizer family for a model id (exact BPE where published, estimator otherwise). */
  readonly tokenizer: (modelId: string) => ModelPolicy.TokenizerId
  /** Window and output used when the model catalog does not know the model, in tokens. */
  readonly fallbackLimits: { readonly contextWindowTokens: number; readonly maxOutputTokens: number }
  readonly promptCache: PromptCacheBehaviour
  readonly nativeCompaction: NativeCompactionSupport
  /** Classifies an error from this provider (see {@link OverflowClassifier.classify}). */
  readonly classifyOverflow: (error: unknown) => OverflowClassifier.OverflowDetails | undefined
}

const noNative: NativeCompactionSupport = {
  providerOptionsKey: undefined,
  contextEditing: false,
  compaction: false,
  source: undefined
}

/**
 * OpenAI tokenizers (tiktoken `model.py` / `gpt-tokenizer` model map): `o200k_base`
 * for gpt-4o, gpt-4.1, gpt-5 and the o-series; `cl100k_base` for gpt-4 / gpt-3.5.
 *
 * @category tokenizers
 */
export const openaiTokenizer = (modelId: string): ModelPolicy.TokenizerId =>
  /^(gpt-4(?!o|\.)|gpt-3\.5|text-embedding-(?:ada|3))/.test(modelId.replace(/^openai\//, ""))
    ? "cl100k_base"
    : "o200k_base"

/** The tokenizer for a model id with a family prefix or an OpenRouter `vendor/` prefix. */
const familyTokenizer = (modelId: string): ModelPolicy.TokenizerId => {
  const id = modelId.toLowerCase()
  if (/(^|\/)(gpt-|o\d|chatgpt)/.test(id)) return openaiTokenizer(id.replace(/^.*\//, ""))
  if (/(^|\/)claude/.test(id)) return "estimate:anthropic"
  if (/(^|\/)gemini|gemma/.test(id)) return "estimate:gemini"
  return "estimate:generic"
}

const classifierFor =
  (provider: string) =>
  (error: unknown): OverflowClassifier.OverflowDetails | undefined =>
    OverflowClassifier.classify(error, { provider })

const openaiCache: PromptCacheBehaviour = {
  kind: "automatic-prefix",
  minPrefixTokens: 1024,
  ttlMs: 5 * 60 * 1000,
  usageField: "usage.prompt_tokens_details.cached_tokens (Responses: usage.input_tokens_details.cached_tokens)",
  source: "https://platform.openai.com/docs/guides/prompt-caching"
}

const compatibleCache = (source: string, kind: PromptCacheBehaviour["kind"]): PromptCacheBehaviour => ({
  kind,
  minPrefixTokens: 0,
  // Server-side KV reuse lives as long as the server keeps the slot/blocks; no documented TTL.
  ttlMs: kind === "none" ? 0 : 5 * 60 * 1000,
  usageField: "usage.prompt_tokens_details.cached_tokens (when the server reports it)",
  source
})

/**
 * The built-in profiles, most specific first.
 *
 * @category constants
 */
export const profiles: ReadonlyArray<ProviderProfile> = [
  {
    id: "openai-responses",
    provider: "openai-responses",
    matches: (provider) => /^(openai|azure)[^.]*\.responses$/.test(provider),
    tokenizer: openaiTokenizer,
    fallbackLimits: { contextWindowTokens: 128_000, maxOutputTokens: 16_384 },
    promptCache: openaiCache,
    nativeCompaction: {
      providerOptionsKey: "openai",
      contextEditing: false,
      compaction: true,
      // @ai-sdk/openai: providerOptions.openai.contextManagement → body.context_management
      source: "https://platform.openai.com/docs/guides/conversation-state#compaction"
    },
    classifyOverflow: classifierFor("openai-responses")
  },
  {
    id: "openai-chat",
    provider: "openai",
    matches: (provider) => /^(openai|azure)[^.]*\.chat$/.test(provider) || provider === "openai",
    tokenizer: openaiTokenizer,
    fallbackLimits: { contextWindowTokens: 128_000, maxOutputTokens: 16_384 },
    promptCache: openaiCache,
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("openai")
  },
  {
    id: "anthropic",
    provider: "anthropic",
    matches: (provider) => provider.startsWith("anthropic") || provider.includes("bedrock-anthropic"),
    tokenizer: () => "estimate:anthropic",
    fallbackLimits: { contextWindowTokens: 200_000, maxOutputTokens: 8_192 },
    promptCache: {
      kind: "explicit-breakpoints",
      // 1024 tokens for Sonnet/Opus, 2048 for Haiku; we take the smaller.
      minPrefixTokens: 1024,
      ttlMs: 5 * 60 * 1000,
      usageField: "usage.cache_read_input_tokens / cache_creation_input_tokens",
      source: "https://docs.claude.com/en/docs/build-with-claude/prompt-caching"
    },
    nativeCompaction: {
      providerOptionsKey: "anthropic",
      contextEditing: true,
      compaction: true,
      // @ai-sdk/anthropic: providerOptions.anthropic.contextManagement → body.context_management,
      // betas context-management-2025-06-27 and compact-2026-01-12.
      source: "https://docs.claude.com/en/docs/build-with-claude/context-editing"
    },
    classifyOverflow: classifierFor("anthropic")
  },
  {
    id: "google",
    provider: "google",
    matches: (provider) => provider.startsWith("google") || provider.includes("vertex"),
    tokenizer: () => "estimate:gemini",
    fallbackLimits: { contextWindowTokens: 1_048_576, maxOutputTokens: 8_192 },
    promptCache: {
      kind: "automatic-prefix",
      // Implicit caching (Gemini 2.5+): 1024 tokens for Flash, 2048 for Pro.
      minPrefixTokens: 1024,
      ttlMs: 60 * 60 * 1000,
      usageField: "usageMetadata.cachedContentTokenCount",
      source: "https://ai.google.dev/gemini-api/docs/caching"
    },
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("google")
  },
  {
    id: "openrouter",
    provider: "openrouter",
    matches: (provider) => provider.startsWith("openrouter"),
    tokenizer: familyTokenizer,
    fallbackLimits: { contextWindowTokens: 32_768, maxOutputTokens: 4_096 },
    // OpenRouter forwards caching to the upstream provider (automatic for OpenAI/Gemini/DeepSeek,
    // cache_control breakpoints for Anthropic).
    promptCache: compatibleCache("https://openrouter.ai/docs/features/prompt-caching", "automatic-prefix"),
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("openrouter")
  },
  {
    id: "vllm",
    provider: "vllm",
    matches: (provider) => provider.startsWith("vllm"),
    tokenizer: familyTokenizer,
    // vLLM's window is the server's --max-model-len; set it in the policy.
    fallbackLimits: { contextWindowTokens: 32_768, maxOutputTokens: 4_096 },
    promptCache: compatibleCache(
      "https://docs.vllm.ai/en/latest/features/automatic_prefix_caching.html",
      "automatic-prefix"
    ),
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("vllm")
  },
  {
    id: "ollama",
    provider: "ollama",
    matches: (provider) => provider.startsWith("ollama"),
    tokenizer: familyTokenizer,
    // Ollama's default num_ctx is 4096 unless OLLAMA_CONTEXT_LENGTH / num_ctx raise it; the
    // OpenAI-compatible endpoint cannot set num_ctx per request.
    fallbackLimits: { contextWindowTokens: 4_096, maxOutputTokens: 2_048 },
    promptCache: compatibleCache("https://github.com/ollama/ollama/blob/main/docs/faq.md", "automatic-prefix"),
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("ollama")
  },
  {
    id: "llama.cpp",
    provider: "llama.cpp",
    matches: (provider) => /^llama[.-]?cpp|^llamacpp/.test(provider),
    tokenizer: familyTokenizer,
    // llama-server's window is its --ctx-size (per slot); set it in the policy.
    fallbackLimits: { contextWindowTokens: 4_096, maxOutputTokens: 2_048 },
    // `cache_prompt` (default true) reuses the slot's KV cache for a common prefix.
    promptCache: compatibleCache(
      "https://github.com/ggml-org/llama.cpp/blob/master/tools/server/README.md",
      "automatic-prefix"
    ),
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("llama.cpp")
  },
  {
    id: "openai-compatible",
    provider: "openai-compatible",
    matches: () => true,
    tokenizer: familyTokenizer,
    fallbackLimits: { contextWindowTokens: 8_192, maxOutputTokens: 2_048 },
    promptCache: compatibleCache("https://ai-sdk.dev/providers/openai-compatible-providers", "none"),
    nativeCompaction: noNative,
    classifyOverflow: classifierFor("openai-compatible")
  }
]

/**
 * The profile for an AI SDK provider string (`model.provider`); the generic
 * OpenAI-compatible profile when nothing more specific matches.
 *
 * @category lookup
 * @example
 * ```ts
 * ProviderProfile.forProvider("anthropic.messages").nativeCompaction.contextEditing // true
 * ```
 */
export const forProvider = (provider: string): ProviderProfile =>
  profiles.find((profile) => profile.matches(provider.toLowerCase())) ?? (profiles.at(-1) as ProviderProfile)

/**
 * The profile with the given id.
 *
 * @category lookup
 */
export const byId = (id: ProfileId): ProviderProfile => profiles.find((profile) => profile.id === id) as ProviderProfile

/**
 * A conservative model policy from a profile alone, for models no catalog
 * knows. Reserve = the output limit (capped at a quarter of the window),
 * keep-recent = a quarter of the window, tool-loop reserve = 5 %, safety
 * margin = 2 % (more for estimators) of the window. Callers with a policy
 * registry should prefer it.
 *
 * @category constructors
 */
export const fallbackPolicy = (
  profile: ProviderProfile,
  modelId: string,
  overrides: Partial<ModelPolicy.ModelPolicy> = {}
): ModelPolicy.ModelPolicy => {
  const contextWindowTokens = overrides.contextWindowTokens ?? profile.fallbackLimits.contextWindowTokens
  const maxOutputTokens = overrides.maxOutputTokens ?? profile.fallbackLimits.maxOutputTokens
  const tokenizer = overrides.tokenizer ?? profile.tokenizer(modelId)
  const exact = tokenizer === "o200k_base" || tokenizer === "cl100k_base"
  return {
    model: modelId,
    contextWindowTokens,
    maxOutputTokens,
    reserveTokens: Math.min(maxOutputTokens, Math.floor(contextWindowTokens / 4)),
    keepRecentTokens: Math.floor(contextWindowTokens / 4),
    toolLoopReserveTokens: Math.floor(contextWindowTokens * 0.05),
    safetyMarginTokens: Math.floor(contextWindowTokens * (exact ? 0.02 : 0.05)),
    reasoning: false,
    tokenizer,
    promptCacheTtlMs: profile.promptCache.ttlMs,
    nativeCompaction: { anthropicContextEditing: false, anthropicCompaction: false, openaiResponsesCompaction: false },
    ...overrides
  }
}
