/**
 * Context-overflow error classification: tells "the prompt is longer than the
 * model's context window" apart from its look-alikes (rate limits, output-size
 * errors, malformed requests, byte-size limits, overload), and extracts the
 * limit and requested token counts where the provider states them.
 *
 * Only a classified overflow may start the compact-and-retry recovery
 * (DESIGN.md "Budget and triggers"; shared case C06).
 *
 * Sources of the recognised messages (one rule per provider wording):
 * - OpenAI Chat Completions: `code: "context_length_exceeded"`, "This model's
 *   maximum context length is N tokens. However, your messages resulted in M tokens."
 * - OpenAI Responses: "Your input exceeds the context window of this model."
 * - Anthropic Messages API errors doc: "prompt is too long: M tokens > N maximum",
 *   "input length and `max_tokens` exceed context limit: I + O > N".
 * - Google Gemini API: "The input token count (M) exceeds the maximum number of tokens allowed (N)."
 * - OpenRouter / vLLM (OpenAI-compatible servers): "maximum context length is N tokens.
 *   However, you requested about M tokens" / "your request has M input tokens".
 * - Ollama server: "prompt too long; exceeded max context length by E tokens".
 * - llama.cpp server: "the request exceeds the available context size" with
 *   `type: "exceed_context_size_error"`, `n_prompt_tokens`, `n_ctx` in the body.
 * - AWS Bedrock: "Input is too long for requested model."
 * - Mistral: "Prompt contains M tokens … too large for model with N maximum context length".
 * - xAI: "maximum prompt length is N but the request contains M tokens".
 *
 * @since 0.1.0
 */
import { Errors } from "@context-engine/core"

/**
 * The result of classifying an error as a context overflow.
 *
 * @category models
 */
export interface OverflowDetails {
  /** The typed error; `limitTokens` / `requestedTokens` set when the provider said them. */
  readonly overflow: Errors.ContextOverflow
  /** Tokens over the limit, when the provider reports only the excess (Ollama). */
  readonly excessTokens?: number
  /** Input part of `requestedTokens` when the provider splits it (Anthropic, OpenRouter). */
  readonly inputTokens?: number
  /** Output part (`max_tokens`) of `requestedTokens` when the provider splits it. */
  readonly outputTokens?: number
  /** Name of the rule that matched, for reports and tests. */
  readonly rule: string
}

/**
 * Classification options.
 *
 * @category models
 */
export interface ClassifyOptions {
  /** Provider name to report (e.g. `anthropic`); inferred from the error's URL when absent. */
  readonly provider?: string
}

/** What the classifier reads off an unknown error. */
interface ErrorFacts {
  readonly status: number | undefined
  readonly codes: ReadonlyArray<string>
  readonly texts: ReadonlyArray<string>
  readonly url: string | undefined
  readonly body: Record<string, unknown> | undefined
}

const num = (text: string | undefined): number | undefined => {
  if (text === undefined) return undefined
  const value = Number(text.replace(/[,_\s]/g, ""))
  return Number.isFinite(value) ? value : undefined
}

const numberField = (record: Record<string, unknown> | undefined, key: string): number | undefined => {
  const value = record?.[key]
  return typeof value === "number" && Number.isFinite(value) ? value : undefined
}

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

const parseJson = (text: unknown): unknown => {
  if (typeof text !== "string") return undefined
  try {
    return JSON.parse(text)
  } catch {
    return undefined
  }
}

/** Collects status, codes, texts and body from an error and its causes (RetryError.lastError, cause, errors[]). */
const facts = (error: unknown): ErrorFacts => {
  let status: number | undefined
  let url: string | undefined
  let body: Record<string, unknown> | undefined
  const codes: Array<string> = []
  const texts: Array<string> = []
  const seen = new Set<unknown>()
  const visit = (value: unknown, depth: number): void => {
    if (depth > 6 || value === undefined || value === null || seen.has(value)) return
    if (typeof value === "string") {
      texts.push(value)
      const parsed = parseJson(value)
      if (isRecord(parsed)) visit(parsed, depth + 1)
      return
    }
    if (!isRecord(value)) return
    seen.add(value)
    for (const key of ["statusCode", "status"]) {
      const candidate = value[key]
      if (status === undefined && typeof candidate === "number") status = candidate
      if (status === undefined && typeof candidate === "string" && /^\d{3}$/.test(candidate)) status = Number(candidate)
    }
    if (url === undefined && typeof value.url === "string") url = value.url
    for (const key of ["code", "type"]) {
      const candidate = value[key]
      if (typeof candidate === "string" && candidate !== "error") codes.push(candidate)
    }
    if (typeof value.message === "string") texts.push(value.message)
    if (value instanceof Error && value.message) texts.push(value.message)
    if (body === undefined && ("n_ctx" in value || "n_prompt_tokens" in value)) body = value
    visit(value.error, depth + 1)
    visit(value.data, depth + 1)
    visit(value.responseBody, depth + 1)
    visit(value.lastError, depth + 1)
    visit(value.cause, depth + 1)
    if (Array.isArray(value.errors)) for (const inner of value.errors) visit(inner, depth + 1)
  }
  visit(error, 0)
  return { status, codes, texts, url, body }
}

