/**
 * The measurer: counts a view's tokens per category with a {@link Tokenizer},
 * caching each message's count by content hash so a step re-counts only what
 * is new. Strategies and engines measure through this interface.
 *
 * @since 0.1.0
 */
import { Context, Effect, Layer } from "effect"
import type { Budget } from "./Budget.ts"
import * as ContentHash from "./ContentHash.ts"
import type { ContextView, ItemSource, ToolDefinition } from "./ContextView.ts"
import * as IdentitySlots from "./IdentitySlots.ts"
import {
  type Category,
  type CategoryCounts,
  categories,
  fromCounts,
  type Measurement,
  zeroCounts
} from "./Measurement.ts"
import {
  anthropicToolUseSystemPromptTokens,
  defaultMediaFamily,
  type Options,
  toolFramingTokens
} from "./MeasurerOptions.ts"
import type { Message } from "./Message.ts"
import * as MessageSeal from "./MessageSeal.ts"
import * as MessageTokens from "./MessageTokens.ts"
import type { ModelPolicy } from "./ModelPolicy.ts"
import * as ReasoningTokens from "./ReasoningTokens.ts"
import { type Tokenizer, TokenizerService } from "./Tokenizer.ts"
import * as Tokenizers from "./Tokenizers.ts"
import { type Anchor, anchoredPrefix, locate as locateAnchor, minRatio, noteLocalCounts } from "./UsageScale.ts"
import * as ViewPrefix from "./ViewPrefix.ts"

export { anthropicToolUseSystemPromptTokens, type Options, toolFramingTokens } from "./MeasurerOptions.ts"
export { type Anchor, anchorFor, prefixFingerprint } from "./UsageScale.ts"

/**
 * Counts one message, by category. `source` decides whether text counts as
 * `checkpoint` / `memory` rather than user or assistant text; `position`
 * (default `current`) whether its reasoning is in the current tool loop or a
 * prior turn (`ReasoningTokens`).
 *
 * @category models
 */
export type MessageCounter = (
  message: Message,
  source?: ItemSource,
  position?: ReasoningTokens.Position
) => Partial<Record<Category, number>>

/** A measurer bound to one tokenizer. @category models */
export interface Measurer {
  readonly tokenizer: Tokenizer
  /** Tokens of one message by category, its per-message framing under `framing`. */
  readonly countMessage: MessageCounter
  /** Total tokens of one message (`position` as in {@link MessageCounter}). */
  readonly messageTokens: (message: Message, source?: ItemSource, position?: ReasoningTokens.Position) => number
  /** Tokens of the tool schemas (name + description + JSON schema of each tool). */
  readonly toolSchemaTokens: (tools: ReadonlyArray<ToolDefinition>) => number
  /**
   * Measures a view against a budget. `reservedOutputTokens` is reported in
   * the `reservedOutput` category; `anchor` switches to anchored measurement.
   */
  readonly measure: (
    view: ContextView,
    options?: {
      readonly budget?: Budget
      readonly anchor?: Anchor
    }
  ) => Measurement
}

/** @category models */
export type { CategoryCounts }

/**
 * A measurer with a count cache.
 *
 * @category models
 */
export interface CachedMeasurer extends Measurer {
  /** Entries in the content-hash cache. */
  readonly cacheSize: () => number
  /** Empties the caches (counts stay the same; they are only recomputed). */
  readonly clearCache: () => void
  /**
   * A measurer sharing this one's caches that counts the messages `estimated`
   * selects with `estimator` (e.g. `Estimator.charsPerFour`) unless their
   * exact count is already cached (a text the tokenizer already counted,
   * `Tokenizer.knownCount`, is exact too); every other message exactly. Its
   * `measure` reports `method: "estimate"` (with a note) when an estimate
   * went into the count. For a cold compaction that needs exact counts only
   * near the cut (the engine kernel's estimate-first path); estimates are
   * never stored in the exact caches.
   */
  readonly withEstimates?: (estimator: Tokenizer, estimated: (message: Message) => boolean) => CachedMeasurer
}

