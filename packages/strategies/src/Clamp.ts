/**
 * `clamp`: a pathological single part (a pasted log, a huge tool result, a
 * tool call that writes a whole file) over a per-part limit keeps its head
 * and tail with a marker that says how many characters and tokens were cut
 * and which transcript entry holds the full text.
 *
 * Tool-call arguments are clamped leaf by leaf (each long string value), so
 * the arguments stay a valid JSON object. Reasoning parts are never touched
 * (their provider signatures would no longer verify); system messages and
 * the latest user message are never touched unless
 * {@link Options.clampLatestUserMessage} is set.
 *
 * @since 0.1.0
 */

import type { ContextView, Measurer, Message, Strategy, ViewEdit } from "@context-engine/core"
import { MessageParts } from "@context-engine/core"
import * as HeadTail from "./HeadTail.ts"
import * as Invariants from "./Invariants.ts"

/**
 * Options. All sizes in tokens.
 *
 * @category models
 */
export interface Options {
  /**
   * Largest part, in tokens. Default 25,000: Claude Code's cap on one MCP
   * tool output (`MAX_MCP_OUTPUT_TOKENS`, default 25,000).
   */
  readonly maxPartTokens?: number
  /**
   * Largest part as a share of the conversation budget
   * (`budget.availableTokens`); the smaller of the two limits applies.
   * Default 0.5 (own choice: one part may not take more than half of what
   * the conversation has, so the rest of the turn still fits).
   */
  readonly maxShareOfAvailable?: number
  /**
   * Lower bound of the limit, in tokens, so a tiny or negative budget does
   * not clamp everything to nothing. Default 256 (own choice).
   */
  readonly minPartTokens?: number
  /**
   * Share of the kept text taken from the head, 0..1. Default 0.5: Codex's
   * `truncate_middle` keeps equal halves of tool output.
   */
  readonly headShare?: number
  /**
   * Whether the latest user message may be clamped too. Default `false`:
   * the latest user message is kept verbatim (DESIGN.md invariants); engines
   * report `BudgetExceeded` instead.
   */
  readonly clampLatestUserMessage?: boolean
  /** Prompt-cache guard (tokens). Default 0: a pathological part is always worth clamping. */
  readonly minReclaimTokens?: number
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = {
  maxPartTokens: 25_000,
  maxShareOfAvailable: 0.5,
  minPartTokens: 256,
  headShare: 0.5,
  clampLatestUserMessage: false,
  minReclaimTokens: 0
} as const satisfies Required<Options>

/**
 * Name of the strategy (and of its stage in reports).
 *
 * @category constants
 */
export const NAME = "clamp"

/**
 * The per-part limit for a budget, in tokens.
 *
 * @category getters
 */
export const limitTokens = (options: Options, availableTokens: number): number => {
  const maxPartTokens = options.maxPartTokens ?? defaults.maxPartTokens
  const share = options.maxShareOfAvailable ?? defaults.maxShareOfAvailable
  const floor = options.minPartTokens ?? defaults.minPartTokens
  return Math.max(floor, Math.min(maxPartTokens, Math.floor(Math.max(0, availableTokens) * share)))
}

type Part = Message.ContentPart

const clampMessage = (
  message: Message.Message,
  entryId: string,
  limit: number,
  headShare: number,
  count: (text: string) => number
): Message.Message | undefined => {
  const clampText = (text: string): string | undefined => {
    // A string under `limit` characters is under `limit` tokens for every BPE
    // tokenizer in use except on unusual scripts; count only when it may be over.
    if (text.length <= limit) return undefined
    return HeadTail.truncateToTokens(text, limit, headShare, count, HeadTail.marker("clamped", entryId))?.text
  }
  if (typeof message.content === "string") {
    const clamped = clampText(message.content)
    return clamped === undefined ? undefined : ({ ...message, content: clamped } as Message.Message)
  }
  let changed = false
  const parts = (message.content as ReadonlyArray<Part>).map((part): Part => {
    switch (part.type) {
      case "text": {
        const clamped = clampText(part.text)
        if (clamped === undefined) return part
        changed = true
        return { ...part, text: clamped }
      }
      case "tool-call": {
        const serialized = typeof part.input === "string" ? part.input : (JSON.stringify(part.input) ?? "")
        if (serialized.length <= limit || count(serialized) <= limit) return part
        // Each string leaf gets its share of the limit by length; the JSON structure is kept.
        const leaf = (text: string): string =>
          clampLeaf(text, Math.max(64, Math.floor((limit * text.length) / serialized.length)))
        let input: unknown = part.input
        if (typeof part.input === "string") {
          try {
            input = JSON.stringify(MessageParts.mapStrings(JSON.parse(part.input) as unknown, leaf))
          } catch {
            input = clampText(part.input) ?? part.input
          }
        } else input = MessageParts.mapStrings(part.input, leaf)
        if (input === part.input) return part
        changed = true
        return { ...part, input }
      }
      case "tool-result": {
        const output = part.output
        if (output.type === "text" || output.type === "error-text") {
          const clamped = clampText(output.value)
          if (clamped === undefined) return part
          changed = true
          return { ...part, output: { ...output, value: clamped } }
        }
        if (output.type === "json" || output.type === "error-json") {
          const text = MessageParts.outputText(output)
          const clamped = clampText(text)
          if (clamped === undefined) return part
          changed = true
          return { ...part, output: { type: output.type === "json" ? "text" : "error-text", value: clamped } }
        }
        if (output.type === "content") {
          let itemChanged = false
          const value = output.value.map((item) => {
            if (item.type !== "text") return item
            const clamped = clampText(item.text)
            if (clamped === undefined) return item
            itemChanged = true
            return { ...item, text: clamped }
          })
          if (!itemChanged) return part
          changed = true
          return { ...part, output: { ...output, value } }
        }
        return part
      }
      default:
        return part
    }
  })
  function clampLeaf(text: string, leafLimit: number): string {
    if (text.length <= leafLimit) return text
    return (
      HeadTail.truncateToTokens(text, leafLimit, headShare, count, HeadTail.marker("clamped", entryId))?.text ?? text
    )
  }
  return changed ? MessageParts.withParts(message, parts) : undefined
}

/**
 * Builds the strategy.
 *
 * @category constructors
 */
export const make = (options: Options = {}): Strategy.Strategy => {
  const headShare = options.headShare ?? defaults.headShare
  const clampLatestUser = options.clampLatestUserMessage ?? defaults.clampLatestUserMessage
  return {
    name: NAME,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: ({ view, budget, measurer }) => {
      const limit = limitTokens(options, budget.availableTokens)
      const guard = Invariants.protectedOf(view)
      const count = measurer.tokenizer.count
      const edits: Array<ViewEdit.ViewEdit> = []
      let freed = 0
      for (const item of view.items) {
        if (!mayClamp(guard, item, clampLatestUser)) continue
        const tokens = measurer.messageTokens(item.message, item.source)
        if (tokens <= limit) continue
        const clamped = clampMessage(item.message, item.entryId, limit, headShare, count)
        if (clamped === undefined) continue
        freed += tokens - measurer.messageTokens(clamped, item.source)
        edits.push({
          op: "replace",
          entryId: item.entryId,
          message: clamped,
          strategy: NAME,
          reason: `part(s) over ${limit} tokens clamped to head + tail`
        })
      }
      return { edits, tokensFreed: freed, note: `per-part limit ${limit} tokens` }
    }
  }
}

const mayClamp = (guard: Invariants.Protected, item: ContextView.ViewItem, clampLatestUser: boolean): boolean =>
  !guard.systemIds.has(item.entryId) && (clampLatestUser || guard.latestUserId !== item.entryId)

/**
 * Name of {@link fit} (and of its stage in reports).
 *
 * @category constants
 */
export const FIT_NAME = "clamp.fit"

/**
 * `clamp.fit`, the last resort before `BudgetExceeded`: while the request is
 * still over its target after every other stage, the messages that may be
 * edited (never a system message or the latest user message), largest
 * first, are clamped to head + tail, with the same marker naming their
 * transcript entry, by what is still over: each part to at most the
 * message's tokens less the excess, at least `minPartTokens`; when every
 * editable message is at that floor and the request is still over, a second
 * pass goes below the floor (down to the marker alone), because the
 * alternative is a request over the budget. Each cut is re-measured with the
 * policy's measurer (the marker and the message framing count too) and
 * lowered by what is still over, so the result is at or under the target
 * whatever the tokenizer. Engines run it after the sliding window, where the
 * only big item left is often the newest tool output — kept whole by the trim
 * stages because the agent acts on it, but cut rather than failing the
 * request.
 *
 * @category constructors
 */
export const fit = (options: Options = {}): Strategy.Strategy => {
  const headShare = options.headShare ?? defaults.headShare
  const minPart = options.minPartTokens ?? defaults.minPartTokens
  return {
    name: FIT_NAME,
    minReclaimTokens: 0,
    apply: ({ view, measurement, targetTokens, measurer }) => {
      let excess = measurement.inputTokens - targetTokens
      if (excess <= 0) return { edits: [], tokensFreed: 0, note: "already within target" }
      const guard = Invariants.protectedOf(view)
      const candidates = view.items
        .filter((item) => mayClamp(guard, item, false))
        .map((item) => ({ item, tokens: measurer.messageTokens(item.message, item.source) }))
        .sort((a, b) => b.tokens - a.tokens)
      if (candidates.length === 0) return { edits: [], tokensFreed: 0, note: "no message may be clamped" }
      const cut = new Map<
        string,
        { readonly message: Message.Message; readonly tokens: number; readonly limit: number }
      >()
      for (const floor of [minPart, 0]) {
        for (const { item, tokens: original } of candidates) {
          if (excess <= 0) break
          const current = cut.get(item.entryId)?.tokens ?? original
          const result = clampTo(item, current - excess, floor, headShare, measurer)
          if (result === undefined || result.tokens >= current) continue
          excess -= current - result.tokens
          cut.set(item.entryId, result)
        }
      }
      if (cut.size === 0)
        return { edits: [], tokensFreed: 0, note: `largest message ${candidates[0]!.item.entryId} not clampable` }
      const edits = [...cut].map(
        ([entryId, { message, limit }]): ViewEdit.ViewEdit => ({
          op: "replace",
          entryId,
          message,
          strategy: FIT_NAME,
          reason: `clamped to head + tail (part(s) to ${limit} tokens) to fit the request`
        })
      )
      const freed = candidates.reduce(
        (sum, { item, tokens }) => sum + tokens - (cut.get(item.entryId)?.tokens ?? tokens),
        0
      )
      return {
        edits,
        tokensFreed: freed,
        note: `${[...cut.keys()].join(", ")} clamped by ${freed} tokens (${measurement.inputTokens - targetTokens} over the target)`
      }
    }
  }
}

/**
 * The item's original message clamped so it measures at most `targetTokens`
 * (its parts to `limit`, at least `floor`): the per-part limit is lowered by
 * what the re-measured message is still over (the marker and framing count),
 * three times at most.
 */
const clampTo = (
  item: ContextView.ViewItem,
  targetTokens: number,
  floor: number,
  headShare: number,
  measurer: Measurer.Measurer
): { readonly message: Message.Message; readonly tokens: number; readonly limit: number } | undefined => {
  const count = measurer.tokenizer.count
  let limit = Math.max(floor, targetTokens)
  let clamped = clampMessage(item.message, item.entryId, limit, headShare, count)
  let tokens = clamped === undefined ? 0 : measurer.messageTokens(clamped, item.source)
  for (let retry = 0; retry < 3 && clamped !== undefined && tokens > targetTokens && limit > floor; retry++) {
    limit = Math.max(floor, limit - (tokens - targetTokens))
    const next = clampMessage(item.message, item.entryId, limit, headShare, count)
    if (next === undefined) break
    clamped = next
    tokens = measurer.messageTokens(next, item.source)
  }
  return clamped === undefined ? undefined : { message: clamped, tokens, limit }
}

/**
 * The strategy with default options.
 *
 * @category constructors
 */
export const clamp: Strategy.Strategy = make()
