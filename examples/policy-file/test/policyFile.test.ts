import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as Conversation from "../src/Conversation.ts"
import * as Setup from "../src/Setup.ts"

const configPath = fileURLToPath(new URL("../context-engine.config.json", import.meta.url))

describe("policy-file example", () => {
  it("the middleware resolves each model's window and reserves from the policy file", async () => {
    const setup = await Setup.load(configPath)
    const claude = await setup.middleware.controller.policyFor({
      provider: "anthropic.messages",
      modelId: "claude-sonnet-4-5"
    })
    expect(claude).toMatchObject({
      contextWindowTokens: 24_000,
      reserveTokens: 4_000,
      keepRecentTokens: 6_000,
      safetyMarginTokens: 1_000
    })
    // Catalog facts the file does not override stay.
    expect(claude.tokenizer).toBe("estimate:anthropic")
    const local = await setup.middleware.controller.policyFor({ provider: "local.chat", modelId: "local-qwen-coder" })
    expect(local).toMatchObject({ contextWindowTokens: 16_384, reserveTokens: 2_048, tokenizer: "estimate:generic" })
  })

  it.each([
    ["anthropic.messages", "claude-sonnet-4-5", 24_000, 4_000],
    ["local.chat", "local-qwen-coder", 16_384, 2_048]
  ] as const)(
    "%s/%s: every request fits the file's window; checkpoints come from the configured summarizer model",
    async (provider, modelId, window, reserve) => {
      const setup = await Setup.load(configPath)
      const requests = await Conversation.run({ provider, modelId, turns: 30, middleware: setup.middleware })
      expect(requests).toHaveLength(30)
      for (const request of requests) expect(request.tokens + reserve).toBeLessThanOrEqual(window)
      const session = await setup.middleware.controller.session({ provider, modelId })
      const checkpoints = session.entries().flatMap((entry) => (entry.kind === "checkpoint" ? [entry.checkpoint] : []))
      expect(checkpoints.length).toBeGreaterThan(0)
      for (const checkpoint of checkpoints) {
        expect(checkpoint.summarizer.kind).toBe("language-model")
        expect(checkpoint.summarizer.model).toBe("claude-haiku-4-5")
      }
      if (setup.offline) expect(setup.summarizerCalls()).toBe(checkpoints.length)
    },
    120_000
  )
})
