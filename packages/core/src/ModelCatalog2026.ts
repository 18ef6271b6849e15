/**
 * Models released or current in 2026, as the providers' pages stated them in
 * December 2026. Each entry names the page its numbers come from; where two
 * pages disagree the comment says so and the smaller number is taken (an
 * under-stated window costs an early compaction, an over-stated one a
 * rejected request). Older models are in `ModelCatalog.ts`, which lists these
 * first. AI Gateway ids (`anthropic/claude-opus-4.6`) and provider prefixes
 * resolve through `ModelId.candidateIds`.
 *
 * @since 0.2.0
 */

import type { CatalogEntry } from "./ModelFamilies.ts"
import { anthropic, gemini, OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS, openai, openWeight } from "./ModelFamilies.ts"

const claudePage = (slug: string): string => `https://platform.claude.com/docs/en/models/${slug}/overview`

/**
 * A current Claude model: every one below is documented with a 1M-token
 * window, 128K max output and adaptive thinking (reasoning blocks sent back),
 * and context editing as for the Claude 4 family. Claude 4.7 and later count
 * with a newer tokenizer ("the same text counts as roughly 30% more tokens
 * than on Claude Haiku 4.5", Haiku 5.5 overview); our Anthropic estimate is
 * calibrated on the older one, so keep the safety margin or anchor on usage.
 */
const claude1m = (ids: ReadonlyArray<string>, slug: string): CatalogEntry =>
  anthropic(ids, 1_000_000, 128_000, { reasoning: true, contextEditing: true, source: claudePage(slug) })

const XAI_MODELS = "https://docs.x.ai/docs/models"
const MISTRAL_MODELS = "https://docs.mistral.ai/getting-started/models/"

/**
 * The 2026 entries.
 *
 * @category constants
 */
export const entries: ReadonlyArray<CatalogEntry> = [
  // ---- Anthropic (platform.claude.com model overviews, "Context window: 1M tokens · Max output: 128K tokens") ----
  claude1m(["claude-fable-5-1"], "fable-5-1"),
  claude1m(["claude-opus-5-5"], "opus-5-5"),
  claude1m(["claude-sonnet-5-5"], "sonnet-5-5"),
  claude1m(["claude-haiku-5-5"], "haiku-5-5"),
  claude1m(["claude-opus-5"], "opus-5"),
  claude1m(["claude-sonnet-5"], "sonnet-5"),
  claude1m(["claude-opus-4-8"], "opus-4-8"),
  // Opus 4.7: "Maximum input tokens: 1,000,000; Maximum output tokens: 128,000" (Vertex model card, Apr 2026).
  claude1m(["claude-opus-4-7"], "opus-4-7"),
  claude1m(["claude-opus-4-6"], "opus-4-6"),
  claude1m(["claude-sonnet-4-6"], "sonnet-4-6"),

  // ---- OpenAI (https://platform.openai.com/docs/models/<id>) ----
  // GPT-5.5 / 5.5 pro (April 2026): "1,050,000-token context window", 128,000 max output.
  // AI Gateway lists 1,000,000 and 272,000; we take the smaller of each.
  openai(["gpt-5.5", "gpt-5.5-pro"], 1_000_000, 128_000, true),
  // GPT-5.4: the 1,050,000-token window GPT-5.5 "carries forward"; output as GPT-5.5.
  openai(["gpt-5.4", "gpt-5.4-pro", "gpt-5.4-mini"], 1_000_000, 128_000, true),

  // ---- Google (Gemini API / Vertex model pages) ----
  // Gemini 3 Flash (`gemini-3-flash-preview`; AI Gateway `google/gemini-3-flash`):
  // "Context window 1,048,576, Maximum output tokens 65,536".
  gemini(["gemini-3-flash-preview", "gemini-3-flash"], 1_048_576, 65_536, true),
  // Gemini 3.8 Flash (AI Gateway page citing the DeepMind model card): window 1,000,000,
  // output 65,535 on one page and 65,536 on another; the smaller is taken.
  gemini(["gemini-3.8-flash"], 1_000_000, 65_535, true, "https://deepmind.google/models/model-cards/gemini-3-8-flash/"),

  // ---- xAI (https://docs.x.ai/docs/models; OpenAI-compatible, no published tokenizer) ----
  // Grok 4.3 and the Grok 4.20 series: 1M window; Grok 4.3 max_completion_tokens 131,072.
  openWeight(["grok-4.3"], 1_000_000, 131_072, XAI_MODELS),
  openWeight(["grok-4.20", "grok-4.20-reasoning", "grok-4.20-non-reasoning"], 1_000_000, 131_072, XAI_MODELS),
  // Grok 4.5 / 4.6 / 4.7: "500K token context window"; no output cap published.
  openWeight(["grok-4.5", "grok-4.6", "grok-4.7"], 500_000, OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS, XAI_MODELS),
  // Grok 4 (`grok-4-0709`): "a context window of 256K tokens".
  openWeight(["grok-4", "grok-4-0709"], 256_000, OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS, XAI_MODELS),

  // ---- Mistral ----
  // Mistral Large 3 (`mistral-large-latest` since Dec 2025): 256,000 context, 8,192 output (Bedrock model card).
  openWeight(["mistral-large-3", "mistral-large-latest", "mistral-large-2512"], 256_000, 8_192, MISTRAL_MODELS),
  // Magistral Small / Medium (reasoning): 128,000 context.
  openWeight(["magistral-small", "magistral-medium"], 128_000, OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS, MISTRAL_MODELS),

  // ---- DeepSeek (https://api-docs.deepseek.com/quick_start/pricing) ----
  // DeepSeek-V3.2 weights behind `deepseek-chat` / `deepseek-reasoner`: 128K context (entries in ModelCatalog.ts).
  openWeight(["deepseek-v3.2"], 128_000, 8_192, "https://api-docs.deepseek.com/quick_start/pricing"),

  // ---- Meta (model cards on huggingface.co) ----
  // Llama 4 Scout: "10M context window"; Llama 4 Maverick: "1M context window". No output cap in the cards.
  openWeight(
    ["llama-4-scout", "llama-4-scout-17b-16e-instruct"],
    10_000_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://huggingface.co/meta-llama/Llama-4-Scout-17B-16E-Instruct"
  ),
  openWeight(
    ["llama-4-maverick", "llama-4-maverick-17b-128e-instruct"],
    1_000_000,
    OPEN_WEIGHT_DEFAULT_OUTPUT_TOKENS,
    "https://huggingface.co/meta-llama/Llama-4-Maverick-17B-128E-Instruct"
  )
]
