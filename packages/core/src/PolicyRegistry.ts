/**
 * The model policy registry: turns a model id (or a partial override) into a
 * full, validated {@link ModelPolicy}.
 *
 * Facts (window, output limit, tokenizer …) come from `ModelCatalog.ts`;
 * tuning values not set explicitly are derived here (see {@link derive}).
 * Lookup is by exact id, then longest prefix on a `-` `_` `:` `@` boundary
 * (`claude-sonnet-4-5-20250929` → `claude-sonnet-4-5`), after stripping
 * provider prefixes (`anthropic/…`, `openai:…`, Bedrock `us.anthropic.…`;
 * see `ModelId.ts`).
 * Layers merge in this order, later wins: catalog facts, registry defaults,
 * registry model overrides (shorter key first), the caller's override.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as PolicyRegistry from "./PolicyRegistry.ts"
 *
 * const policy = Effect.runSync(PolicyRegistry.lookup("anthropic/claude-sonnet-4-5-20250929"))
 * policy.contextWindowTokens // 200000
 * ```
 *
 * @since 0.1.0
 */
import { Effect, Exit, Schema } from "effect"
import { decodeUnknown } from "./Decode.ts"
import { type InvalidInput, PolicyInvalid } from "./Errors.ts"
import * as ModelCatalog from "./ModelCatalog.ts"
import { candidateIds, keyMatches, matchLength, nearestIds, normalizeId } from "./ModelId.ts"
import { type ModelPolicy, ModelPolicy as ModelPolicySchema, TokenizerId } from "./ModelPolicy.ts"
import * as PolicyLimits from "./PolicyLimits.ts"
import { derive, FALLBACK_MAX_OUTPUT_TOKENS, GENERIC_FACTS } from "./PolicyLimits.ts"

/** A model the catalog does not know: generic facts, the fallback's output limit (build caps it at half a window set later, as the CLI does). */
const GENERIC_LAYERS: ReadonlyArray<PolicyFields> = [GENERIC_FACTS, { maxOutputTokens: FALLBACK_MAX_OUTPUT_TOKENS }]

export {
  /** @category utils */
  candidateIds,
  /** @category utils */
  keyMatches,
  /** @category utils */
  normalizeId
} from "./ModelId.ts"
export { derive } from "./PolicyLimits.ts"

// ---------------------------------------------------------------------------
// Overrides
// ---------------------------------------------------------------------------

const optionalNumber = Schema.optionalKey(Schema.Number)

/**
 * Every tunable field of a policy, all optional: what a policy file entry,
 * its `defaults`, or a caller's override may set. Numbers are checked by
 * {@link validate}, not by the schema, so that a bad number is reported as
 * {@link PolicyInvalid} with the field, value and reason.
 *
 * @category schemas
 */
export const PolicyFields = Schema.Struct({
  contextWindowTokens: optionalNumber,
  maxOutputTokens: optionalNumber,
  reserveTokens: optionalNumber,
  keepRecentTokens: optionalNumber,
  toolLoopReserveTokens: optionalNumber,
  safetyMarginTokens: optionalNumber,
  reasoning: Schema.optionalKey(Schema.Boolean),
  assistantPrefill: Schema.optionalKey(Schema.Boolean),
  maxInputTokens: optionalNumber,
  serverCompactionAtTokens: optionalNumber,
  maxRequestBodyBytes: optionalNumber,
  tokenizer: Schema.optionalKey(TokenizerId),
  promptCacheTtlMs: optionalNumber,
  nativeCompaction: Schema.optionalKey(
    Schema.Struct({
      anthropicContextEditing: Schema.optionalKey(Schema.Boolean),
      anthropicCompaction: Schema.optionalKey(Schema.Boolean),
      openaiResponsesCompaction: Schema.optionalKey(Schema.Boolean)
    })
  )
})
/** @category models */
export type PolicyFields = typeof PolicyFields.Type

/**
 * A partial policy with an optional model id: the input of {@link resolve}.
 *
 * @category schemas
 */
export const PolicyOverride = Schema.Struct({ model: Schema.optionalKey(Schema.String), ...PolicyFields.fields })
/** @category models */
export type PolicyOverride = typeof PolicyOverride.Type

/**
 * The model id is neither in the catalog nor in the registry's overrides.
 * `nearest` lists the closest known ids (edit distance).
 *
 * @category errors
 */
