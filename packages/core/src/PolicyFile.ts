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
 * `catalog` names a models.dev-format catalog file (path relative to the
 * policy file) whose models are merged below the file's own `models`
 * (`ModelsDevCatalog.ts`).
 *
 * Keys of `models` are ids or id prefixes, matched like catalog ids
 * (`PolicyRegistry.keyMatches`). Unknown keys anywhere are rejected with
 * {@link InvalidInput} naming the key path and the file; impossible numbers
 * with {@link PolicyInvalid} naming the model, field, value and file.
 *
 * @since 0.1.0
 */
import { readFile, stat } from "node:fs/promises"
import { dirname, extname, resolve as resolvePath } from "node:path"
import { pathToFileURL } from "node:url"
import { Effect, Schema } from "effect"
import { toInvalidInput } from "./Decode.ts"
import { InvalidInput, PolicyInvalid } from "./Errors.ts"
import * as ModelId from "./ModelId.ts"
import * as ModelsDevCatalog from "./ModelsDevCatalog.ts"
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
  defaults: Schema.optionalKey(PolicyRegistry.PolicyFields),
  /** A models.dev-format catalog file, relative to the policy file. */
  catalog: Schema.optionalKey(Schema.String)
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
  if (depth === 1) return "models, defaults, catalog"
  return Object.keys(PolicyRegistry.PolicyFields.fields).join(", ")
}

/** Catalog models below the file's: a file entry for a catalog model changes only the fields it names. */
const mergeModels = (
  catalogModels: Readonly<Record<string, PolicyRegistry.PolicyFields>>,
  fileModels: Readonly<Record<string, PolicyRegistry.PolicyFields>>
): Record<string, PolicyRegistry.PolicyFields> => {
  const merged: Record<string, PolicyRegistry.PolicyFields> = {}
  for (const [key, fields] of Object.entries(catalogModels)) merged[ModelId.normalizeId(key)] = fields
  for (const [key, fields] of Object.entries(fileModels)) {
    const id = ModelId.normalizeId(key)
    merged[id] = { ...merged[id], ...fields }
  }
  return merged
}

/**
 * A registry from decoded file content: the catalog plus the file's
 * overrides, every affected policy validated.
 *
 * @category constructors
 */
export const toRegistry = (
  content: Omit<PolicyFileContent, "catalog">,
  source: string,
  catalogModels: Readonly<Record<string, PolicyRegistry.PolicyFields>> = {}
): Effect.Effect<PolicyRegistry.PolicyRegistry, PolicyInvalid> =>
  Effect.mapError(
    PolicyRegistry.make({
      models: mergeModels(catalogModels, content.models),
      ...(content.defaults ? { defaults: content.defaults } : {}),
      source
    }),
    (error) =>
      new PolicyInvalid({
        model: error.model,
        field: error.field,
        value: error.value,
        reason: `${error.reason} (in ${what(source)}${fromDefaults(content, error)})`
      })
  )

/**
 * Where a failing value came from when the file's `defaults` set it and the file's own entry for the model does
 * not: the defaults apply to every model, so the error names a catalog model the user never wrote (the first one
 * the defaults fail), and says so.
 */
const fromDefaults = (content: Omit<PolicyFileContent, "catalog">, error: PolicyInvalid): string => {
  const defaults = Object.keys(content.defaults ?? {})
  const own = Object.entries(content.models).find(([key]) => ModelId.normalizeId(key) === error.model)?.[1] ?? {}
  const named = defaults.filter((field) => error.field.split(/\s*\+\s*/).includes(field) && !(field in own))
  return named.length === 0
    ? ""
    : `; ${named.join(", ")} ${named.length === 1 ? "comes" : "come"} from the file's defaults, which apply to every model: ${error.model} is the first they fail`
}

/** Why a file cannot be read, in words (the system code in brackets), e.g. `file not found (ENOENT)`. */
const unreadable = (error: unknown): string => {
  const code = (error as { readonly code?: unknown } | null)?.code
  const words: Record<string, string> = {
    ENOENT: "file not found",
    ENOTDIR: "file not found (a part of the path is not a directory)",
    EISDIR: "is a directory, not a file",
    EACCES: "permission denied",
    EPERM: "permission denied"
  }
  return typeof code === "string" && code in words ? `${words[code]} (${code})` : String(error)
}

