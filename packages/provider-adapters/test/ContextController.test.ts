import { type ContextEngine, Errors, PolicyRegistry } from "@context-engine/core"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as ContextController from "../src/ContextController.ts"
import * as ProviderProfile from "../src/ProviderProfile.ts"
import * as TestEngine from "./support/TestEngine.ts"

describe("ContextController policy resolution", () => {
  it("uses core's catalog for known models when no policy is given", async () => {
    const controller = ContextController.make({ engine: TestEngine.make() })
    const policy = await controller.policyFor({ provider: "openai.chat", modelId: "gpt-4o" })
    expect(policy.contextWindowTokens).toBe(128_000)
    expect(policy.tokenizer).toBe("o200k_base")
  })

  it("falls back to the provider profile for unknown models (window and tokenizer)", async () => {
    const controller = ContextController.make({ engine: TestEngine.make() })
    const policy = await controller.policyFor({ provider: "ollama.chat", modelId: "acme-local-7b" })
    expect(policy.contextWindowTokens).toBe(ProviderProfile.byId("ollama").fallbackLimits.contextWindowTokens)
    expect(policy.tokenizer).toBe("estimate:generic")
  })

  it("loads a registry (policy file) and lays partial policies over the catalog", async () => {
    const registry = await Effect.runPromise(
      PolicyRegistry.make({ models: { "gpt-4o": { contextWindowTokens: 64_000, reserveTokens: 6_000 } } })
    )
    const fromRegistry = ContextController.make({ engine: TestEngine.make(), policy: registry })
    expect(await fromRegistry.policyFor({ provider: "openai.chat", modelId: "gpt-4o" })).toMatchObject({
      contextWindowTokens: 64_000,
      reserveTokens: 6_000
    })
    const partial = ContextController.make({ engine: TestEngine.make(), policy: { keepRecentTokens: 12_345 } })
    expect(await partial.policyFor({ provider: "anthropic.messages", modelId: "claude-sonnet-4-5" })).toMatchObject({
      contextWindowTokens: 200_000,
      keepRecentTokens: 12_345,
      tokenizer: "estimate:anthropic"
    })
  })

  it("rejects a policy impossible for every model with core's typed PolicyInvalid when it is made", () => {
    expect(() =>
      ContextController.make({
        engine: TestEngine.make(),
        policy: { contextWindowTokens: 1_000, reserveTokens: 5_000 }
      })
    ).toThrow(/reserveTokens = 5000 is invalid: must be less than contextWindowTokens \(1000\)/)
  })

  it("rejects a policy impossible for the request's model with core's typed PolicyInvalid", async () => {
    const controller = ContextController.make({ engine: TestEngine.make(), policy: { reserveTokens: 200_000 } })
    await expect(controller.policyFor({ provider: "openai.chat", modelId: "gpt-4o" })).rejects.toMatchObject({
      _tag: "PolicyInvalid"
    })
  })

  it("applies the window learned after an overflow to later policies", async () => {
    const controller = ContextController.make({ engine: TestEngine.make() })
    const model = { provider: "openai.chat", modelId: "gpt-4o" }
    const session = await controller.session(model)
    session.learn("gpt-4o", 50_000)
    session.learn("gpt-4o", 90_000)
    const policy = await controller.policyFor(model)
    expect(policy.contextWindowTokens).toBe(50_000)
    expect(policy.reserveTokens).toBeLessThanOrEqual(12_500)
  })
})

describe("ContextController engine contract", () => {
  it("rejects an engine written against another specificationVersion with InvalidInput", () => {
    const engine = { ...TestEngine.make(), specificationVersion: "v2" } as unknown as ContextEngine.ContextEngine
    expect(() => ContextController.make({ engine })).toThrow(Errors.InvalidInput)
    expect(() => ContextController.make({ engine })).toThrow(/specificationVersion "v2"; this middleware runs v1/)
  })
})
