/**
 * Default tuning values of a model policy and the checks that reject an
 * impossible one. Facts about models live in `ModelCatalog.ts`; the registry
 * in `PolicyRegistry.ts` combines both.
 *
 * @since 0.1.0
 */
import type { ModelFacts } from "./ModelCatalog.ts"
import type { ModelPolicy, TokenizerId } from "./ModelPolicy.ts"
import type { PolicyFields } from "./PolicyRegistry.ts"
import * as RequestShape from "./RequestShape.ts"

/**
 * Tokens kept free for the next response, before capping to the model's
 * output limit and half the window. Pi's `DEFAULT_COMPACTION_SETTINGS.reserveTokens`
 * (pi-mono `packages/coding-agent/src/core/compaction/compaction.ts`).
 *
 * @category constants
 */
export const DEFAULT_RESERVE_TOKENS = 16_384

/**
 * Recent tokens kept verbatim after a compaction, before capping to half of
 * the input room. Pi's `DEFAULT_COMPACTION_SETTINGS.keepRecentTokens` (same file).
 *
 * @category constants
 */
export const DEFAULT_KEEP_RECENT_TOKENS = 20_000

/**
 * Cap of the default tool-loop reserve: one tool result as Pi truncates it
 * (50 KB of output, pi-mono `packages/coding-agent/src/core/tools/truncate.ts`)
 * at about 4 bytes per token. Our choice: results that arrive within one
 * agent step, after the last budget check, must still fit.
 *
 * @category constants
 */
export const TOOL_LOOP_RESERVE_MAX_TOKENS = 12_800

/**
 * Share of the window the default tool-loop reserve may take at most (our
 * choice), so that small windows keep room for the conversation.
 *
 * @category constants
 */
export const TOOL_LOOP_RESERVE_SHARE = 0.05

/**
 * Default safety margin with an exact tokenizer, as a share of the window
 * (our choice): what an exact count still misses is framing the provider
 * adds (per-message role tokens, tool-call wrappers, injected tool-use
 * system text), a few hundred tokens per request.
 *
 * @category constants
 */
export const SAFETY_MARGIN_SHARE_EXACT = 0.02

/**
 * Default safety margin with an estimator, as a share of the window (our
 * choice): character-based estimates drift by several percent on code and
 * non-English text; measurement anchors on the provider's reported usage, so
 * only what was appended since the last response is estimated.
 *
 * @category constants
 */
export const SAFETY_MARGIN_SHARE_ESTIMATE = 0.05

/**
 * Largest default `keepRecentTokens` as a share of the input room (our
 * choice): the kept tail must leave room for the checkpoint, memory and the
 * next turns, or compaction would be due again at once.
 *
 * @category constants
 */
export const KEEP_RECENT_SHARE = 0.5

/**
 * Window of {@link PolicyRegistry.fallback}: 32,768 tokens, the native window
 * of Qwen3 and Mistral 7B v0.3 (model cards), the smallest current families.
 *
 * @category constants
 */
export const FALLBACK_CONTEXT_WINDOW_TOKENS = 32_768

/**
 * Output limit of the fallback policy: 4,096 tokens (our choice, an eighth of its window).
 *
 * @category constants
 */
export const FALLBACK_MAX_OUTPUT_TOKENS = 4_096

/**
 * No token count above this is believed: the largest documented windows are
 * about 2M tokens (Gemini 1.5 Pro, 2,097,152), so 100M is a typo (bytes, an
 * extra zero) rather than a model.
 *
 * @category constants
 */
export const MAX_TOKENS = 100_000_000

/**
 * No prompt-cache lifetime above 7 days is believed; the longest documented
 * retention is OpenAI's 24 h extended prompt caching.
 *
 * @category constants
 */
export const MAX_PROMPT_CACHE_TTL_MS = 7 * 24 * 60 * 60 * 1000

/**
 * No request-body cap above 1 GiB is believed: the largest documented caps
 * are tens of MB (Anthropic Messages 32 MB, OpenAI file inputs 50 MB).
 *
 * @category constants
 */
export const MAX_REQUEST_BODY_BYTES = 1024 * 1024 * 1024