/** The file exists and is a regular file; else InvalidInput saying why in words. */
const checkReadable = (path: string, fail: (detail: string) => InvalidInput): Effect.Effect<void, InvalidInput> =>
  Effect.tryPromise({
    try: () => stat(path),
    catch: (error) => fail(`cannot read: ${unreadable(error)}`)
  }).pipe(
    Effect.flatMap((stats) =>
      stats.isDirectory()
        ? Effect.fail(fail(`cannot read: ${unreadable({ code: "EISDIR" })}`))
        : stats.isFile()
          ? Effect.void
          : Effect.fail(fail("cannot read: not a regular file"))
    )
  )

/** Reads a policy file or (`label` "model catalog") a catalog file's content. */
const readContent = (path: string, label = "policy file"): Effect.Effect<unknown, InvalidInput> => {
  const extension = extname(path).toLowerCase()
  const fail = (detail: string) => new InvalidInput({ what: `${label} ${path}`, path: "", detail })
  if (extension === ".json") {
    return Effect.tryPromise({
      try: () => readFile(path, "utf8"),
      catch: (error) => fail(`cannot read: ${unreadable(error)}`)
    }).pipe(
      Effect.flatMap((text) =>
        Effect.try({ try: () => JSON.parse(text) as unknown, catch: (error) => fail(`not JSON: ${String(error)}`) })
      )
    )
  }
  if ([".ts", ".mts", ".js", ".mjs"].includes(extension)) {
    return Effect.andThen(
      checkReadable(path, fail),
      Effect.tryPromise({
        try: () => import(pathToFileURL(resolvePath(path)).href) as Promise<Record<string, unknown>>,
        catch: (error) => fail(`cannot import: ${String(error)}`)
      }).pipe(
        Effect.flatMap((module) =>
          "default" in module ? Effect.succeed(module.default) : Effect.fail(fail("module has no default export"))
        )
      )
    )
  }
  return Effect.fail(fail(`unsupported extension ${JSON.stringify(extension)}; use .json, .ts or .js`))
}

/**
 * Loads a models.dev-format catalog file (JSON) into policy overrides.
 * Fails with {@link InvalidInput} when it cannot be read or is not such a
 * catalog.
 *
 * @category constructors
 */
export const loadCatalogFile = (path: string): Effect.Effect<ModelsDevCatalog.CatalogOverrides, InvalidInput> =>
  readContent(path, "model catalog").pipe(Effect.flatMap((input) => ModelsDevCatalog.toOverrides(input, path)))

/**
 * Loads a policy file (`.json`, or a `.ts` / `.js` module's default export)
 * into a registry of the built-in catalog plus the file's overrides; its
 * `catalog` file and `options.catalog` (a models.dev file, e.g. the CLI's
 * `--catalog`) are merged below the file's own `models`. Either path may be
 * absent: with neither, the result is the built-in catalog. Fails with
 * {@link InvalidInput} when a file is missing, malformed or has unknown
 * keys, and with {@link PolicyInvalid} when a resulting policy is
 * impossible.
 *
 * @category constructors
 */
export const loadPolicyFile = (
  path: string | undefined,
  options: { readonly catalog?: string | undefined } = {}
): Effect.Effect<PolicyRegistry.PolicyRegistry, PolicyInvalid | InvalidInput> =>
  Effect.gen(function* () {
    const content: PolicyFileContent =
      path === undefined ? { models: {} } : yield* decode(yield* readContent(path), path)
    const catalogs = [
      ...(content.catalog !== undefined && path !== undefined ? [resolvePath(dirname(path), content.catalog)] : []),
      ...(options.catalog !== undefined ? [options.catalog] : [])
    ]
    let catalogModels: Record<string, PolicyRegistry.PolicyFields> = {}
    for (const catalog of catalogs) catalogModels = { ...catalogModels, ...(yield* loadCatalogFile(catalog)).models }
    const { catalog: _catalog, ...rest } = content
    return yield* toRegistry(rest, path ?? options.catalog ?? "built-in catalog", catalogModels)
  })

/**
 * Promise form of {@link loadPolicyFile}; rejects with the typed error.
 *
 * @category constructors
 */
export const loadPolicyFilePromise = (
  path: string | undefined,
  options: { readonly catalog?: string | undefined } = {}
): Promise<PolicyRegistry.PolicyRegistry> =>
  Effect.runPromise(Effect.result(loadPolicyFile(path, options))).then((result) =>
    result._tag === "Success" ? result.success : Promise.reject(result.failure)
  )
