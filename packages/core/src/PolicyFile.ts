/**
 * User policy files: per-model overrides merged over the built-in catalog.
 *
 * A policy file is JSON, or a `.ts` / `.js` module whose default export is
 * the same object:
 *
 * ```json
 * {
 *   "defaults": { "safetyMarginTokens": 4000 },
 *   "models": {
 *     "claude-sonnet-4-5": { "contextWindowTokens": 1000000 },
 *     "my-local-model": { "contextWindowTokens": 32768, "maxOutputTokens": 4096 }
 *   }
 * }
 * ```
 *
 * Keys of `models` are ids or id prefixes, matched like catalog ids
 * (`PolicyRegistry.keyMatches`). Unknown keys anywhere are rejected with
 * {@link InvalidInput} naming the key path and the file; impossible numbers
 * with {@link PolicyInvalid} naming the model, field, value and file.
 *
 * @since 0.1.0
 */
import { readFile } from "node:fs/promises"
import { extname, resolve as resolvePath } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Layer, Schema } from "effect"
import { toInvalidInput } from "./Decode.ts"
import { InvalidInput, PolicyInvalid } from "./Errors.ts"
import * as PolicyRegistry from "./PolicyRegistry.ts"

/**
 * The content of a policy file.
 *
 * @category schemas
 */
export const PolicyFileContent = Schema.Struct({
  /** Overrides by model id or id prefix. */
  models: Schema.Record(Schema.String, PolicyRegistry.PolicyFields),
  /** Applied to every model, below the `models` entries. */
  defaults: Schema.optionalKey(PolicyRegistry.PolicyFields)
})
/** @category models */
export type PolicyFileContent = typeof PolicyFileContent.Type

const what = (source: string): string => `policy file ${source}`

/**
 * Decodes a policy file's content, rejecting unknown keys.
 *
 * @category decoding
 */
export const decode = (input: unknown, source: string): Effect.Effect<PolicyFileContent, InvalidInput> =>
  Effect.mapError(Schema.decodeUnknownEffect(PolicyFileContent)(input, { onExcessProperty: "error" }), (error) => {
    const invalid = toInvalidInput(what(source), error.issue)
    if (!invalid.detail.includes("excess property")) return invalid
    const key = invalid.path.split(".").at(-1) ?? invalid.path
    return new InvalidInput({
      what: invalid.what,
      path: invalid.path,
      detail: `unknown key ${JSON.stringify(key)}; known keys: ${knownKeys(invalid.path)}`
    })
  })

const knownKeys = (path: string): string => {
  const depth = path.split(".").length
  if (path.includes("nativeCompaction."))
    return "anthropicContextEditing, anthropicCompaction, openaiResponsesCompaction"
  if (depth === 1) return "models, defaults"
  return Object.keys(PolicyRegistry.PolicyFields.fields).join(", ")
}

/**
 * A registry from decoded file content: the catalog plus the file's
 * overrides, every affected policy validated.
 *
 * @category constructors
 */
export const toRegistry = (
  content: PolicyFileContent,
  source: string
): Effect.Effect<PolicyRegistry.PolicyRegistry, PolicyInvalid> =>
  Effect.mapError(
    PolicyRegistry.make({
      models: content.models,
      ...(content.defaults ? { defaults: content.defaults } : {}),
      source
    }),
    (error) =>
      new PolicyInvalid({
        model: error.model,
        field: error.field,
        value: error.value,
        reason: `${error.reason} (in ${what(source)})`
      })
  )

const readContent = (path: string): Effect.Effect<unknown, InvalidInput> => {
  const extension = extname(path).toLowerCase()
  const fail = (detail: string) => new InvalidInput({ what: what(path), path: "", detail })
  if (extension === ".json") {
    return Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (error) => fail(`cannot read: ${String(error)}`)
    }).pipe(
      Effect.flatMap((text) =>
        Effect.try({ try: () => JSON.parse(text) as unknown, catch: (error) => fail(`not JSON: ${String(error)}`) })
      )
    )
  }
  if ([".ts", ".mts", ".js", ".mjs"].includes(extension)) {
    return Effect.tryPromise({
      try: () => import(pathToFileURL(resolvePath(path)).href) as Promise<Record<string, unknown>>,
      catch: (error) => fail(`cannot import: ${String(error)}`)
    }).pipe(
      Effect.flatMap((module) =>
        "default" in module ? Effect.succeed(module.default) : Effect.fail(fail("module has no default export"))
      )
    )
  }
  return Effect.fail(fail(`unsupported extension ${JSON.stringify(extension)}; use .json, .ts or .js`))
}

/**
 * Loads a policy file (`.json`, or a `.ts` / `.js` module's default export)
 * into a registry of the built-in catalog plus the file's overrides.
 * Fails with {@link InvalidInput} when the file is missing, malformed or has
 * unknown keys, and with {@link PolicyInvalid} when a resulting policy is
 * impossible.
 *
 * @category constructors
 */
export const loadPolicyFile = (
  path: string
): Effect.Effect<PolicyRegistry.PolicyRegistry, PolicyInvalid | InvalidInput> =>
  readContent(path).pipe(
    Effect.flatMap((input) => decode(input, path)),
    Effect.flatMap((content) => toRegistry(content, path))
  )

/**
 * Promise form of {@link loadPolicyFile}; rejects with the typed error.
 *
 * @category constructors
 */
export const loadPolicyFilePromise = (path: string): Promise<PolicyRegistry.PolicyRegistry> =>
  Effect.runPromise(Effect.result(loadPolicyFile(path))).then((result) =>
    result._tag === "Success" ? result.success : Promise.reject(result.failure)
  )

/**
 * Provides the registry of a policy file as the `PolicyRegistryService`.
 *
 * @category layers
 */
export const layer = (path: string): Layer.Layer<PolicyRegistry.PolicyRegistryService, PolicyInvalid | InvalidInput> =>
  Layer.effect(PolicyRegistry.PolicyRegistryService, loadPolicyFile(path))
