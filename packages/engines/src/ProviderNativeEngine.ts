/**
 * The provider-native engine: where the provider owns compaction, build
 * provider options instead of rewriting messages, and read back what the
 * provider did.
 *
 * - Anthropic context editing (`clear_tool_uses_20250919`,
 *   `clear_thinking_20251015`) and server compaction (`compact_20260112`) go
 *   out as `providerOptions.anthropic.contextManagement.edits` — the shape
 *   `@ai-sdk/anthropic` validates and maps to the request body's
 *   `context_management` (and the `context-management-2025-06-27` /
 *   `compact-2026-01-12` betas). Sources: Anthropic "Context editing" and
 *   "Compaction" docs; `@ai-sdk/anthropic` `anthropicLanguageModelOptions`.
 * - OpenAI Responses compaction goes out as
 *   `providerOptions.openai.contextManagement: [{ type: "compaction", compactThreshold }]`
 *   (`@ai-sdk/openai` maps it to `context_management[].compact_threshold`).
 * - {@link ProviderNativeEngine.readResponse} turns
 *   `providerMetadata.anthropic.contextManagement.appliedEdits`, Anthropic
 *   compaction text parts (`providerMetadata.anthropic.type === "compaction"`)
 *   and OpenAI `custom` parts of kind `openai.compaction` into `event` entries.
 *
 * Provider-native items are never sent to a different model: when the policy's
 * model (or provider) differs from the one that produced them, the engine
 * strips them and the `fallback` engine compacts locally from the full
 * transcript into its own checkpoint. While native items are usable, the view
 * starts at the latest compaction item (the provider ignores what precedes it:
 * Anthropic "all content blocks before the compaction block are ignored";
 * OpenAI "items before the compaction item can be dropped"), and the fallback
 * compacts only when a request would exceed the window outright.
 *
 * This module imports no AI SDK package: it builds plain objects.
 *
 * @since 0.1.0
 */
import { ContextEngine, EngineInput, Entry, type Message, type ModelPolicy } from "@context-engine/core"
import { Effect } from "effect"
import {
  type AnthropicSettings,
  anthropicContextManagement,
  type OpenAISettings,
  openaiContextManagement
} from "./NativeContextManagement.ts"

export {
  ANTHROPIC_MIN_COMPACTION_TRIGGER_TOKENS,
  type AnthropicSettings,
  anthropicContextManagement,
  type OpenAISettings,
  openaiContextManagement
} from "./NativeContextManagement.ts"

/**
 * The provider family whose native features a policy enables.
 *
 * @category models
 */
export type NativeProvider = "anthropic" | "openai"

/**
 * Options for {@link make}.
 *
 * @category models
 */
export interface Options {
  /** The local engine used for measurement, guard compaction and model-change fallback. */
  readonly fallback: ContextEngine.ContextEngine
  readonly anthropic?: AnthropicSettings
  readonly openai?: OpenAISettings
  /**
   * Which requests may carry native items: `same-model` (default; the brief's
   * rule "when the model changes, fall back") or `same-provider`.
   */
  readonly portability?: "same-model" | "same-provider"
}

/**
 * What the engine reads back from a response: the AI SDK result's
 * `providerMetadata` and generated `content` parts (or the stream parts
 * collected into that shape).
 *
 * @category models
 */
export interface NativeResponse {
  readonly providerMetadata?: Readonly<Record<string, unknown>> | undefined
  readonly content?: ReadonlyArray<{
    readonly type: string
    readonly kind?: string
    readonly text?: string
    readonly providerMetadata?: Readonly<Record<string, unknown>> | undefined
  }>
}

/**
 * A provider-native engine: a {@link ContextEngine.ContextEngine} plus option
 * building and response reading.
 *
 * @category models
 */
export interface ProviderNativeEngine extends ContextEngine.ContextEngine {
  readonly providerNative: true
  /** Provider options for the next request, keyed by provider (`{ anthropic: … }` / `{ openai: … }`); `undefined` when the policy enables nothing native. */
  readonly providerOptions: (input: ContextEngine.EngineInput) => Message.ProviderOptions | undefined
  /** Event entries describing what the provider did (applied edits, compaction items). */
  readonly readResponse: (
    input: ContextEngine.EngineInput,
    response: NativeResponse,
    ids: { readonly nextId: () => string; readonly timestamp: string }
  ) => ReadonlyArray<Entry.Entry>
  /** The entries the fallback engine sees for this input (native view or stripped history). */
  readonly viewEntries: (input: ContextEngine.EngineInput) => ReadonlyArray<Entry.Entry>
}

