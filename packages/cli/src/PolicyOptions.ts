/**
 * The policy flags every command shares (`--model`, `--context-window`,
 * `--reserve`, `--keep-recent`, `--policy`, `--catalog`,
 * `--allow-unknown-model`) and the one function that turns them into a
 * model policy, so `inspect`, `compact`, `replay` and `report` measure
 * against the same budget.
 *
 * Resolution: the registry is the built-in catalog, plus `--policy FILE`
 * (the policy-file format `PolicyFile.ts` reads) and `--catalog FILE` (a
 * models.dev catalog). The model id is `--model`, else the one the
 * transcript records, else {@link DEFAULT_MODEL}. The numeric flags override
 * the registry's policy. An unknown `--model` fails with `UnknownModel`
 * naming the closest known ids, unless `--allow-unknown-model` or
 * `--context-window` is given; an unknown model recorded in the transcript
 * falls back to the generic 32,768-token policy with a warning.
 *
 * @since 0.2.0
 */
import { Entry, ModelId, type ModelPolicy, PolicyLimits, PolicyRegistry } from "@context-engine/core"
import { PolicyFile } from "@context-engine/core/node"
import { type Command, InvalidArgumentError } from "commander"
import { Effect, Exit } from "effect"

/**
 * The model assumed when neither `--model` nor the transcript names one:
 * `claude-sonnet-4-5` (200,000-token window), the model family of most
 * transcripts in the shared corpus.
 *
 * @category constants
 */
export const DEFAULT_MODEL = "claude-sonnet-4-5"

/**
 * The shared flags, as commander parses them.
 *
 * @category models
 */
export interface PolicyOptions {
  readonly model?: string | undefined
  /** Context window in tokens (overrides the model's). */
  readonly contextWindow?: number | undefined
  /** Output reserve in tokens. */
  readonly reserve?: number | undefined
  /** Tokens kept verbatim after a compaction. */
  readonly keepRecent?: number | undefined
  /** A policy file (JSON / .ts / .js). */
  readonly policy?: string | undefined
  /** A models.dev-format catalog file. */
  readonly catalog?: string | undefined
  readonly allowUnknownModel?: boolean | undefined
}

/**
 * A resolved policy and where its model id came from.
 *
 * @category models
 */
export interface ResolvedPolicy {
  readonly policy: ModelPolicy.ModelPolicy
  readonly modelId: string
  readonly source: "flag" | "transcript" | "default"
  /** False when the registry did not know the model and the generic fallback was used. */
  readonly known: boolean
  /** The built-in catalog entry the id resolved to (`PolicyRegistry.catalogIdOf`), null when none matched. */
  readonly catalogId: string | null
  /** Lines to show the user (e.g. the fallback used for an unknown recorded model). */
  readonly warnings: ReadonlyArray<string>
}

const tokens = (value: string): number => {
  const match = /^(\d+(?:\.\d+)?)([kKmM]?)$/.exec(value.trim().replaceAll(",", "").replaceAll("_", ""))
  if (!match)
    throw new InvalidArgumentError(`expected a token count like 32000, 32k or 1m, got ${JSON.stringify(value)}`)
  const unit = match[2]?.toLowerCase()
  const count = Math.round(Number(match[1]) * (unit === "k" ? 1_000 : unit === "m" ? 1_000_000 : 1))
  if (!Number.isSafeInteger(count) || count <= 0)
    throw new InvalidArgumentError(`expected a positive token count, got ${JSON.stringify(value)}`)
  return count
}

/**
 * Adds the shared flags to a command.
 *
 * @category commands
 */
