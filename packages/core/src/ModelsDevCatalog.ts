/**
 * Reads a model catalog in the models.dev format (`https://models.dev/api.json`:
 * providers by id, each with `models` by id holding `limit.context`,
 * `limit.output` and `reasoning`) into policy overrides, so a user can
 * refresh or extend the built-in catalog without a release. A single
 * provider object (`{ "id": "acme", "models": { … } }`) is read too.
 *
 * Each model is keyed by its id; the AI Gateway form `provider/id` resolves
 * to it like any provider-prefixed id (`ModelId.candidateIds`). A model the built-in catalog does not know gets the tokenizer of its
 * provider (`openai` → `o200k_base`, `anthropic` → Anthropic estimate,
 * `google` / `vertex` → Gemini estimate, others the generic estimate); a
 * known one keeps the catalog's. Models without both limits (embeddings,
 * image models) or with an output limit not below the window are skipped and
 * listed.
 *
 * @since 0.2.0
 */
import { Effect, Exit } from "effect"
import { InvalidInput } from "./Errors.ts"
import type { TokenizerId } from "./ModelPolicy.ts"
import * as PolicyRegistry from "./PolicyRegistry.ts"

/**
 * What a models.dev catalog contributes: overrides by id and the models it
 * skipped (with why).
 *
 * @category models
 */
export interface CatalogOverrides {
  readonly models: Readonly<Record<string, PolicyRegistry.PolicyFields>>
  readonly skipped: ReadonlyArray<{ readonly id: string; readonly reason: string }>
}

const PROVIDER_TOKENIZERS: Readonly<Record<string, TokenizerId>> = {
  openai: "o200k_base",
  azure: "o200k_base",
  anthropic: "estimate:anthropic",
  google: "estimate:gemini",
  "google-vertex": "estimate:gemini",
  vertex: "estimate:gemini"
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const positiveInt = (value: unknown): number | undefined =>
  typeof value === "number" && Number.isInteger(value) && value > 0 ? value : undefined

const known = (id: string): boolean => Exit.isSuccess(Effect.runSyncExit(PolicyRegistry.builtin.lookup(id)))

const providersOf = (input: Record<string, unknown>): ReadonlyArray<readonly [string, Record<string, unknown>]> =>
  isRecord(input.models)
    ? [[typeof input.id === "string" ? input.id : "", input.models]]
    : Object.entries(input).flatMap(([key, provider]) =>
        isRecord(provider) && isRecord(provider.models)
          ? [[typeof provider.id === "string" ? provider.id : key, provider.models] as const]
          : []
      )

const fieldsOf = (
  provider: string,
  id: string,
  model: Record<string, unknown>
): PolicyRegistry.PolicyFields | string => {
  const limit = isRecord(model.limit) ? model.limit : {}
  const contextWindowTokens = positiveInt(limit.context)
  const maxOutputTokens = positiveInt(limit.output)
  if (contextWindowTokens === undefined || maxOutputTokens === undefined)
    return "limit.context and limit.output must be positive integers"
  if (maxOutputTokens >= contextWindowTokens)
    return `limit.output ${maxOutputTokens} is not below limit.context ${contextWindowTokens}`
  const tokenizer = known(id) ? undefined : (PROVIDER_TOKENIZERS[provider] ?? "estimate:generic")
  return {
    contextWindowTokens,
    maxOutputTokens,
    ...(typeof model.reasoning === "boolean" ? { reasoning: model.reasoning } : {}),
    ...(tokenizer ? { tokenizer } : {})
  }
}

/**
 * Converts parsed models.dev JSON into policy overrides. Fails with
 * {@link InvalidInput} when the value holds no provider with `models`.
 *
 * @category constructors
 */
export const toOverrides = (input: unknown, source: string): Effect.Effect<CatalogOverrides, InvalidInput> => {
  const providers = isRecord(input) ? providersOf(input) : []
  if (providers.length === 0)
    return Effect.fail(
      new InvalidInput({
        what: `model catalog ${source}`,
        path: "",
        detail: 'expected models.dev JSON: { "<provider>": { "models": { "<id>": { "limit": { … } } } } }'
      })
    )
  const models: Record<string, PolicyRegistry.PolicyFields> = {}
  const skipped: Array<{ id: string; reason: string }> = []
  for (const [provider, entries] of providers) {
    for (const [key, model] of Object.entries(entries)) {
      if (!isRecord(model)) continue
      const id = typeof model.id === "string" ? model.id : key
      const fields = fieldsOf(provider, id, model)
      if (typeof fields === "string") {
        skipped.push({ id: provider ? `${provider}/${id}` : id, reason: fields })
        continue
      }
      models[id] = fields
    }
  }
  return Effect.succeed({ models, skipped })
}