/**
 * Builds a {@link Measurer} on a tokenizer.
 *
 * - Each message is counted part by part (text with the tokenizer, tool-call
 *   name + id + full JSON arguments of every call, reasoning text and
 *   signatures, images by pixels) plus per-message framing; see
 *   `MessageTokens.ts`.
 * - Counts are cached by message identity and by content hash: re-measuring
 *   a view after appending one message tokenizes only that message. The
 *   identity fast path is checked against a shallow fingerprint (content,
 *   parts and their text / input / output), so common in-place edits are
 *   re-counted (a sealed message, `MessageSeal`, is never checked: it cannot
 *   change); messages are otherwise treated as immutable values (DESIGN.md
 *   invariant). The content-hash path makes equal copies share a count.
 * - `measure` with a `budget` reports `reservedOutput`, `budgetTokens`
 *   (`inputBudgetTokens`) and `headroomTokens`; with an `anchor` whose
 *   `lastEntryId` is in the view, `inputTokens = anchor.inputTokens + count
 *   of the items after it` and `method: "anchored"` (the counted categories
 *   of the anchored prefix are scaled to the reported number, so the
 *   categories still add up to `inputTokens`). `anchor.inputTokens` must be
 *   the request's whole input, cached tokens included (Anthropic:
 *   `input_tokens + cache_creation_input_tokens + cache_read_input_tokens`).
 *   An anchor whose entry is no longer in the view is ignored (and noted);
 *   drop the anchor after editing items at or before its entry.
 *
 * @example
 * ```ts
 * import { ContextView, Measurer, Tokenizers } from "@context-engine/core"
 * const measurer = Measurer.make(Tokenizers.get("o200k_base"))
 * const view = ContextView.fromMessages([{ role: "user", content: "hello" }])
 * measurer.measure(view).inputTokens
 * ```
 *
 * @category constructors
 */