/**
 * The output limit of a model run in a window set apart from its catalog
 * facts (a `contextWindowTokens` override without its own
 * `maxOutputTokens`: a smaller deployment, `--context-window 8k`):
 * `min(maxOutputTokens, window / 2)`. Half the window is the bound
 * {@link defaultReserveTokens} already puts on the reserve: an answer that
 * may take more than half the window leaves the request less room than the
 * answer. So a window below the model's output limit lowers the limit (and
 * the reserve with it) instead of making the policy impossible.
 *
 * @category defaults
 */
export const outputLimitForWindow = (contextWindowTokens: number, maxOutputTokens: number): number =>
  Math.max(1, Math.min(maxOutputTokens, Math.floor(contextWindowTokens / 2)))

/**
 * `min(16,384, maxOutputTokens, window / 2)`: Pi's reserve, never more than the
 * model can write, and never more than half the window.
 *
 * @category defaults
 */
export const defaultReserveTokens = (contextWindowTokens: number, maxOutputTokens: number): number =>
  Math.max(0, Math.min(DEFAULT_RESERVE_TOKENS, maxOutputTokens, Math.floor(contextWindowTokens / 2)))

/**
 * `min(12,800, 5% of the window)`.
 *
 * @category defaults
 */
export const defaultToolLoopReserveTokens = (contextWindowTokens: number): number =>
  Math.max(0, Math.min(TOOL_LOOP_RESERVE_MAX_TOKENS, Math.floor(contextWindowTokens * TOOL_LOOP_RESERVE_SHARE)))

/**
 * 2% of the window for exact tokenizers, 5% for estimators, rounded up.
 *
 * @category defaults
 */
export const defaultSafetyMarginTokens = (contextWindowTokens: number, tokenizer: TokenizerId): number =>
  Math.max(
    0,
    Math.ceil(
      contextWindowTokens *
        (tokenizer.startsWith("estimate:") ? SAFETY_MARGIN_SHARE_ESTIMATE : SAFETY_MARGIN_SHARE_EXACT)
    )
  )

/**
 * `min(20,000, half of the input room)`, where the input room is the window
 * minus reserve, tool-loop reserve and safety margin.
 *
 * @category defaults
 */
export const defaultKeepRecentTokens = (inputRoomTokens: number): number =>
  Math.max(0, Math.min(DEFAULT_KEEP_RECENT_TOKENS, Math.floor(inputRoomTokens * KEEP_RECENT_SHARE)))

/**
 * What is wrong with a policy: the field, its value and why.
 *
 * @category models
 */
export interface Problem {
  readonly field: string
  readonly value: unknown
  readonly reason: string
}

const TOKEN_FIELDS = [
  "contextWindowTokens",
  "maxOutputTokens",
  "reserveTokens",
  "keepRecentTokens",
  "toolLoopReserveTokens",
  "safetyMarginTokens"
] as const

/** Optional route limits: at least 1 when present. */
const ROUTE_TOKEN_FIELDS = ["maxInputTokens", "serverCompactionAtTokens"] as const

const checkNumber = (
  field: string,
  value: unknown,
  minimum: number,
  maximum: number,
  unit: string
): Problem | undefined => {
  if (typeof value !== "number" || !Number.isFinite(value)) return { field, value, reason: "must be a finite number" }
  if (!Number.isInteger(value)) return { field, value, reason: `must be a whole number of ${unit}` }
  if (value < minimum) {
    return { field, value, reason: minimum === 0 ? "must not be negative" : `must be at least ${minimum}` }
  }
  if (value > maximum) {
    return { field, value, reason: `is absurd: above ${maximum.toLocaleString("en-US")} ${unit}` }
  }
  return undefined
}

/**
 * Checks the numbers that are present: finite, whole, not negative (window
 * and output limit at least 1), at most {@link MAX_TOKENS} tokens or
 * {@link MAX_PROMPT_CACHE_TTL_MS} ms.
 *
 * @category validation
 */
