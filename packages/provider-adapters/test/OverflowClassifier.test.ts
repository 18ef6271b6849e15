import { APICallError } from "@ai-sdk/provider"
import { loadCase } from "@context-engine/core/test-support"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as OverflowClassifier from "../src/OverflowClassifier.ts"

interface Sample {
  readonly provider: string
  readonly status: number
  readonly code?: string
  readonly message: string
}
interface C06 {
  readonly positives: ReadonlyArray<Sample>
  readonly negatives: ReadonlyArray<Sample>
}

const c06 = loadCase<C06>("C06")

/** The numbers each positive's wording states, read by a person from the case file. */
const expectedNumbers: Record<string, { limit?: number; requested?: number }> = {
  "This model's maximum context length is 128000": { limit: 128000, requested: 131072 },
  "prompt is too long": { limit: 200000, requested: 213462 },
  "input length and": { limit: 200000, requested: 222000 },
  "The input token count": { limit: 1048576, requested: 1100000 },
  "This endpoint's maximum": { limit: 65536, requested: 70012 },
  "This model's maximum context length is 32768": { limit: 32768, requested: 40210 },
  "Prompt contains": { limit: 131072, requested: 140000 }
}

const asApiCallError = (sample: Sample): APICallError =>
  new APICallError({
    message: sample.message,
    url: "https://example.test/v1/chat",
    requestBodyValues: {},
    statusCode: sample.status,
    responseBody: JSON.stringify({
      error: { message: sample.message, ...(sample.code ? { code: sample.code } : {}) }
    }),
    data: { error: { message: sample.message, ...(sample.code ? { code: sample.code } : {}) } }
  })

describe("C06 overflow error classification", () => {
  it.each(c06.positives.map((sample) => [sample.provider, sample] as const))(
    "classifies the %s positive as an overflow with its numbers",
    (_, sample) => {
      const details = OverflowClassifier.classify(sample, { provider: sample.provider })
      expect(details).toBeDefined()
      expect(details?.overflow._tag).toBe("ContextOverflow")
      expect(details?.overflow.provider).toBe(sample.provider)
      expect(details?.overflow.providerMessage).toBe(sample.message)
      const key = Object.keys(expectedNumbers).find((prefix) => sample.message.startsWith(prefix))
      const numbers = key ? expectedNumbers[key] : undefined
      expect(details?.overflow.limitTokens).toBe(numbers?.limit)
      expect(details?.overflow.requestedTokens).toBe(numbers?.requested)
    }
  )

  it("extracts the excess Ollama reports and the split Anthropic / OpenRouter report", () => {
    const ollama = c06.positives.find((sample) => sample.provider === "ollama")!
    expect(OverflowClassifier.classify(ollama)?.excessTokens).toBe(1843)
    const anthropic = c06.positives.find((sample) => sample.message.startsWith("input length"))!
    expect(OverflowClassifier.classify(anthropic)).toMatchObject({ inputTokens: 190000, outputTokens: 32000 })
    const openrouter = c06.positives.find((sample) => sample.provider === "openrouter")!
    expect(OverflowClassifier.classify(openrouter)).toMatchObject({ inputTokens: 62012, outputTokens: 8000 })
  })

  it.each(c06.negatives.map((sample) => [sample.provider, sample.status, sample] as const))(
    "never classifies the %s %d look-alike as an overflow",
    (_, __, sample) => {
      expect(OverflowClassifier.classify(sample, { provider: sample.provider })).toBeUndefined()
      expect(OverflowClassifier.classify(asApiCallError(sample))).toBeUndefined()
    }
  )

  it("reads positives out of AI SDK APICallError, RetryError-like wrappers and stream error parts", () => {
    for (const sample of c06.positives) {
      const apiError = asApiCallError(sample)
      expect(OverflowClassifier.classify(apiError)).toBeDefined()
      expect(
        OverflowClassifier.classify({ name: "AI_RetryError", lastError: apiError, errors: [apiError] })
      ).toBeDefined()
      expect(OverflowClassifier.classify(new Error("wrapped", { cause: apiError }))).toBeDefined()
    }
    const streamPart = {
      type: "error",
      error: { type: "invalid_request_error", message: "prompt is too long: 5 tokens > 4 maximum" }
    }
    expect(OverflowClassifier.classify(streamPart)?.overflow.limitTokens).toBe(4)
  })

  it("reads llama.cpp's n_ctx / n_prompt_tokens from the body", () => {
    const body = {
      error: {
        code: 400,
        message: "the request exceeds the available context size, try increasing it",
        type: "exceed_context_size_error",
        n_prompt_tokens: 5000,
        n_ctx: 4096
      }
    }
    const error = new APICallError({
      message: body.error.message,
      url: "http://localhost:8080/v1/chat/completions",
      requestBodyValues: {},
      statusCode: 400,
      responseBody: JSON.stringify(body)
    })
    expect(OverflowClassifier.classify(error)?.overflow).toMatchObject({ limitTokens: 4096, requestedTokens: 5000 })
  })

  it("infers the provider from the request URL", () => {
    const error = new APICallError({
      message: "prompt is too long: 10 tokens > 5 maximum",
      url: "https://api.anthropic.com/v1/messages",
      requestBodyValues: {},
      statusCode: 400
    })
    expect(OverflowClassifier.classify(error)?.overflow.provider).toBe("anthropic")
  })

  it("property: any overflow wording under a 429/413/529 status is not an overflow", () => {
    fc.assert(
      fc.property(fc.constantFrom(...c06.positives), fc.constantFrom(413, 429, 503, 529), (sample, status) => {
        expect(OverflowClassifier.classify({ ...sample, status })).toBeUndefined()
      })
    )
  })

  it("property: the extracted numbers are the numbers in the message, whatever they are", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5_000_000 }),
        fc.integer({ min: 1, max: 5_000_000 }),
        (limit, requested) => {
          const anthropic = OverflowClassifier.classify({
            status: 400,
            message: `prompt is too long: ${requested} tokens > ${limit} maximum`
          })
          expect(anthropic?.overflow).toMatchObject({ limitTokens: limit, requestedTokens: requested })
          const openai = OverflowClassifier.classify({
            status: 400,
            message: `This model's maximum context length is ${limit} tokens. However, your messages resulted in ${requested} tokens. Please reduce the length of the messages.`
          })
          expect(openai?.overflow).toMatchObject({ limitTokens: limit, requestedTokens: requested })
        }
      )
    )
  })

  it("does not classify unrelated errors, empty values or non-errors", () => {
    for (const value of [
      undefined,
      null,
      "",
      42,
      {},
      new Error("socket hang up"),
      { status: 500, message: "Internal error" }
    ]) {
      expect(OverflowClassifier.classify(value)).toBeUndefined()
    }
  })
})