export const make = (tokenizer: Tokenizer, options: Options = {}): CachedMeasurer => {
  const mediaFamily = options.mediaFamily ?? defaultMediaFamily(tokenizer)
  const replyPriming = options.replyPrimingTokens ?? MessageTokens.replyPrimingTokens
  const toolUseSystemPrompt =
    options.toolUseSystemPromptTokens ?? (mediaFamily === "anthropic" ? anthropicToolUseSystemPromptTokens : 0)
  const useCache = options.cache ?? true
  const maxEntries = options.maxCacheEntries ?? 100_000
  const reasoningRule = options.reasoningRule ?? ReasoningTokens.ruleFor(mediaFamily)
  const countOptions: MessageTokens.Options = {
    tokenizer,
    mediaFamily,
    reasoningRule,
    ...(options.messageFramingTokens !== undefined ? { messageFramingTokens: options.messageFramingTokens } : {})
  }
  const priorOptions: MessageTokens.Options = { ...countOptions, reasoningPosition: "prior" }

  let byIdentity = IdentitySlots.make<IdentitySlots.Kept<MessageTokens.MessageCount>>()
  const byContent = new Map<string, MessageTokens.MessageCount>()
  let toolsByIdentity = new WeakMap<
    object,
    { tokens: number; name: string; description: string | undefined; inputSchema: unknown }
  >()

  // Cumulative counts of the last views measured (the derived view and the repaired one sent).
  const memo = ViewPrefix.makeSums(2, ViewPrefix.shallowStamps)

  const remember = (key: string, value: MessageTokens.MessageCount): void => {
    if (byContent.size >= maxEntries) {
      const oldest = byContent.keys().next()
      if (!oldest.done) byContent.delete(oldest.value)
    }
    byContent.set(key, value)
  }

  const isPriorCount = (message: Message, position: ReasoningTokens.Position): boolean =>
    position === "prior" && reasoningRule === "current-tool-loop" && ReasoningTokens.hasReasoning(message)
  type Counting = { readonly current: MessageTokens.Options; readonly prior: MessageTokens.Options }
  // A count's cache slot per source (prior-turn counts apart) and options; the exact and estimating counts share it.
  const slotOf = (source: ItemSource, prior: boolean): string => (prior ? `${source}|prior` : source)
  const countingOf = (message: Message, source: ItemSource, position: ReasoningTokens.Position, of: Counting) => {
    const prior = isPriorCount(message, position)
    return { prior, slot: slotOf(source, prior), options: prior ? of.prior : of.current }
  }
  const exactOptions = { current: countOptions, prior: priorOptions }

  /** `prior`: the message sits before the current tool loop (its reasoning may be stripped, see `ReasoningTokens`). */
  const countItem = (
    message: Message,
    source: ItemSource = "transcript",
    position: ReasoningTokens.Position = "current"
  ): MessageTokens.MessageCount => {
    const { slot, options: counting } = countingOf(message, source, position, exactOptions)
    if (!useCache) return MessageTokens.count(message, source, counting)
    const hit = IdentitySlots.reuse(byIdentity.get(message, slot), message)
    if (hit !== undefined) return hit
    // A sealed message cannot change: its hash is the one the view's prefix fingerprint takes too (memoised by
    // identity, `ViewPrefix.messageHash`), so a new message is serialized and hashed once per step, not twice.
    const key = `${slot}|${MessageSeal.isSealed(message) ? ViewPrefix.messageHash(message) : ContentHash.hash(message)}`
    let result = byContent.get(key)
    if (result === undefined) {
      result = MessageTokens.count(message, source, counting)
      remember(key, result)
    }
    byIdentity.set(message, slot, IdentitySlots.keep(message, result))
    return result
  }

  const toolTokens = (tool: ToolDefinition): number => {
    const cached = useCache ? toolsByIdentity.get(tool) : undefined
    if (
      cached !== undefined &&
      cached.name === tool.name &&
      cached.description === tool.description &&
      cached.inputSchema === tool.inputSchema
    ) {
      return cached.tokens
    }
    const text = MessageTokens.jsonText({
      name: tool.name,
      description: tool.description,
      parameters: tool.inputSchema
    })
    const key = `tool|${ContentHash.hash(text)}`
    let tokens = useCache ? byContent.get(key)?.totalTokens : undefined
    if (tokens === undefined) {
      tokens = tokenizer.count(text) + toolFramingTokens.perTool
      if (useCache) remember(key, { byCategory: {}, totalTokens: tokens, unknownImages: 0, estimatedFiles: 0 })
    }
    if (useCache) {
      toolsByIdentity.set(tool, {
        tokens,
        name: tool.name,
        description: tool.description,
        inputSchema: tool.inputSchema
      })
    }
    return tokens
  }

  const toolSchemaTokens = (tools: ReadonlyArray<ToolDefinition>): number => {
    if (tools.length === 0) return 0
    let tokens = toolFramingTokens.perRequest + toolUseSystemPrompt
    for (const tool of tools) tokens += toolTokens(tool)
    return tokens
  }

  type Sums = ReturnType<typeof ViewPrefix.makeSums<ViewPrefix.Shape>>
  const measureWith = (count: typeof countItem, sumsOf: () => Sums, estimated?: () => number): Measurer["measure"] => {
    const measureView: Measurer["measure"] = (view, measureOptions = {}) => {
      const { budget, anchor } = measureOptions
      const located = locateAnchor(view, anchor)
      const anchorIndex = located.index
      const loopStart =
        reasoningRule === "current-tool-loop" ? ReasoningTokens.currentLoopStart(view.items, (item) => item.message) : 0
      const sums = sumsOf()(view.items, loopStart, (item, prior) =>
        count(item.message, item.source, prior ? "prior" : "current")
      )
      const end = view.items.length
      const prefixVector = sums.categories(anchorIndex + 1)
      const totalVector = sums.categories(end)
      const prefix = zeroCounts()
      const suffix = zeroCounts()
      categories.forEach((category, index) => {
        prefix[category] = prefixVector[index]!
        suffix[category] = totalVector[index]! - prefixVector[index]!
      })
      const unknownImages = sums.unknownImages(end)
      const estimatedFiles = sums.estimatedFiles(end)
      prefix.toolSchemas += toolSchemaTokens(view.tools)
      prefix.framing += replyPriming
      const inputCategories = categories.filter((category) => category !== "reservedOutput")
      const byCategory = zeroCounts()
      const weights = inputCategories.map((category) => prefix[category])
      const anchored =
        anchorIndex >= 0 ? anchoredPrefix(weights, anchor!.inputTokens, minRatio(tokenizer.method)) : undefined
      inputCategories.forEach((category, index) => {
        byCategory[category] = (anchored?.tokens[index] ?? weights[index]!) + suffix[category]
      })
      byCategory.reservedOutput = budget?.reservedOutputTokens ?? 0
      const budgetTokens = budget?.inputBudgetTokens ?? Number.POSITIVE_INFINITY
      const notes: Array<string> = []
      if (unknownImages > 0)
        notes.push(
          `${unknownImages} image(s) without readable pixel dimensions counted at the conservative default of ${MessageTokens.unknownImageTokens} tokens each`
        )
      if (estimatedFiles > 0) notes.push(`${estimatedFiles} file(s) estimated (PDF pages or unknown binary content)`)
      const estimatedMessages = estimated?.() ?? 0
      if (estimatedMessages > 0) notes.push(`${estimatedMessages} message(s) estimated (not counted exactly)`)
      for (const note of [located.note, anchored?.note]) if (note !== undefined) notes.push(note)
      const measurement = fromCounts(byCategory, {
        budgetTokens,
        method: anchorIndex >= 0 ? "anchored" : estimatedMessages > 0 ? "estimate" : tokenizer.method,
        tokenizer: tokenizer.name,
        notes: notes.length > 0 ? notes : undefined
      })
      return noteLocalCounts(measurement, view, measureView, { prefix, suffix, anchored: anchorIndex >= 0 })
    }
    return measureView
  }

  const measure = measureWith(countItem, () => (useCache ? memo : ViewPrefix.makeSums(1, ViewPrefix.shallowStamps)))

  /** Whether the identity cache holds the exact count of `message` (still the same shape). */
  const isCounted = (message: Message, source: ItemSource, prior: boolean): boolean => {
    return IdentitySlots.reuse(byIdentity.get(message, slotOf(source, prior)), message) !== undefined
  }

  const withEstimates = (estimator: Tokenizer, estimated: (message: Message) => boolean): CachedMeasurer => {
    // A text whose exact count the tokenizer already holds (e.g. a part a strategy just truncated) is exact.
    const known = tokenizer.knownCount
    const estimating: Tokenizer =
      known === undefined ? estimator : { ...estimator, count: (text) => known(text) ?? estimator.count(text) }
    const estimateOptions = {
      current: { ...countOptions, tokenizer: estimating },
      prior: { ...priorOptions, tokenizer: estimating }
    }
    let estimates = new WeakMap<Message, Map<string, MessageTokens.MessageCount>>()
    let used = 0 // messages estimated since the current `measure` began
    const count = (
      message: Message,
      source: ItemSource = "transcript",
      position: ReasoningTokens.Position = "current"
    ): MessageTokens.MessageCount => {
      const { prior, slot, options: counting } = countingOf(message, source, position, estimateOptions)
      if (!estimated(message) || isCounted(message, source, prior)) return countItem(message, source, position)
      used++
      const perSource = estimates.get(message) ?? new Map<string, MessageTokens.MessageCount>()
      estimates.set(message, perSource)
      const result = perSource.get(slot) ?? MessageTokens.count(message, source, counting)
      perSource.set(slot, result)
      return result
    }
    const sumsOf = () => {
      used = 0
      return ViewPrefix.makeSums(1, ViewPrefix.shallowStamps)
    }
    return {
      tokenizer,
      countMessage: (message, source, position) => ({ ...count(message, source, position).byCategory }),
      messageTokens: (message, source, position) => count(message, source, position).totalTokens,
      toolSchemaTokens,
      measure: measureWith(count, sumsOf, () => used),
      cacheSize: () => byContent.size,
      clearCache: () => {
        estimates = new WeakMap()
      }
    }
  }

  return {
    tokenizer,
    countMessage: (message, source, position) => ({ ...countItem(message, source, position).byCategory }),
    messageTokens: (message, source, position) => countItem(message, source, position).totalTokens,
    toolSchemaTokens,
    measure,
    cacheSize: () => byContent.size,
    clearCache: () => {
      byIdentity = IdentitySlots.make()
      toolsByIdentity = new WeakMap()
      byContent.clear()
    },
    withEstimates
  }
}