/**
 * Whether an engine is provider-native.
 *
 * @category guards
 */
export const isProviderNative = (engine: ContextEngine.ContextEngine): engine is ProviderNativeEngine =>
  (engine as Partial<ProviderNativeEngine>).providerNative === true

/**
 * The native provider a policy enables, from its `nativeCompaction` flags.
 *
 * @category utils
 */
export const nativeProvider = (policy: ModelPolicy.ModelPolicy): NativeProvider | undefined =>
  policy.nativeCompaction.anthropicContextEditing || policy.nativeCompaction.anthropicCompaction
    ? "anthropic"
    : policy.nativeCompaction.openaiResponsesCompaction
      ? "openai"
      : undefined

/** Event names this engine writes. @category constants */
export const EVENT_EDITS = "provider-native-edits"
/** @category constants */
export const EVENT_COMPACTION = "provider-native-compaction"

const isRecord = (u: unknown): u is Record<string, unknown> => typeof u === "object" && u !== null

/** The native provider of a content part, when it is a provider-native compaction item. */
const nativeItemProvider = (part: unknown): NativeProvider | undefined => {
  if (!isRecord(part)) return undefined
  const options = isRecord(part.providerOptions) ? part.providerOptions : undefined
  if (part.type === "text" && isRecord(options?.anthropic) && options.anthropic.type === "compaction")
    return "anthropic"
  if (part.type === "custom" && part.kind === "openai.compaction") return "openai"
  return undefined
}

const messageHasNativeItem = (message: Message.Message): NativeProvider | undefined =>
  typeof message.content === "string"
    ? undefined
    : (message.content as ReadonlyArray<unknown>).map(nativeItemProvider).find((provider) => provider !== undefined)

/**
 * Builds a provider-native engine around a local `fallback` engine.
 *
 * @category constructors
 */
