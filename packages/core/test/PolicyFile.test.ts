import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Errors, PolicyRegistry } from "@context-engine/core"
import { PolicyFile } from "@context-engine/core/node"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "policy-file-"))
const write = (name: string, content: string): string => {
  const path = join(dir, name)
  writeFileSync(path, content)
  return path
}

const failure = async (path: string): Promise<unknown> => {
  const exit = await Effect.runPromiseExit(PolicyFile.loadPolicyFile(path))
  return Exit.isFailure(exit) ? exit.cause.reasons.find((r) => r._tag === "Fail")?.error : undefined
}

const load = (path: string) => Effect.runPromise(PolicyFile.loadPolicyFile(path))

describe("loadPolicyFile", () => {
  it("merges JSON overrides over the built-ins and adds new models", async () => {
    const path = write(
      "ok.json",
      JSON.stringify({
        defaults: { safetyMarginTokens: 3_000 },
        models: {
          "anthropic/claude-sonnet-4-5": { contextWindowTokens: 1_000_000 },
          "my-local-model": { contextWindowTokens: 32_768, maxOutputTokens: 4_096, tokenizer: "cl100k_base" }
        }
      })
    )
    const registry = await load(path)
    expect(registry.source).toBe(path)
    const sonnet = PolicyRegistry.lookupSync("claude-sonnet-4-5-20250929", registry)
    expect(sonnet.contextWindowTokens).toBe(1_000_000)
    expect(sonnet.maxOutputTokens).toBe(64_000) // still the built-in fact
    expect(sonnet.safetyMarginTokens).toBe(3_000)
    const local = PolicyRegistry.lookupSync("my-local-model:q4", registry)
    expect([local.contextWindowTokens, local.tokenizer]).toEqual([32_768, "cl100k_base"])
    // models the file does not name keep their built-in numbers, plus the file's defaults
    expect(PolicyRegistry.lookupSync("gpt-5", registry).contextWindowTokens).toBe(400_000)
  })

  it("loads a .ts module's default export, and the Promise form works", async () => {
    const path = write("policy.ts", 'export default { models: { "gpt-5": { keepRecentTokens: 30000 } } }\n')
    const registry = await PolicyFile.loadPolicyFilePromise(path)
    expect(PolicyRegistry.lookupSync("gpt-5", registry).keepRecentTokens).toBe(30_000)
  })

  it("names an unknown key and the file", async () => {
    const path = write("typo.json", JSON.stringify({ models: { "gpt-5": { contextWindowTokenz: 10 } } }))
    const error = await failure(path)
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    const invalid = error as Errors.InvalidInput
    expect(invalid.what).toContain(path)
    expect(invalid.path).toBe("models.gpt-5.contextWindowTokenz")
    expect(invalid.detail).toContain('unknown key "contextWindowTokenz"')
    expect(invalid.message).toContain(path)
  })

  it("names an unknown top-level key", async () => {
    const error = await failure(write("top.json", JSON.stringify({ models: {}, model: {} })))
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    expect((error as Errors.InvalidInput).path).toBe("model")
  })

  it("rejects a wrongly typed value with its path", async () => {
    const error = await failure(write("type.json", JSON.stringify({ models: { "gpt-5": { reserveTokens: "16k" } } })))
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    expect((error as Errors.InvalidInput).path).toBe("models.gpt-5.reserveTokens")
  })

  it("rejects impossible numbers as PolicyInvalid naming model, field, value and file", async () => {
    const path = write("bad.json", JSON.stringify({ models: { "gpt-4o": { reserveTokens: 128_000 } } }))
    const error = await failure(path)
    expect(error).toBeInstanceOf(Errors.PolicyInvalid)
    const invalid = error as Errors.PolicyInvalid
    expect([invalid.model, invalid.field, invalid.value]).toEqual(["gpt-4o", "reserveTokens", 128_000])
    expect(invalid.reason).toContain(path)
  })

  it("a failing value from `defaults` says so: the model the error names is one the user never wrote (new-user trial)", async () => {
    const path = write("defaults.json", JSON.stringify({ defaults: { safetyMarginTokens: 99_999_999 }, models: {} }))
    const invalid = (await failure(path)) as Errors.PolicyInvalid
    expect(invalid).toBeInstanceOf(Errors.PolicyInvalid)
    expect(invalid.reason).toContain(
      `safetyMarginTokens comes from the file's defaults, which apply to every model: ${invalid.model} is the first they fail`
    )
    // A model's own value is the model's: no note.
    const own = (await failure(
      write("own.json", JSON.stringify({ models: { "gpt-4o": { reserveTokens: 128_000 } } }))
    )) as Errors.PolicyInvalid
    expect(own.reason).not.toContain("defaults")
  })

  it("requires window and output limit for a model the catalog does not know", async () => {
    const error = await failure(write("new.json", JSON.stringify({ models: { "my-model": { reserveTokens: 1_000 } } })))
    expect(error).toBeInstanceOf(Errors.PolicyInvalid)
    expect((error as Errors.PolicyInvalid).field).toBe("contextWindowTokens")
  })

  it("reports a missing file, bad JSON and an unsupported extension as InvalidInput", async () => {
    for (const path of [
      join(dir, "missing.json"),
      write("broken.json", "{ models: "),
      write("policy.yaml", "models: {}")
    ]) {
      await expect(PolicyFile.loadPolicyFilePromise(path)).rejects.toBeInstanceOf(Errors.InvalidInput)
    }
  })
})
