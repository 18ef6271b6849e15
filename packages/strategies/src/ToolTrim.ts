/**
 * `toolTrim`: old tool output is the bulk of an agent's context and the
 * cheapest to lose. Two stages, oldest results first, each stopping once the
 * view is estimated to fit the target:
 *
 * - **soft trim** ({@link soft}): a result over `softTrimMaxChars` keeps
 *   `headChars` + `tailChars` around a marker (OpenClaw context pruning
 *   `softTrim`);
 * - **hard clear** ({@link clear}): the result is replaced by a placeholder
 *   naming the original entry and tool call (Anthropic context editing
 *   `clear_tool_uses_20250919`, OpenCode prune, Claude Code microcompact);
 * - **input clear** (`ToolInputClear`): the long string arguments of old
 *   tool calls (a file written whole, an edit's old and new text) are
 *   replaced by a placeholder naming the entry; short arguments (paths,
 *   commands) and the JSON shape stay (Anthropic context editing
 *   `clear_tool_uses_20250919` with `clear_tool_inputs`). In coding sessions
 *   these arguments are a third of the tokens (the pi session: 138K of 414K).
 *
 * Protected: the `keepRecentToolResults` most recent results, results of the
 * last `keepLastAssistants` assistant messages, tools in `excludeTools`, and
 * results that carry images or files (left to `media`). The tool call and its
 * arguments stay, so pairing is untouched. Each stage acts only when it frees
 * at least `minReclaimTokens` (prompt-cache guard: editing a cached prefix
 * costs a cache write, so it must pay for itself).
 *
 * @since 0.1.0
 */

import type { ContextView, Message, Strategy } from "@context-engine/core"
import { MessageParts, ViewEdit } from "@context-engine/core"
import * as HeadTail from "./HeadTail.ts"

/**
 * Options. Token and character units are in the names.
 *
 * @category models
 */