export const checkNumbers = (
  fields: {
    readonly [K in
      | (typeof TOKEN_FIELDS)[number]
      | (typeof ROUTE_TOKEN_FIELDS)[number]
      | "maxRequestBodyBytes"
      | "promptCacheTtlMs"]?: unknown
  }
): Problem | undefined => {
  for (const field of TOKEN_FIELDS) {
    if (!(field in fields)) continue
    const minimum = field === "contextWindowTokens" || field === "maxOutputTokens" ? 1 : 0
    const problem = checkNumber(field, fields[field], minimum, MAX_TOKENS, "tokens")
    if (problem) return problem
  }
  for (const field of ROUTE_TOKEN_FIELDS) {
    if (!(field in fields) || fields[field] === undefined) continue
    const problem = checkNumber(field, fields[field], 1, MAX_TOKENS, "tokens")
    if (problem) return problem
  }
  if ("maxRequestBodyBytes" in fields && fields.maxRequestBodyBytes !== undefined) {
    const problem = checkNumber("maxRequestBodyBytes", fields.maxRequestBodyBytes, 1, MAX_REQUEST_BODY_BYTES, "bytes")
    if (problem) return problem
  }
  if ("promptCacheTtlMs" in fields) {
    return checkNumber("promptCacheTtlMs", fields.promptCacheTtlMs, 0, MAX_PROMPT_CACHE_TTL_MS, "ms")
  }
  return undefined
}

/**
 * Checks a complete policy: the numbers ({@link checkNumbers}), a non-empty
 * model id, and that a request is possible at all:
 *
 * - `maxOutputTokens ≤ contextWindowTokens`
 * - `reserveTokens < contextWindowTokens`
 * - `reserveTokens + toolLoopReserveTokens + safetyMarginTokens < contextWindowTokens`
 * - `keepRecentTokens <` the input room that leaves
 *
 * @category validation
 */
export const check = (policy: ModelPolicy): Problem | undefined => {
  if (policy.model.trim().length === 0) return { field: "model", value: policy.model, reason: "must not be empty" }
  const numbers = checkNumbers(policy)
  if (numbers) return numbers
  const window = policy.contextWindowTokens
  if (policy.maxOutputTokens > window) {
    return {
      field: "maxOutputTokens",
      value: policy.maxOutputTokens,
      reason: `exceeds contextWindowTokens (${window})`
    }
  }
  if (policy.reserveTokens >= window) {
    return {
      field: "reserveTokens",
      value: policy.reserveTokens,
      reason: `must be less than contextWindowTokens (${window})`
    }
  }
  const reserved = policy.reserveTokens + policy.toolLoopReserveTokens + policy.safetyMarginTokens
  if (reserved >= window) {
    return {
      field: "reserveTokens + toolLoopReserveTokens + safetyMarginTokens",
      value: reserved,
      reason: `${policy.reserveTokens} + ${policy.toolLoopReserveTokens} + ${policy.safetyMarginTokens} leaves no input room in a ${window}-token window`
    }
  }
  for (const field of ROUTE_TOKEN_FIELDS) {
    const value = policy[field]
    if (value !== undefined && value <= policy.safetyMarginTokens)
      return { field, value, reason: `leaves no input room after the ${policy.safetyMarginTokens}-token safety margin` }
  }
  const inputRoom = Math.min(
    window - reserved,
    (policy.maxInputTokens ?? Number.POSITIVE_INFINITY) - policy.safetyMarginTokens,
    (policy.serverCompactionAtTokens ?? Number.POSITIVE_INFINITY) - policy.safetyMarginTokens
  )
  if (policy.keepRecentTokens >= inputRoom) {
    return {
      field: "keepRecentTokens",
      value: policy.keepRecentTokens,
      reason: `must be less than the ${inputRoom} input tokens the route leaves: the least of the ${window}-token window less ${reserved} held back (reserve ${policy.reserveTokens} + tool-loop reserve ${policy.toolLoopReserveTokens} + safety margin ${policy.safetyMarginTokens}), the input cap and the server compaction point, each less the safety margin`
    }
  }
  return undefined
}

/**
 * What a partial policy gets wrong for every model it may be resolved for:
 * its numbers ({@link checkNumbers}) and, when it gives the window,
 * {@link check} with each missing field at its least (reserves and
 * `keepRecentTokens` 0, `maxOutputTokens` 1, no route cap). Resolution keeps
 * the fields given and fills the rest at or above those least values, which
 * only makes each check stricter: a problem here is one for every model.
 *
 * @category validation
 */