export const register = (command: Command): Command =>
  command
    .option(
      "-m, --model <id>",
      "model whose window, reserve and tokenizer to use (default: the model the transcript records)"
    )
    .option(
      "--context-window <tokens>",
      "context window in tokens, e.g. 32000, 32k, 1m (overrides the model's)",
      tokens
    )
    .option("--reserve <tokens>", "tokens reserved for the next response", tokens)
    .option("--keep-recent <tokens>", "tokens kept verbatim after a compaction", tokens)
    .option("--policy <file>", "policy file (JSON, .ts or .js) with per-model overrides")
    .option("--catalog <file>", "models.dev-format model catalog to refresh or extend the built-in one")
    .option("--allow-unknown-model", "use the generic 32,768-token policy for a --model the catalog does not know")

/**
 * The parts a provider appends to a model id to name a snapshot of the same
 * model: dates (`20250929` Anthropic and Vertex `@20250929`, `2024-08-06`
 * OpenAI, `0613` older OpenAI, `2407` Mistral), `latest` aliases and
 * Bedrock's `v1:0` version. Any other part (`gpt-5-nonexistent`,
 * `gpt-4o-typo`, `qwen3:8b`) may name another model with another window.
 */
const SNAPSHOT_PART = /^(?:\d+|latest|v\d+)$/

/** Whether `modelId` is its catalog entry's id, or that id plus snapshot parts only ({@link SNAPSHOT_PART}). */
const isSnapshotOf = (modelId: string, catalogId: string | null): boolean => {
  if (catalogId === null) return true
  const suffix = ModelId.normalizeId(modelId).slice(catalogId.length + 1)
  return suffix === "" || suffix.split(/[-_:@]/).every((part) => SNAPSHOT_PART.test(part))
}

/** Whether a policy-file override names the id more closely than its catalog entry does (the file then sets it). */
const overridden = (registry: PolicyRegistry.PolicyRegistry, modelId: string, catalogId: string | null): boolean =>
  [...registry.models.keys()].some(
    (key) => key.length > (catalogId?.length ?? 0) && ModelId.keyMatches(ModelId.normalizeId(modelId), key)
  )

const failureOf = <A, E>(exit: Exit.Exit<A, E>): E | undefined => {
  if (Exit.isSuccess(exit)) return undefined
  const reason = exit.cause.reasons.find((candidate) => candidate._tag === "Fail")
  return reason?._tag === "Fail" ? reason.error : undefined
}

/**
 * Resolves the policy for the flags and the transcript's recorded model.
 * Rejects with `UnknownModel` (an unknown `--model` without
 * `--allow-unknown-model` / `--context-window`), `PolicyInvalid` (impossible
 * numbers) or `InvalidInput` (a policy or catalog file).
 *
 * @category constructors
 */