const providerFromUrl = (url: string | undefined): string | undefined => {
  if (url === undefined) return undefined
  const hosts: ReadonlyArray<readonly [RegExp, string]> = [
    [/api\.openai\.com\/v1\/responses/, "openai-responses"],
    [/api\.openai\.com/, "openai"],
    [/anthropic\.com/, "anthropic"],
    [/googleapis\.com/, "google"],
    [/openrouter\.ai/, "openrouter"],
    [/mistral\.ai/, "mistral"],
    [/bedrock/, "bedrock"],
    [/x\.ai/, "xai"],
    [/:11434/, "ollama"]
  ]
  return hosts.find(([pattern]) => pattern.test(url))?.[1]
}

/**
 * Look-alikes that must never start a recovery. Checked before any positive
 * rule. 429 (rate limit, Bedrock "Too many tokens"), 413 (byte-size limit,
 * Anthropic `request_too_large`), 503/529 (overload).
 */
const negativeStatuses: ReadonlySet<number> = new Set([413, 429, 503, 529])
const negativeText =
  /rate limit|tokens per min|\bTPM\b|requests per|too many requests|please wait|overloaded|maximum allowed number of bytes|request_too_large|max_tokens is too large|completion tokens|maximum allowed number of output tokens|max_tokens.{0,20}exceeds? (?:the )?(?:model'?s? )?(?:maximum|limit) (?:of )?output/i
const negativeCodes =
  /^(rate_limit_exceeded|rate_limit_error|overloaded_error|request_too_large|insufficient_quota|ThrottlingException)$/i

interface Rule {
  readonly name: string
  readonly pattern: RegExp
  readonly extract: (match: RegExpMatchArray) => {
    readonly limitTokens?: number | undefined
    readonly requestedTokens?: number | undefined
    readonly excessTokens?: number | undefined
    readonly inputTokens?: number | undefined
    readonly outputTokens?: number | undefined
  }
}

const N = "(\\d[\\d,]*)"

const rules: ReadonlyArray<Rule> = [
  {
    name: "anthropic-input-plus-max-tokens",
    pattern: new RegExp(
      `input length and \`?max_tokens\`? exceed context limit:?\\s*${N}\\s*\\+\\s*${N}\\s*>\\s*${N}`,
      "i"
    ),
    extract: (m) => {
      const input = num(m[1])
      const output = num(m[2])
      return {
        inputTokens: input,
        outputTokens: output,
        requestedTokens: input !== undefined && output !== undefined ? input + output : undefined,
        limitTokens: num(m[3])
      }
    }
  },
  {
    name: "anthropic-prompt-too-long",
    pattern: new RegExp(`prompt is too long:?\\s*${N} tokens\\s*>\\s*${N}`, "i"),
    extract: (m) => ({ requestedTokens: num(m[1]), limitTokens: num(m[2]) })
  },
  {
    name: "openai-compatible-maximum-context-length",
    pattern: new RegExp(
      `maximum context length is ${N} tokens\\.?\\s*However,? (?:your messages resulted in|you requested(?: about)?|your request has) ${N}(?: input)? tokens(?:\\s*\\(${N} (?:of text input|in the messages)[^,)]*,\\s*${N} in the (?:output|completion)\\))?`,
      "i"
    ),
    extract: (m) => ({
      limitTokens: num(m[1]),
      requestedTokens: num(m[2]),
      inputTokens: num(m[3]),
      outputTokens: num(m[4])
    })
  },
  {
    name: "google-input-token-count",
    pattern: new RegExp(
      `input token count(?:\\s*\\(${N}\\))? exceeds the maximum number of tokens allowed(?:\\s*\\(${N}\\))?`,
      "i"
    ),
    extract: (m) => ({ requestedTokens: num(m[1]), limitTokens: num(m[2]) })
  },
  {
    name: "mistral-prompt-contains",
    pattern: new RegExp(
      `Prompt contains ${N} tokens(?: and ${N} draft tokens)?,? too large for model with ${N} maximum context length`,
      "i"
    ),
    extract: (m) => ({ requestedTokens: num(m[1]), limitTokens: num(m[3]) })
  },
  {
    name: "xai-maximum-prompt-length",
    pattern: new RegExp(`maximum prompt length is ${N} but the request contains ${N} tokens`, "i"),
    extract: (m) => ({ limitTokens: num(m[1]), requestedTokens: num(m[2]) })
  },
  {
    name: "ollama-exceeded-by",
    pattern: new RegExp(`prompt too long;? exceeded (?:max )?context length by ${N} tokens`, "i"),
    extract: (m) => ({ excessTokens: num(m[1]) })
  },
  {
    name: "llamacpp-context-size",
    pattern: /exceeds the available context size|exceed_context_size_error/i,
    extract: () => ({})
  },
  {
    name: "openai-responses-context-window",
    pattern: /input exceeds the context window/i,
    extract: () => ({})
  },
  {
    name: "bedrock-input-too-long",
    pattern: /input is too long for (?:the )?requested model/i,
    extract: () => ({})
  },
  {
    name: "generic-context-length",
    pattern:
      /context[_ ]length[_ ]exceeded|maximum context length|exceeds? (?:the )?(?:model'?s? )?(?:maximum )?context (?:window|length|limit)|context window (?:is )?exceeded|prompt is too long|too many tokens in (?:the )?prompt/i,
    extract: () => ({})
  }
]

/**
 * Classifies an error. Returns the overflow details when `error` says the
 * prompt is longer than the model's context window, `undefined` otherwise
 * (including every negative of shared case C06).
 *
 * Accepts anything: an AI SDK `APICallError` (reads `statusCode`, `message`,
 * `data`, `responseBody`, `url`), a `RetryError` (`lastError`), an error with
 * `cause`, a stream `error` part's payload (`{ type: "error", error: { … } }`),
 * or a plain `{ status, code, message }` object. Never throws.
 *
 * @category classification
 * @example
 * ```ts
 * const details = OverflowClassifier.classify({ status: 400, message: "prompt is too long: 213462 tokens > 200000 maximum" })
 * details?.overflow.limitTokens // 200000
 * ```
 */
export const classify = (error: unknown, options: ClassifyOptions = {}): OverflowDetails | undefined => {
  const { status, codes, texts, url, body } = facts(error)
  if (status !== undefined && negativeStatuses.has(status)) return undefined
  if (codes.some((code) => negativeCodes.test(code))) return undefined
  const text = texts.join("\n")
  if (negativeText.test(text)) return undefined
  const provider = options.provider ?? providerFromUrl(url) ?? "unknown"
  const providerMessage = texts[0] ?? ""
  const codeSaysOverflow = codes.some((code) => /context_length_exceeded|exceed_context_size_error/i.test(code))
  for (const rule of rules) {
    const match = text.match(rule.pattern)
    if (match === null) continue
    const found = rule.extract(match)
    const limitTokens = found.limitTokens ?? numberField(body, "n_ctx")
    const requestedTokens = found.requestedTokens ?? numberField(body, "n_prompt_tokens")
    return details(provider, providerMessage, rule.name, { ...found, limitTokens, requestedTokens })
  }
  if (codeSaysOverflow) return details(provider, providerMessage, "code", {})
  return undefined
}

const details = (
  provider: string,
  providerMessage: string,
  rule: string,
  found: ReturnType<Rule["extract"]>
): OverflowDetails => ({
  overflow: new Errors.ContextOverflow({
    provider,
    providerMessage,
    ...(found.limitTokens !== undefined ? { limitTokens: found.limitTokens } : {}),
    ...(found.requestedTokens !== undefined ? { requestedTokens: found.requestedTokens } : {})
  }),
  rule,
  ...(found.excessTokens !== undefined ? { excessTokens: found.excessTokens } : {}),
  ...(found.inputTokens !== undefined ? { inputTokens: found.inputTokens } : {}),
  ...(found.outputTokens !== undefined ? { outputTokens: found.outputTokens } : {})
})

/**
 * Whether `error` is a provider context overflow (see {@link classify}).
 *
 * @category guards
 */
export const isContextOverflow = (error: unknown, options?: ClassifyOptions): boolean =>
  classify(error, options) !== undefined

/**
 * What {@link classifyBodyTooLarge} found: the request body was over a byte
 * limit (not a token overflow).
 *
 * @category models
 */
export interface BodyTooLarge {
  readonly status: number | undefined
  /** `status-413` or `text` (the provider said so without the status). */
  readonly rule: "status-413" | "text"
  readonly providerMessage: string
}

const bodyTooLargeText =
  /request[_ ]too[_ ]large|request entity too large|payload too large|exceeds the maximum allowed number of bytes/i

/**
 * Classifies "the request body is too large" (bytes): HTTP 413 with any
 * body — a gateway's HTML page (nginx `client_max_body_size`, shared case
 * C20) or Anthropic's `request_too_large` ("Request exceeds the maximum
 * allowed number of bytes", Anthropic errors doc) — or those words without
 * a status. Never a context overflow ({@link classify} lists 413 as a
 * negative, case C06); the remedy is fewer bytes (`RequestBytes`). Never
 * throws.
 *
 * @category classification
 */
export const classifyBodyTooLarge = (error: unknown): BodyTooLarge | undefined => {
  const { status, codes, texts } = facts(error)
  const providerMessage = texts[0] ?? ""
  if (status === 413) return { status, rule: "status-413", providerMessage }
  if (status !== undefined && status < 400) return undefined
  if ([...codes, ...texts].some((text) => bodyTooLargeText.test(text))) return { status, rule: "text", providerMessage }
  return undefined
}