export const make = (options: Options): ProviderNativeEngine => {
  const { fallback } = options
  const portability = options.portability ?? "same-model"

  /** The model that produced the native items (latest native event), if recorded. */
  const originOf = (entries: ReadonlyArray<Entry.Entry>): { provider?: string; model?: string } => {
    for (let index = entries.length - 1; index >= 0; index--) {
      const entry = entries[index]!
      if (entry.kind === "event" && (entry.event.name === EVENT_COMPACTION || entry.event.name === EVENT_EDITS)) {
        const data = isRecord(entry.event.data) ? entry.event.data : {}
        return {
          ...(typeof data.provider === "string" ? { provider: data.provider } : {}),
          ...(typeof data.model === "string" ? { model: data.model } : {})
        }
      }
    }
    return {}
  }

  const usable = (input: ContextEngine.EngineInput, itemProvider: NativeProvider): boolean => {
    if (nativeProvider(input.policy) !== itemProvider) return false
    const origin = originOf(input.entries)
    if (origin.provider !== undefined && origin.provider !== itemProvider) return false
    return portability === "same-provider" || origin.model === undefined || origin.model === input.policy.model
  }

  const strip = (entry: Entry.Entry): Entry.Entry | undefined => {
    if (entry.kind !== "message" || typeof entry.message.content === "string") return entry
    if (messageHasNativeItem(entry.message) === undefined) return entry
    const content = (entry.message.content as ReadonlyArray<unknown>).filter(
      (part) => nativeItemProvider(part) === undefined
    )
    if (content.length === 0) return undefined
    return { ...entry, message: { ...entry.message, content } as Message.Message }
  }

  const viewEntries = (input: ContextEngine.EngineInput): ReadonlyArray<Entry.Entry> => {
    const entries = input.entries
    let latest = -1
    let latestProvider: NativeProvider | undefined
    entries.forEach((entry, index) => {
      if (entry.kind !== "message") return
      const provider = messageHasNativeItem(entry.message)
      if (provider !== undefined) {
        latest = index
        latestProvider = provider
      }
    })
    if (latest === -1) return entries
    if (latestProvider === undefined || !usable(input, latestProvider)) {
      // Model or provider changed: never send native items; the fallback compacts locally.
      return entries.flatMap((entry) => {
        const stripped = strip(entry)
        return stripped === undefined ? [] : [stripped]
      })
    }
    const head = entries.slice(0, latest).filter((entry) => entry.kind === "message" && entry.message.role === "system")
    const tail = entries.slice(latest)
    const first = tail[0] as Entry.MessageEntry
    const bridge: ReadonlyArray<Entry.Entry> =
      latestProvider === "anthropic" && first.message.role !== "user"
        ? [
            Entry.make(
              {
                id: Entry.freshId(`${first.id}:native-bridge`, entries),
                parentId: head.at(-1)?.id ?? null,
                timestamp: first.timestamp
              },
              {
                kind: "message",
                message: {
                  role: "user",
                  content: [
                    { type: "text", text: "[Earlier conversation was compacted by the provider; its summary follows.]" }
                  ]
                }
              }
            )
          ]
        : []
    return [...head, ...bridge, ...tail]
  }

  const view = (input: ContextEngine.EngineInput): ContextEngine.EngineInput => {
    const entries = viewEntries(input)
    return entries === input.entries ? input : { ...input, entries }
  }

  const nativeActive = (input: ContextEngine.EngineInput): boolean => {
    const provider = nativeProvider(input.policy)
    return provider !== undefined && providerOptions(input) !== undefined
  }

  const providerOptions = (input: ContextEngine.EngineInput): Message.ProviderOptions | undefined => {
    const provider = nativeProvider(input.policy)
    if (provider === "anthropic") {
      const contextManagement = anthropicContextManagement(input.policy, options.anthropic)
      return contextManagement
        ? ({ anthropic: { contextManagement } } as unknown as Message.ProviderOptions)
        : undefined
    }
    if (provider === "openai") {
      const contextManagement = openaiContextManagement(input.policy, options.openai)
      return contextManagement ? ({ openai: { contextManagement } } as unknown as Message.ProviderOptions) : undefined
    }
    return undefined
  }

  const readResponse: ProviderNativeEngine["readResponse"] = (input, response, ids) => {
    const provider = nativeProvider(input.policy)
    if (provider === undefined) return []
    const entries: Array<Entry.Entry> = []
    let parentId = input.entries.at(-1)?.id ?? null
    const event = (name: string, data: Record<string, unknown>): void => {
      const id = ids.nextId()
      entries.push(
        Entry.make(
          { id, parentId, timestamp: ids.timestamp },
          {
            kind: "event",
            event: { name, data: { provider, model: input.policy.model, ...data } as Message.JsonValue }
          }
        )
      )
      parentId = id
    }
    const metadata = isRecord(response.providerMetadata?.[provider]) ? response.providerMetadata[provider] : undefined
    const contextManagement = isRecord(metadata?.contextManagement) ? metadata.contextManagement : undefined
    const applied = Array.isArray(contextManagement?.appliedEdits) ? contextManagement.appliedEdits : []
    if (applied.length > 0) event(EVENT_EDITS, { appliedEdits: applied as Message.JsonValue })
    for (const part of response.content ?? []) {
      const partMetadata = isRecord(part.providerMetadata?.[provider]) ? part.providerMetadata[provider] : undefined
      if (provider === "anthropic" && part.type === "text" && partMetadata?.type === "compaction") {
        event(EVENT_COMPACTION, { summary: part.text ?? "", signed: typeof partMetadata.signature === "string" })
      }
      if (provider === "openai" && part.type === "custom" && part.kind === "openai.compaction") {
        event(EVENT_COMPACTION, {
          itemId: typeof partMetadata?.itemId === "string" ? partMetadata.itemId : null,
          encrypted: true
        })
      }
    }
    return entries
  }

  const shouldCompact: ContextEngine.ContextEngine["shouldCompact"] = (input) =>
    Effect.map(fallback.shouldCompact(view(input)), (decision) => {
      if (!nativeActive(input) || !decision.compact) return decision
      // The provider compacts at its trigger; compact locally only when the request could not be sent at all.
      const overHardLimit = decision.measurement.headroomTokens < 0
      return overHardLimit ? decision : { ...decision, compact: false, reasons: [] }
    })

  // Validate before `view(input)` reads the entries (typed InvalidInput / PolicyInvalid, never a raw TypeError).
  return EngineInput.guard<ProviderNativeEngine>({
    specificationVersion: ContextEngine.SPECIFICATION_VERSION,
    name: `provider-native(${fallback.name})`,
    providerNative: true,
    providerOptions,
    readResponse,
    viewEntries,
    measure: (input) => fallback.measure(view(input)),
    shouldCompact,
    plan: (input) => fallback.plan(view(input)),
    compact: (input, plan) => fallback.compact(view(input), plan),
    validate: (input, result) => fallback.validate(view(input), result),
    assembleContext: (input) => fallback.assembleContext(view(input)),
    recordOutcome: (input, outcome) => fallback.recordOutcome(view(input), outcome)
  })
}