export class UnknownModel extends Schema.TaggedError<UnknownModel>()("UnknownModel", {
  model: Schema.String,
  nearest: Schema.Array(Schema.String)
}) {
  override get message(): string {
    return `Unknown model ${JSON.stringify(this.model)}; nearest known ids: ${this.nearest.join(", ")}. Add it to a policy file with contextWindowTokens and maxOutputTokens, or use PolicyRegistry.fallback`
  }
}

// ---------------------------------------------------------------------------
// Derivation and validation
// ---------------------------------------------------------------------------

const merge = (base: PolicyFields, next: PolicyFields): PolicyFields => ({
  ...base,
  ...next,
  ...(base.nativeCompaction || next.nativeCompaction
    ? { nativeCompaction: { ...base.nativeCompaction, ...next.nativeCompaction } }
    : {})
})

/**
 * Checks a complete policy: every number a non-negative integer within
 * bounds, and the relations that make a request possible. Fails with the
 * first {@link PolicyInvalid} (field, value, reason).
 *
 * @category validation
 */
export const validate = (policy: ModelPolicy): Effect.Effect<ModelPolicy, PolicyInvalid> => {
  const problem = PolicyLimits.check(policy)
  return problem ? Effect.fail(new PolicyInvalid({ model: policy.model, ...problem })) : Effect.succeed(policy)
}

/**
 * Decodes an unknown value as a complete {@link ModelPolicy} and validates
 * it: {@link InvalidInput} (with the path) for a wrong shape,
 * {@link PolicyInvalid} (with field, value, reason) for impossible numbers.
 *
 * @category validation
 */
export const decodePolicy = (input: unknown): Effect.Effect<ModelPolicy, InvalidInput | PolicyInvalid> =>
  Effect.flatMap(decodeUnknown(ModelPolicySchema, "model policy")(input), validate)

const lastLayerSetting = (layers: ReadonlyArray<PolicyFields>, field: keyof PolicyFields): number =>
  layers.findLastIndex((layer) => layer[field] !== undefined)

/**
 * Merges the layers (general first) into a validated policy. A window set by
 * a later layer than the output limit (an override of the window alone)
 * caps the inherited limit at half the window
 * (`PolicyLimits.outputLimitForWindow`); an output limit given beside the
 * window is taken as given and checked.
 */
const build = (model: string, layers: ReadonlyArray<PolicyFields>): Effect.Effect<ModelPolicy, PolicyInvalid> => {
  const fields = layers.reduce(merge, {})
  const numbers = PolicyLimits.checkNumbers(fields)
  if (numbers) return Effect.fail(new PolicyInvalid({ model, ...numbers }))
  const { contextWindowTokens, maxOutputTokens } = fields
  if (contextWindowTokens === undefined || maxOutputTokens === undefined) {
    const field = contextWindowTokens === undefined ? "contextWindowTokens" : "maxOutputTokens"
    return Effect.fail(
      new PolicyInvalid({ model, field, value: undefined, reason: "required for a model that is not in the registry" })
    )
  }
  const windowSetLater = lastLayerSetting(layers, "contextWindowTokens") > lastLayerSetting(layers, "maxOutputTokens")
  const output = windowSetLater
    ? PolicyLimits.outputLimitForWindow(contextWindowTokens, maxOutputTokens)
    : maxOutputTokens
  return validate(derive(model, { ...fields, contextWindowTokens, maxOutputTokens: output }))
}

// ---------------------------------------------------------------------------
// Registry
// ---------------------------------------------------------------------------

/**
 * A registry of model policies. Built by {@link make}; {@link builtin} holds
 * the catalog alone.
 *
 * @category models
 */
export interface PolicyRegistry {
  /** Known ids and prefixes: catalog ids, then override keys. */
  readonly ids: ReadonlyArray<string>
  /** Applied to every model, below model overrides. */
  readonly defaults: PolicyFields
  /** Model overrides by normalized id or prefix. */
  readonly models: ReadonlyMap<string, PolicyFields>
  /** Where the overrides came from (a file path), for error messages. */
  readonly source?: string
  /** Policy for a model id. */
  readonly lookup: (modelId: string) => Effect.Effect<ModelPolicy, UnknownModel | PolicyInvalid>
  /** Policy for a partial override; see {@link resolve}. */
  readonly resolve: (override: PolicyOverride) => Effect.Effect<ModelPolicy, UnknownModel | PolicyInvalid>
}

