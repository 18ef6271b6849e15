import { createAnthropic } from "@ai-sdk/anthropic"
import { createOpenAI } from "@ai-sdk/openai"
import { generateText } from "ai"
import { describe, expect, it } from "vitest"
import * as ProviderProfile from "../src/ProviderProfile.ts"

const failing = (status: number, body: unknown): typeof fetch =>
  (async () =>
    new Response(JSON.stringify(body), { status, headers: { "content-type": "application/json" } })) as typeof fetch

const errorOf = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error("expected a rejection")
    },
    (error: unknown) => error
  )

describe("ProviderProfile", () => {
  it.each([
    ["openai.chat", "openai-chat"],
    ["openai.responses", "openai-responses"],
    ["azure.responses", "openai-responses"],
    ["anthropic.messages", "anthropic"],
    ["google.generative-ai", "google"],
    ["google.vertex.chat", "google"],
    ["openrouter.chat", "openrouter"],
    ["vllm.chat", "vllm"],
    ["ollama.chat", "ollama"],
    ["llama.cpp.chat", "llama.cpp"],
    ["my-server.chat", "openai-compatible"]
  ] as const)("maps the AI SDK provider %s to the %s profile", (provider, id) => {
    expect(ProviderProfile.forProvider(provider).id).toBe(id)
  })

  it("chooses exact tokenizers for OpenAI families and estimators elsewhere", () => {
    expect(ProviderProfile.openaiTokenizer("gpt-4o-mini")).toBe("o200k_base")
    expect(ProviderProfile.openaiTokenizer("gpt-5.1")).toBe("o200k_base")
    expect(ProviderProfile.openaiTokenizer("gpt-4-turbo")).toBe("cl100k_base")
    expect(ProviderProfile.openaiTokenizer("gpt-3.5-turbo")).toBe("cl100k_base")
    expect(ProviderProfile.byId("anthropic").tokenizer("claude-sonnet-4-5")).toBe("estimate:anthropic")
    expect(ProviderProfile.byId("google").tokenizer("gemini-2.5-pro")).toBe("estimate:gemini")
    expect(ProviderProfile.byId("openrouter").tokenizer("openai/gpt-4o")).toBe("o200k_base")
    expect(ProviderProfile.byId("openrouter").tokenizer("anthropic/claude-sonnet-4.5")).toBe("estimate:anthropic")
    expect(ProviderProfile.byId("vllm").tokenizer("Qwen/Qwen3-32B")).toBe("estimate:generic")
  })

  it("states native compaction and prompt-cache behaviour per provider", () => {
    expect(ProviderProfile.byId("anthropic").nativeCompaction).toMatchObject({
      providerOptionsKey: "anthropic",
      contextEditing: true,
      compaction: true
    })
    expect(ProviderProfile.byId("openai-responses").nativeCompaction).toMatchObject({
      providerOptionsKey: "openai",
      compaction: true
    })
    expect(ProviderProfile.byId("openai-chat").nativeCompaction.compaction).toBe(false)
    expect(ProviderProfile.byId("anthropic").promptCache.kind).toBe("explicit-breakpoints")
    expect(ProviderProfile.byId("openai-chat").promptCache).toMatchObject({
      kind: "automatic-prefix",
      minPrefixTokens: 1024
    })
  })

  it("builds a consistent fallback policy (reserves inside the window)", () => {
    for (const profile of ProviderProfile.profiles) {
      const policy = ProviderProfile.fallbackPolicy(profile, "some-model")
      const available =
        policy.contextWindowTokens - policy.reserveTokens - policy.toolLoopReserveTokens - policy.safetyMarginTokens
      expect(available).toBeGreaterThan(policy.keepRecentTokens)
      expect(policy.promptCacheTtlMs).toBe(profile.promptCache.ttlMs)
    }
  })

  it("classifies the errors the real AI SDK providers raise for an Anthropic overflow (mock fetch)", async () => {
    const anthropic = createAnthropic({
      apiKey: "k",
      fetch: failing(400, {
        type: "error",
        error: { type: "invalid_request_error", message: "prompt is too long: 213462 tokens > 200000 maximum" }
      })
    })
    const error = await errorOf(generateText({ model: anthropic("claude-sonnet-4-5"), prompt: "x", maxRetries: 0 }))
    const details = ProviderProfile.byId("anthropic").classifyOverflow(error)
    expect(details?.overflow).toMatchObject({ provider: "anthropic", limitTokens: 200_000, requestedTokens: 213_462 })
  })

  it("classifies OpenAI's context_length_exceeded and not its rate limit (mock fetch)", async () => {
    const overflow = createOpenAI({
      apiKey: "k",
      fetch: failing(400, {
        error: {
          message:
            "This model's maximum context length is 128000 tokens. However, your messages resulted in 131072 tokens. Please reduce the length of the messages.",
          type: "invalid_request_error",
          param: "messages",
          code: "context_length_exceeded"
        }
      })
    })
    const error = await errorOf(generateText({ model: overflow.chat("gpt-4o"), prompt: "x", maxRetries: 0 }))
    expect(ProviderProfile.byId("openai-chat").classifyOverflow(error)?.overflow).toMatchObject({
      limitTokens: 128_000,
      requestedTokens: 131_072
    })
    const limited = createOpenAI({
      apiKey: "k",
      fetch: failing(429, {
        error: {
          message: "Rate limit reached for gpt-4o on tokens per min (TPM): Limit 30000, Used 29000, Requested 4000.",
          type: "tokens",
          code: "rate_limit_exceeded"
        }
      })
    })
    const rateLimit = await errorOf(generateText({ model: limited.chat("gpt-4o"), prompt: "x", maxRetries: 0 }))
    expect(ProviderProfile.byId("openai-chat").classifyOverflow(rateLimit)).toBeUndefined()
  })
})