export interface Options {
  /**
   * Most recent tool results never trimmed or cleared. Default 3: Anthropic
   * `clear_tool_uses_20250919` `keep` (3 tool uses).
   */
  readonly keepRecentToolResults?: number
  /**
   * Results answering the last N assistant messages are protected. Default 3:
   * OpenClaw context pruning `keepLastAssistants`.
   */
  readonly keepLastAssistants?: number
  /** Tool names never trimmed or cleared (Anthropic `exclude_tools`). Default none. */
  readonly excludeTools?: ReadonlyArray<string>
  /**
   * Tokens a stage must free to be applied (prompt-cache guard). Default
   * 20,000: OpenCode's `PRUNE_MINIMUM`; Anthropic calls it `clear_at_least`.
   * Engines lower it for small windows.
   */
  readonly minReclaimTokens?: number
  /** Soft trim applies to results longer than this. Default 4,000 (OpenClaw `softTrim.maxChars`). */
  readonly softTrimMaxChars?: number
  /** Characters kept from the head by soft trim. Default 1,500 (OpenClaw `softTrim.headChars`). */
  readonly headChars?: number
  /** Characters kept from the tail by soft trim. Default 1,500 (OpenClaw `softTrim.tailChars`). */
  readonly tailChars?: number
  /**
   * Placeholder of a cleared result; the entry id and tool call id are
   * appended. Default `[Old tool result content cleared]` (OpenCode's
   * `toModelMessages` and OpenClaw's `hardClear.placeholder`).
   */
  readonly placeholder?: string
  /**
   * Input clear replaces string arguments longer than this many characters.
   * Default 256 (own choice: paths, ids and one-line commands stay; file
   * contents and edit texts go).
   */
  readonly clearInputMinChars?: number
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = {
  keepRecentToolResults: 3,
  keepLastAssistants: 3,
  excludeTools: [] as ReadonlyArray<string>,
  minReclaimTokens: 20_000,
  softTrimMaxChars: 4_000,
  headChars: 1_500,
  tailChars: 1_500,
  placeholder: "[Old tool result content cleared]",
  clearInputMinChars: 256
} satisfies Required<Options>

/**
 * Stage name of the soft trim.
 *
 * @category constants
 */
export const SOFT = "toolTrim.soft"

/**
 * Stage name of the hard clear.
 *
 * @category constants
 */
export const CLEAR = "toolTrim.clear"

/**
 * One tool result that may be trimmed or cleared.
 *
 * @category models
 */
export interface Candidate {
  readonly itemIndex: number
  readonly partIndex: number
  readonly entryId: string
  readonly part: Message.ToolResultPart
}

type PartOf<T extends "tool-result" | "tool-call"> = T extends "tool-result"
  ? Message.ToolResultPart
  : Message.ToolCallPart

/**
 * The old parts of one type, oldest first: before the last
 * `keepLastAssistants` assistant messages, not among the newest
 * `keepRecentToolResults` of that type, not of a tool in `excludeTools`.
 *
 * @category analysis
 */
export const oldParts = <T extends "tool-result" | "tool-call">(
  view: ContextView.ContextView,
  options: Options,
  type: T
): Array<{
  readonly itemIndex: number
  readonly partIndex: number
  readonly entryId: string
  readonly part: PartOf<T>
}> => {
  const keepRecent = options.keepRecentToolResults ?? defaults.keepRecentToolResults
  const keepAssistants = options.keepLastAssistants ?? defaults.keepLastAssistants
  const items = view.items
  // Index of the first item after the cutoff of the last N assistant messages.
  let cutoff = items.length
  let assistants = 0
  for (let index = items.length - 1; index >= 0 && assistants < keepAssistants; index--) {
    if (items[index]!.message.role === "assistant") {
      assistants++
      cutoff = index
    }
  }
  const all: Array<{
    itemIndex: number
    partIndex: number
    entryId: string
    part: PartOf<T>
  }> = []
  for (let itemIndex = 0; itemIndex < cutoff; itemIndex++) {
    const item = items[itemIndex]!
    const content = item.message.content
    if (typeof content === "string") continue
    for (let partIndex = 0; partIndex < content.length; partIndex++) {
      const part = content[partIndex]!
      if (part.type === type) all.push({ itemIndex, partIndex, entryId: item.entryId, part: part as PartOf<T> })
    }
  }
  // The newest `keepRecent` parts overall (not only before the cutoff) are protected.
  let recentSeen = 0
  for (let index = items.length - 1; index >= cutoff; index--) {
    const content = items[index]!.message.content
    if (typeof content !== "string") for (const part of content) if (part.type === type) recentSeen++
  }
  const keepFromEnd = Math.max(0, keepRecent - recentSeen)
  const exclude = new Set(options.excludeTools ?? defaults.excludeTools)
  return all.slice(0, Math.max(0, all.length - keepFromEnd)).filter((old) => !exclude.has(old.part.toolName))
}

/**
 * The unprotected tool results of a view, oldest first.
 *
 * @category analysis
 */
export const candidates = (view: ContextView.ContextView, options: Options = {}): Array<Candidate> =>
  oldParts(view, options, "tool-result").filter(
    (candidate) =>
      !MessageParts.outputHasMedia(candidate.part.output) &&
      !isCleared(candidate.part, options.placeholder ?? defaults.placeholder)
  )

const isCleared = (part: Message.ToolResultPart, placeholder: string): boolean =>
  (part.output.type === "text" || part.output.type === "error-text") &&
  part.output.value.startsWith(placeholder.replace(/\]$/, ""))

/**
 * Estimated tokens of one result: its message's (cached) count, shared among
 * the message's results by text length. The pipeline re-measures exactly.
 */
const partTokens = (input: Strategy.StrategyInput, candidate: Candidate): number => {
  const item = input.view.items[candidate.itemIndex]!
  const total = input.measurer.messageTokens(item.message, item.source)
  const content = item.message.content as ReadonlyArray<Message.ContentPart>
  if (content.length === 1) return total
  let chars = 0
  for (const part of content) if (part.type === "tool-result") chars += MessageParts.outputText(part.output).length
  return chars === 0 ? 0 : Math.round((total * MessageParts.outputText(candidate.part.output).length) / chars)
}