const catalogIndex: ReadonlyArray<readonly [string, ModelCatalog.CatalogEntry]> = ModelCatalog.entries.flatMap(
  (entry) => entry.ids.map((id) => [id, entry] as const)
)

const factsOf = (entry: ModelCatalog.CatalogEntry): PolicyFields => {
  const { ids: _ids, source: _source, ...facts } = entry
  return facts
}

/** The catalog entry for candidate ids: the longest matching catalog id and its entry. */
const catalogMatch = (
  candidates: ReadonlyArray<string>
): readonly [id: string, entry: ModelCatalog.CatalogEntry] | undefined => {
  let best: readonly [string, ModelCatalog.CatalogEntry] | undefined
  let bestLength = -1
  for (const [key, entry] of catalogIndex) {
    const length = matchLength(candidates, key)
    if (length > bestLength) {
      best = [key, entry]
      bestLength = length
    }
  }
  return best
}

/**
 * The built-in catalog id a model id resolves to: the id itself in its
 * normalized form when the catalog lists it, else the longest catalog id
 * that prefixes it on a `-` `_` `:` `@` boundary — a dated snapshot
 * `gpt-4o-2024-08-06` → `gpt-4o`, `anthropic/claude-sonnet-4.5` →
 * `claude-sonnet-4-5`; undefined when no catalog id matches. The entry whose
 * facts {@link lookup} uses (policy-file overrides apply on top).
 *
 * @category lookup
 */
export const catalogIdOf = (modelId: string): string | undefined => catalogMatch(candidateIds(modelId))?.[0]

/** Catalog facts (longest matching key) and matching overrides, general first; undefined when nothing matches. */
const layersFor = (
  modelId: string,
  defaults: PolicyFields,
  models: ReadonlyMap<string, PolicyFields>
): ReadonlyArray<PolicyFields> | undefined => {
  const candidates = candidateIds(modelId)
  const best = catalogMatch(candidates)?.[1]
  const overrides = [...models]
    .map(([key, fields]) => ({ length: matchLength(candidates, key), fields }))
    .filter((match) => match.length >= 0)
    .sort((a, b) => a.length - b.length)
    .map((match) => match.fields)
  if (!best && overrides.length === 0) return undefined
  return [...(best ? [factsOf(best)] : GENERIC_LAYERS), defaults, ...overrides]
}

/**
 * Builds a registry from the catalog plus model overrides (keyed by id or
 * prefix) and defaults. Each override is checked against every catalog model
 * it applies to, and a key the catalog does not know must set
 * `contextWindowTokens` (output limit as {@link resolve}); the first
 * impossible policy fails with {@link PolicyInvalid}.
 *
 * @category constructors
 */
export const make = (
  options: {
    readonly models?: Readonly<Record<string, PolicyFields>>
    readonly defaults?: PolicyFields
    readonly source?: string
  } = {}
): Effect.Effect<PolicyRegistry, PolicyInvalid> => {
  const registry = unchecked(options)
  // Every id is checked with all layers that apply to it, except an override
  // key that only prefixes catalog ids (e.g. `claude`): the catalog ids it
  // applies to are checked instead.
  const catalogKeys = catalogIndex.map(([key]) => key)
  const onlyPrefixesCatalog = (id: string): boolean =>
    !catalogKeys.some((key) => matchLength(candidateIds(id), key) >= 0) &&
    catalogKeys.some((key) => keyMatches(key, id))
  const toCheck = registry.ids.filter((id) => !onlyPrefixesCatalog(id))
  return Effect.as(
    Effect.forEach(toCheck, (id) => registry.lookup(id).pipe(Effect.catchTag("UnknownModel", Effect.die)), {
      discard: true
    }),
    registry
  )
}

