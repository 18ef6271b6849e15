/**
 * Model specs as the CLI and config files write them: `anthropic:<id>` and
 * `openai:<id>` use the provider packages, anything else is an AI Gateway id
 * (`provider/model`, a plain string `ai` resolves through the gateway).
 *
 * `@ai-sdk/anthropic` and `@ai-sdk/openai` are optional peer dependencies of
 * this package: they are loaded only when a spec names them, and a missing
 * one fails with an error that names the package to install.
 *
 * @since 0.2.0
 */
import { Errors } from "@context-engine/core"
import type { LanguageModel } from "ai"
import { Effect } from "effect"

/**
 * Environment variables that hold a key for a model spec's provider.
 *
 * @category constants
 */
export const API_KEY_VARIABLES = {
  anthropic: "ANTHROPIC_API_KEY",
  openai: "OPENAI_API_KEY",
  gateway: "AI_GATEWAY_API_KEY"
} as const

/** The provider packages a spec can name. */
export type ProviderPackage = "@ai-sdk/anthropic" | "@ai-sdk/openai"

/**
 * Loads a provider package (default: dynamic `import`). Swapped in tests to
 * simulate a package that is not installed.
 *
 * @category models
 */
export type LoadPackage = (name: ProviderPackage) => Promise<Record<string, unknown>>

const importPackage: LoadPackage = (name) =>
  name === "@ai-sdk/anthropic" ? import("@ai-sdk/anthropic") : import("@ai-sdk/openai")

const isModuleNotFound = (error: unknown): boolean =>
  typeof error === "object" &&
  error !== null &&
  ((error as { code?: unknown }).code === "ERR_MODULE_NOT_FOUND" ||
    (error as { code?: unknown }).code === "MODULE_NOT_FOUND")

const errorMessage = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error)

// `process` does not exist on every runtime the AI SDK runs on.
const processEnv = (): Readonly<Record<string, string | undefined>> =>
  (globalThis as { process?: { env?: Record<string, string | undefined> } }).process?.env ?? {}

/**
 * Resolves a model spec. Fails with {@link Errors.SummarizerFailed}:
 * - naming the missing environment variable when no API key is set, before
 *   any network call, so it never hangs;
 * - naming the package to install (`npm install @ai-sdk/anthropic`) when the
 *   provider package is not installed.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ModelSpec } from "@context-engine/provider-adapters"
 * const model = await Effect.runPromise(ModelSpec.resolve("anthropic:claude-haiku-4-5"))
 * ```
 *
 * @category constructors
 */
export const resolve = (
  spec: string,
  env: Readonly<Record<string, string | undefined>> = processEnv(),
  load: LoadPackage = importPackage
): Effect.Effect<LanguageModel, Errors.SummarizerFailed> =>
  Effect.gen(function* () {
    const [head, ...rest] = spec.split(":")
    const provider = rest.length > 0 && (head === "anthropic" || head === "openai") ? head : "gateway"
    const id = provider === "gateway" ? spec : rest.join(":")
    const variable = API_KEY_VARIABLES[provider]
    if (!env[variable] && !(provider === "gateway" && env.VERCEL_OIDC_TOKEN))
      return yield* Effect.fail(
        new Errors.SummarizerFailed({
          summarizer: spec,
          reason: `no API key: set ${variable} to use ${provider === "gateway" ? "the AI Gateway model" : `the ${provider} model`} "${id}", or use --summarizer extractive (offline)`
        })
      )
    if (provider === "gateway") return id as LanguageModel
    const name: ProviderPackage = provider === "anthropic" ? "@ai-sdk/anthropic" : "@ai-sdk/openai"
    return yield* Effect.tryPromise({
      try: async () => {
        const factory = (await load(name))[provider] as (modelId: string) => LanguageModel
        return factory(id)
      },
      catch: (error) =>
        new Errors.SummarizerFailed({
          summarizer: spec,
          reason: isModuleNotFound(error)
            ? `${name} is not installed: it is an optional peer dependency of @context-engine/provider-adapters; install it (npm install ${name}) to use "${spec}"`
            : `cannot load ${name}: ${errorMessage(error)}`
        })
    })
  })