type Rewrite = (candidate: Candidate) => Message.ToolResultPart | undefined

/**
 * Shared driver: rewrites candidates oldest first until the estimated total
 * reaches the target and at least `minReclaimTokens` are freed.
 */
const rewriteOldest = (
  input: Strategy.StrategyInput,
  options: Options,
  stage: string,
  reason: string,
  rewrite: Rewrite
): Strategy.StrategyResult => {
  const minimum = options.minReclaimTokens ?? defaults.minReclaimTokens
  const needed = Math.max(input.measurement.inputTokens - input.targetTokens, minimum)
  const byItem: ViewEdit.PartReplacements = new Map()
  let freed = 0
  for (const candidate of candidates(input.view, options)) {
    if (freed >= needed) break
    const replacement = rewrite(candidate)
    if (replacement === undefined) continue
    // Estimates only (proportional to characters); the pipeline re-measures the result exactly.
    const before = partTokens(input, candidate)
    const originalChars = MessageParts.outputText(candidate.part.output).length
    const after =
      originalChars === 0
        ? before
        : Math.ceil((before * MessageParts.outputText(replacement.output).length) / originalChars)
    if (after >= before) continue
    freed += before - after
    ViewEdit.setPart(byItem, candidate.itemIndex, candidate.partIndex, replacement)
  }
  let results = 0
  for (const parts of byItem.values()) results += parts.size
  return {
    edits: ViewEdit.replaceParts(input.view.items, byItem, stage, reason),
    tokensFreed: freed,
    note: `${results} tool result(s)`
  }
}

/**
 * Soft trim: head + tail of long old tool results.
 *
 * @category constructors
 */
export const soft = (options: Options = {}): Strategy.Strategy => {
  const maxChars = options.softTrimMaxChars ?? defaults.softTrimMaxChars
  const headChars = options.headChars ?? defaults.headChars
  const tailChars = options.tailChars ?? defaults.tailChars
  const keepChars = headChars + tailChars
  const headShare = keepChars === 0 ? 0.5 : headChars / keepChars
  return {
    name: SOFT,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: (input) =>
      rewriteOldest(input, options, SOFT, "old tool result soft-trimmed to head + tail", (candidate) => {
        const text = MessageParts.outputText(candidate.part.output)
        if (text.length <= maxChars || text.length <= keepChars) return undefined
        const tokens = Math.ceil(text.length / 4)
        return MessageParts.withTextOutput(
          candidate.part,
          HeadTail.truncate(text, keepChars, headShare, tokens, HeadTail.marker("trimmed", candidate.entryId))
        )
      })
  }
}

/**
 * The placeholder text of a cleared result.
 *
 * @category constructors
 */
export const placeholderText = (placeholder: string, entryId: string, part: Message.ToolResultPart): string =>
  `${placeholder.replace(/\]$/, "")} — ${part.toolName} result of call ${part.toolCallId}; full output in transcript entry ${entryId}]`

/**
 * Hard clear: replace old tool results with a placeholder.
 *
 * @category constructors
 */
export const clear = (options: Options = {}): Strategy.Strategy => {
  const placeholder = options.placeholder ?? defaults.placeholder
  return {
    name: CLEAR,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: (input) =>
      rewriteOldest(input, options, CLEAR, "old tool result cleared", (candidate) =>
        MessageParts.withTextOutput(candidate.part, placeholderText(placeholder, candidate.entryId, candidate.part))
      )
  }
}

/**
 * Both stages, soft trim first (the input clear, `ToolInputClear`, follows them in `Tiers.deterministic`).
 *
 * @category constructors
 */
export const make = (options: Options = {}): ReadonlyArray<Strategy.Strategy> => [soft(options), clear(options)]