/**
 * A measurer for a model policy's tokenizer (`Tokenizers.forPolicy`).
 *
 * @category constructors
 */
export const forPolicy = (policy: Pick<ModelPolicy, "tokenizer">, options?: Options): CachedMeasurer =>
  make(Tokenizers.forPolicy(policy), options)

/**
 * Service tag for a {@link Measurer}, so engines and strategies share one
 * count cache per session and tests swap it.
 *
 * @category services
 */
export class MeasurerService extends Context.Service<MeasurerService, Measurer>()("@context-engine/core/Measurer") {}

/**
 * Provides {@link MeasurerService} built on the {@link TokenizerService} in
 * context (e.g. `Tokenizers.layer("o200k_base")`).
 *
 * @example
 * ```ts
 * import { Effect, Layer } from "effect"
 * import { Measurer, Tokenizers } from "@context-engine/core"
 * const MeasurerLive = Measurer.layer().pipe(Layer.provide(Tokenizers.layer("o200k_base")))
 * ```
 *
 * @category layers
 */
export const layer = (options?: Options): Layer.Layer<MeasurerService, never, TokenizerService> =>
  Layer.effect(
    MeasurerService,
    Effect.gen(function* () {
      const tokenizer = yield* TokenizerService
      return make(tokenizer, options)
    })
  )