const unchecked = (options: {
  readonly models?: Readonly<Record<string, PolicyFields>>
  readonly defaults?: PolicyFields
  readonly source?: string
}): PolicyRegistry => {
  const defaults = options.defaults ?? {}
  const models = new Map(Object.entries(options.models ?? {}).map(([key, fields]) => [normalizeId(key), fields]))
  const ids = [...new Set([...catalogIndex.map(([key]) => key), ...models.keys()])]
  const resolveOverride = (override: PolicyOverride): Effect.Effect<ModelPolicy, UnknownModel | PolicyInvalid> => {
    const { model = "custom", ...fields } = override
    const layers = layersFor(model, defaults, models)
    if (layers) return build(model, [...layers, fields])
    if (fields.contextWindowTokens !== undefined || fields.maxOutputTokens !== undefined)
      return build(model, [...GENERIC_LAYERS, defaults, fields])
    return Effect.fail(new UnknownModel({ model, nearest: nearestIds(model, ids) }))
  }
  return {
    ids,
    defaults,
    models,
    ...(options.source !== undefined ? { source: options.source } : {}),
    lookup: (modelId) => resolveOverride({ model: modelId }),
    resolve: resolveOverride
  }
}

/**
 * The catalog alone, without overrides. Every catalog entry is checked by the
 * test suite.
 *
 * @category constructors
 */
export const builtin: PolicyRegistry = unchecked({})

/**
 * Policy for a model id from `registry` (default {@link builtin}).
 *
 * @category lookup
 */
export const lookup = (
  modelId: string,
  registry: PolicyRegistry = builtin
): Effect.Effect<ModelPolicy, UnknownModel | PolicyInvalid> => registry.lookup(modelId)

/**
 * A full, validated policy from a partial override. With a known `model`
 * the override merges over the registry's policy for it; with an unknown or
 * absent `model` it must give `contextWindowTokens` and the rest is derived
 * with generic facts (`estimate:generic` tokenizer, no prompt cache, output
 * limit `PolicyLimits.FALLBACK_MAX_OUTPUT_TOKENS` unless given). A window
 * given without `maxOutputTokens` caps the output limit at half the window
 * (`PolicyLimits.outputLimitForWindow`), as the CLI's `--context-window`
 * does: `{ model: "claude-sonnet-4-5", contextWindowTokens: 8_000 }` and
 * `{ model: "my-model", contextWindowTokens: 2_000 }` give `maxOutputTokens`
 * (and `reserveTokens`) 4,000 and 1,000. An explicit `maxOutputTokens` above
 * the window is `PolicyInvalid`.
 *
 * @category lookup
 */
export const resolve = (
  override: PolicyOverride,
  registry: PolicyRegistry = builtin
): Effect.Effect<ModelPolicy, UnknownModel | PolicyInvalid> => registry.resolve(override)

const runSyncOrThrow = <A, E>(effect: Effect.Effect<A, E>): A => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) return exit.value
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  throw failure ? failure.error : exit.cause
}

/**
 * Synchronous {@link lookup}: returns the policy or throws the typed
 * {@link UnknownModel} / {@link PolicyInvalid}.
 *
 * @category lookup
 */
export const lookupSync = (modelId: string, registry: PolicyRegistry = builtin): ModelPolicy =>
  runSyncOrThrow(registry.lookup(modelId))

/**
 * Synchronous {@link resolve}: returns the policy or throws the typed error.
 *
 * @category lookup
 */
export const resolveSync = (override: PolicyOverride, registry: PolicyRegistry = builtin): ModelPolicy =>
  runSyncOrThrow(registry.resolve(override))

/**
 * The generic policy for a model nobody described, for callers that opt in
 * instead of handling {@link UnknownModel}: a 32,768-token window and a
 * 4,096-token output limit unless given. 32,768 is the native window of the
 * smallest current open-weight families (Qwen3, Mistral 7B v0.3 model
 * cards); a larger real window only costs earlier compaction, and the
 * overflow path learns a smaller one.
 *
 * @category constructors
 */
export const fallback = (model: string, facts: PolicyFields = {}): Effect.Effect<ModelPolicy, PolicyInvalid> =>
  build(model, [...GENERIC_LAYERS, { contextWindowTokens: PolicyLimits.FALLBACK_CONTEXT_WINDOW_TOKENS }, facts])

/**
 * {@link lookup}, or {@link fallback} when the model is unknown.
 *
 * @category lookup
 */
export const lookupOrFallback = (
  modelId: string,
  registry: PolicyRegistry = builtin
): Effect.Effect<ModelPolicy, PolicyInvalid> =>
  registry.lookup(modelId).pipe(Effect.catchTag("UnknownModel", () => fallback(modelId)))