export const resolve = async (options: PolicyOptions, recorded: string | undefined): Promise<ResolvedPolicy> => {
  const registry =
    options.policy !== undefined || options.catalog !== undefined
      ? await PolicyFile.loadPolicyFilePromise(options.policy, { catalog: options.catalog })
      : PolicyRegistry.builtin
  const modelId = options.model ?? recorded ?? DEFAULT_MODEL
  const source = options.model !== undefined ? "flag" : recorded !== undefined ? "transcript" : "default"
  const lookup = Effect.runSyncExit(registry.lookup(modelId))
  const unknown = failureOf(lookup)
  if (unknown?._tag === "PolicyInvalid") throw unknown
  const known = unknown === undefined
  if (!known && source === "flag" && options.allowUnknownModel !== true && options.contextWindow === undefined)
    throw unknown
  const warnings: Array<string> = []
  const window = options.contextWindow
  const base = Exit.isSuccess(lookup)
    ? lookup.value
    : Effect.runSync(PolicyRegistry.fallback(modelId, window !== undefined ? { contextWindowTokens: window } : {}))
  if (!known && window === undefined)
    warnings.push(
      `model ${JSON.stringify(modelId)} is not in the catalog; using the generic ${base.contextWindowTokens.toLocaleString("en-US")}-token window (set it with --context-window, --policy or --catalog)`
    )
  if (source === "default" && window === undefined)
    warnings.push(
      `the transcript names no model: assuming ${modelId} (${base.contextWindowTokens.toLocaleString("en-US")}-token window, its tokenizer); pass --model or --context-window for yours`
    )
  const override: Record<string, unknown> = {
    model: modelId,
    contextWindowTokens: window ?? base.contextWindowTokens,
    // a window given by the user caps the model's output limit at half of it, as the library's resolve does
    maxOutputTokens:
      window === undefined ? base.maxOutputTokens : PolicyLimits.outputLimitForWindow(window, base.maxOutputTokens),
    reasoning: base.reasoning,
    tokenizer: base.tokenizer,
    promptCacheTtlMs: base.promptCacheTtlMs,
    nativeCompaction: base.nativeCompaction,
    ...(window === undefined
      ? { toolLoopReserveTokens: base.toolLoopReserveTokens, safetyMarginTokens: base.safetyMarginTokens }
      : {}),
    ...(window === undefined && options.reserve === undefined ? { reserveTokens: base.reserveTokens } : {}),
    ...(options.reserve !== undefined ? { reserveTokens: options.reserve } : {}),
    ...(window === undefined && options.reserve === undefined && options.keepRecent === undefined
      ? { keepRecentTokens: base.keepRecentTokens }
      : {}),
    ...(options.keepRecent !== undefined ? { keepRecentTokens: options.keepRecent } : {})
  }
  const catalogId = PolicyRegistry.catalogIdOf(modelId) ?? null
  if (known && window === undefined && !overridden(registry, modelId, catalogId) && !isSnapshotOf(modelId, catalogId))
    warnings.push(
      `model ${JSON.stringify(modelId)} is not in the catalog; it extends the id of catalog entry ${catalogId}, whose ${base.contextWindowTokens.toLocaleString("en-US")}-token window is used (if it is another model, set its window with --context-window, --policy or --catalog)`
    )
  const checked = Effect.runSyncExit(
    PolicyRegistry.validate(PolicyRegistry.derive(modelId, override as Parameters<typeof PolicyRegistry.derive>[1]))
  )
  if (Exit.isFailure(checked)) throw failureOf(checked)
  return {
    policy: checked.value,
    modelId,
    source,
    known,
    catalogId,
    warnings
  }
}

/**
 * The header's note on which catalog entry a model id resolved to, when that
 * entry's id is not the id given (a dated snapshot, a typo past a boundary, a
 * provider prefix): `, catalog entry gpt-4o`; empty otherwise.
 *
 * @category rendering
 */
export const catalogNote = (model: { readonly id: string; readonly catalogId: string | null }): string =>
  model.catalogId !== null && model.catalogId !== model.id ? `, catalog entry ${model.catalogId}` : ""

/**
 * The model as the `compact` and `replay` headers and the `report` page name
 * it: `gpt-4o-2024-08-06 (flag, catalog entry gpt-4o)` — the id, where it
 * came from, and {@link catalogNote}.
 *
 * @category rendering
 */
export const modelLabel = (model: {
  readonly id: string
  readonly source: string
  readonly catalogId: string | null
}): string => `${model.id} (${model.source}${catalogNote(model)})`

/**
 * The model id recorded in a transcript (the last assistant `meta.model`,
 * else a `session.start` / `model.change` event's `modelId`).
 *
 * @category utils
 */
export const recordedModel = (entries: ReadonlyArray<Entry.Entry>): string | undefined => {
  for (let index = entries.length - 1; index >= 0; index--) {
    const entry = entries[index]!
    if (entry.kind === "message" && entry.message.role === "assistant" && typeof entry.meta?.model === "string")
      return entry.meta.model
    if (
      entry.kind === "event" &&
      (entry.event.name === "model.change" || entry.event.name === Entry.SESSION_START_EVENT)
    ) {
      const data = entry.event.data as { readonly modelId?: unknown } | null | undefined
      if (typeof data?.modelId === "string") return data.modelId
    }
  }
  return undefined
}
