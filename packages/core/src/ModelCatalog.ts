/**
 * Built-in facts about current models: context window, output limit,
 * tokenizer, reasoning, prompt-cache lifetime and provider-native compaction.
 * Every number cites the provider page or model card it comes from (the
 * `source` field and the comment above each entry). Tuning values
 * (`reserveTokens`, `keepRecentTokens`, tool-loop reserve, safety margin) are
 * not facts about a model; `PolicyRegistry.ts` derives them.
 *
 * Where a page says "128K" without the exact number we take 128,000, the
 * smaller reading: under-stating a window costs an early compaction,
 * over-stating it costs a rejected request.
 *
 * @since 0.1.0
 */
import * as ModelCatalog2026 from "./ModelCatalog2026.ts"
import type { CatalogEntry } from "./ModelFamilies.ts"
import { anthropic, gemini, OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS, openai, openWeight } from "./ModelFamilies.ts"

export type { CatalogEntry, ModelFacts } from "./ModelFamilies.ts"

/**
 * The built-in catalog.
 *
 * @category constants
 */
export const entries: ReadonlyArray<CatalogEntry> = [
  ...ModelCatalog2026.entries,

  // ---- OpenAI (https://platform.openai.com/docs/models/<id>) ----
  // GPT-5 / 5-mini / 5-nano / 5-codex: "400,000 context window, 128,000 max output tokens".
  openai(["gpt-5", "gpt-5-mini", "gpt-5-nano", "gpt-5-codex"], 400_000, 128_000, true),
  // GPT-5 pro: "400,000 context window, 272,000 max output tokens".
  openai(["gpt-5-pro"], 400_000, 272_000, true),
  // GPT-5 chat (non-reasoning ChatGPT snapshot): 128,000 context, 16,384 output.
  openai(["gpt-5-chat-latest", "gpt-5-chat"], 128_000, 16_384, false),
  // GPT-5.1 and its codex variants: "400,000 context window, 128,000 max output tokens".
  openai(["gpt-5.1", "gpt-5.1-codex", "gpt-5.1-codex-mini"], 400_000, 128_000, true),
  // GPT-5.1 chat: 128,000 context, 16,384 output.
  openai(["gpt-5.1-chat-latest", "gpt-5.1-chat"], 128_000, 16_384, true),
  // GPT-4.1 / mini / nano: "1,047,576 context window, 32,768 max output tokens".
  openai(["gpt-4.1", "gpt-4.1-mini", "gpt-4.1-nano"], 1_047_576, 32_768, false),
  // GPT-4o and GPT-4o mini: "128,000 context window, 16,384 max output tokens".
  openai(["gpt-4o", "gpt-4o-mini", "chatgpt-4o-latest"], 128_000, 16_384, false),
  // The first GPT-4o snapshot had a 4,096-token output limit.
  openai(["gpt-4o-2024-05-13"], 128_000, 4_096, false),
  // o3 / o3-pro / o3-mini / o4-mini / o1: "200,000 context window, 100,000 max output tokens".
  openai(["o3", "o3-pro", "o3-mini", "o4-mini", "o1"], 200_000, 100_000, true),

  // ---- Anthropic (https://docs.claude.com/en/docs/about-claude/models/overview) ----
  // Claude Opus 4.5 (`claude-opus-4-5-20251101`): 200K context, 64K max output.
  anthropic(["claude-opus-4-5"], 200_000, 64_000, { reasoning: true, contextEditing: true }),
  // Claude Sonnet 4.5 (`claude-sonnet-4-5-20250929`): 200K context (1M in beta
  // behind `context-1m-2025-08-07`; set it in a policy file), 64K max output.
  anthropic(["claude-sonnet-4-5"], 200_000, 64_000, { reasoning: true, contextEditing: true }),
  // Claude Haiku 4.5 (`claude-haiku-4-5-20251001`): 200K context, 64K max output.
  anthropic(["claude-haiku-4-5"], 200_000, 64_000, { reasoning: true, contextEditing: true }),
  // Claude Opus 4.1 (`claude-opus-4-1-20250805`): 200K context, 32K max output.
  anthropic(["claude-opus-4-1"], 200_000, 32_000, { reasoning: true, contextEditing: true }),
  // Claude Opus 4 (`claude-opus-4-20250514`, alias `claude-opus-4-0`): 200K context, 32K max output.
  anthropic(["claude-opus-4", "claude-opus-4-20250514", "claude-opus-4-0"], 200_000, 32_000, {
    reasoning: true,
    contextEditing: true
  }),
  // Claude Sonnet 4 (`claude-sonnet-4-20250514`, alias `claude-sonnet-4-0`): 200K context, 64K max output.
  anthropic(["claude-sonnet-4", "claude-sonnet-4-20250514", "claude-sonnet-4-0"], 200_000, 64_000, {
    reasoning: true,
    contextEditing: true
  }),
  // Claude Sonnet 3.7 (`claude-3-7-sonnet-20250219`): 200K context, 64K max output
  // (128K with the `output-128k-2025-02-19` beta header).
  anthropic(["claude-3-7-sonnet"], 200_000, 64_000, { reasoning: true, contextEditing: false }),
  // Claude Sonnet 3.5 (`claude-3-5-sonnet-20240620`, `-20241022`): 200K context, 8,192 max output; no extended thinking.
  anthropic(["claude-3-5-sonnet", "claude-3-5-sonnet-20240620", "claude-3-5-sonnet-20241022"], 200_000, 8_192, {
    reasoning: false,
    contextEditing: false
  }),
  // Claude Haiku 3.5 (`claude-3-5-haiku-20241022`): 200K context, 8,192 max output.
  anthropic(["claude-3-5-haiku"], 200_000, 8_192, { reasoning: false, contextEditing: false }),
  // Claude Haiku 3 (`claude-3-haiku-20240307`): 200K context, 4,096 max output.
  anthropic(["claude-3-haiku"], 200_000, 4_096, { reasoning: false, contextEditing: false }),

  // ---- Google (https://ai.google.dev/gemini-api/docs/models/<id>) ----
  // Gemini 3.1 Pro preview: "Input token limit 1,048,576, Output token limit 65,536".
  gemini(["gemini-3.1-pro-preview"], 1_048_576, 65_536, true),
  // Gemini 3 Pro preview: "Input token limit 1,048,576, Output token limit 65,536".
  gemini(["gemini-3-pro-preview"], 1_048_576, 65_536, true),
  // Gemini 2.5 Pro: "Input token limit 1,048,576, Output token limit 65,536".
  gemini(["gemini-2.5-pro"], 1_048_576, 65_536, true),
  // Gemini 2.5 Flash and Flash-Lite: "Input token limit 1,048,576, Output token limit 65,536".
  gemini(["gemini-2.5-flash", "gemini-2.5-flash-lite"], 1_048_576, 65_536, true),
  // Gemini 2.0 Flash: "Input token limit 1,048,576, Output token limit 8,192"; no thinking.
  gemini(["gemini-2.0-flash", "gemini-2.0-flash-lite"], 1_048_576, 8_192, false),

  // ---- Open-weight models (model cards on huggingface.co; host limits may be lower) ----
  // Llama 3.1 / 3.2 / 3.3: "Context length 128k" (model cards); no output cap in the card.
  openWeight(
    ["llama-3.1", "llama3.1", "meta-llama-3.1"],
    128_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://huggingface.co/meta-llama/Llama-3.1-8B-Instruct"
  ),
  openWeight(
    ["llama-3.2", "llama3.2"],
    128_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://huggingface.co/meta-llama/Llama-3.2-3B-Instruct"
  ),
  openWeight(
    ["llama-3.3", "llama3.3"],
    128_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://huggingface.co/meta-llama/Llama-3.3-70B-Instruct"
  ),
  // Llama 3 (3.0): "Context length 8k"; output limit ours (a quarter of the window).
  openWeight(
    ["llama-3", "llama3", "meta-llama-3"],
    8_192,
    2_048,
    "https://huggingface.co/meta-llama/Meta-Llama-3-8B-Instruct"
  ),
  // Qwen2.5 (incl. Coder): "Context Length: Full 131,072 tokens and generation 8192 tokens".
  openWeight(["qwen2.5", "qwen-2.5"], 131_072, 8_192, "https://huggingface.co/Qwen/Qwen2.5-72B-Instruct"),
  // Qwen3: "Context Length: 32,768 natively and 131,072 tokens with YaRN"; the card
  // recommends "an output length of 32,768 tokens for most queries". We take the native window.
  openWeight(["qwen3", "qwen-3"], 32_768, 32_768, "https://huggingface.co/Qwen/Qwen3-32B"),
  // Qwen3-Coder: "262,144 natively"; the card's example uses max_new_tokens=65536.
  openWeight(["qwen3-coder"], 262_144, 65_536, "https://huggingface.co/Qwen/Qwen3-Coder-480B-A35B-Instruct"),
  // DeepSeek API: deepseek-chat "Context length 128K, max output 8K";
  // deepseek-reasoner "128K, max output 64K" (https://api-docs.deepseek.com/quick_start/pricing).
  openWeight(["deepseek-chat"], 128_000, 8_192, "https://api-docs.deepseek.com/quick_start/pricing"),
  openWeight(["deepseek-reasoner"], 128_000, 65_536, "https://api-docs.deepseek.com/quick_start/pricing"),
  // DeepSeek-V3 weights: "context length up to 128K"; output limit as the API's deepseek-chat.
  openWeight(["deepseek-v3"], 128_000, 8_192, "https://huggingface.co/deepseek-ai/DeepSeek-V3"),
  // DeepSeek-R1 weights: 128K context, "maximum generation length of 32,768 tokens".
  openWeight(["deepseek-r1"], 128_000, 32_768, "https://huggingface.co/deepseek-ai/DeepSeek-R1"),
  // Mistral API (https://docs.mistral.ai/getting-started/models/): Large, Medium, Small,
  // Ministral and Nemo are listed with a 128k context; Codestral with 256k. No output cap listed.
  openWeight(
    ["mistral-large", "mistral-medium", "mistral-small", "ministral", "mistral-nemo", "open-mistral-nemo"],
    128_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://docs.mistral.ai/getting-started/models/"
  ),
  openWeight(
    ["codestral"],
    256_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://docs.mistral.ai/getting-started/models/"
  ),
  // Mistral 7B Instruct v0.3 and Mixtral 8x7B: 32k context (model cards, `max_position_embeddings` 32768).
  openWeight(
    ["mistral-7b", "open-mistral-7b", "mixtral-8x7b", "open-mixtral-8x7b"],
    32_768,
    4_096,
    "https://huggingface.co/mistralai/Mistral-7B-Instruct-v0.3"
  )
]