export const checkPartial = (fields: Partial<ModelPolicy>): Problem | undefined => {
  const numbers = checkNumbers(fields)
  if (numbers !== undefined || fields.contextWindowTokens === undefined) return numbers
  const least = { reserveTokens: 0, toolLoopReserveTokens: 0, safetyMarginTokens: 0, keepRecentTokens: 0 }
  return check({ maxOutputTokens: 1, ...least, ...fields, model: "(any model)" } as ModelPolicy)
}

/**
 * Facts assumed for a model the catalog does not know: no reasoning, the
 * generic estimator, no prompt cache, no provider-native compaction.
 *
 * @category constants
 */
export const GENERIC_FACTS: Omit<ModelFacts, "contextWindowTokens" | "maxOutputTokens"> = {
  reasoning: false,
  tokenizer: "estimate:generic",
  promptCacheTtlMs: 0,
  nativeCompaction: { anthropicContextEditing: false, anthropicCompaction: false, openaiResponsesCompaction: false }
}

/**
 * Fills the tuning fields a layer did not set, from the window, output limit
 * and tokenizer (rules and sources in `ts`):
 *
 * - `reserveTokens` = min(16,384 (Pi), maxOutputTokens, window / 2)
 * - `toolLoopReserveTokens` = min(12,800, 5% of the window)
 * - `safetyMarginTokens` = 2% of the window (exact tokenizer) or 5% (estimator)
 * - `keepRecentTokens` = min(20,000 (Pi), half of what remains for input,
 *   the input cap and server compaction point less the safety margin included)
 * - `maxInputTokens`, `serverCompactionAtTokens`, `maxRequestBodyBytes`:
 *   kept when given (route limits; no default)
 * - `assistantPrefill` = false for models that reject a trailing assistant
 *   message (`RequestShape.supportsAssistantPrefill`), else absent
 *
 * @category constructors
 */
export const derive = (
  model: string,
  fields: PolicyFields & Pick<ModelFacts, "contextWindowTokens" | "maxOutputTokens">
): ModelPolicy => {
  const window = fields.contextWindowTokens
  const tokenizer = fields.tokenizer ?? GENERIC_FACTS.tokenizer
  const reserveTokens = fields.reserveTokens ?? defaultReserveTokens(window, fields.maxOutputTokens)
  const toolLoopReserveTokens = fields.toolLoopReserveTokens ?? defaultToolLoopReserveTokens(window)
  const safetyMarginTokens = fields.safetyMarginTokens ?? defaultSafetyMarginTokens(window, tokenizer)
  const keepRecentTokens =
    fields.keepRecentTokens ??
    defaultKeepRecentTokens(
      Math.min(
        window - reserveTokens - toolLoopReserveTokens - safetyMarginTokens,
        (fields.maxInputTokens ?? Number.POSITIVE_INFINITY) - safetyMarginTokens,
        (fields.serverCompactionAtTokens ?? Number.POSITIVE_INFINITY) - safetyMarginTokens
      )
    )
  return {
    model,
    contextWindowTokens: window,
    maxOutputTokens: fields.maxOutputTokens,
    reserveTokens,
    keepRecentTokens,
    toolLoopReserveTokens,
    safetyMarginTokens,
    reasoning: fields.reasoning ?? GENERIC_FACTS.reasoning,
    tokenizer,
    promptCacheTtlMs: fields.promptCacheTtlMs ?? GENERIC_FACTS.promptCacheTtlMs,
    nativeCompaction: { ...GENERIC_FACTS.nativeCompaction, ...fields.nativeCompaction },
    ...(fields.maxInputTokens !== undefined ? { maxInputTokens: fields.maxInputTokens } : {}),
    ...(fields.serverCompactionAtTokens !== undefined
      ? { serverCompactionAtTokens: fields.serverCompactionAtTokens }
      : {}),
    ...(fields.maxRequestBodyBytes !== undefined ? { maxRequestBodyBytes: fields.maxRequestBodyBytes } : {}),
    ...((fields.assistantPrefill ?? RequestShape.supportsAssistantPrefill(model)) ? {} : { assistantPrefill: false })
  }
}
