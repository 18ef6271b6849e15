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
 * Tool output that arrives in user-role messages ({@link UserData}: the
 * observations text-action agents such as SWE-agent send as user messages,
 * shell output, command records) is old tool output too: it is trimmed and
 * cleared by the same rules, its placeholder saying what it was
 * (`UserSpeech.clearedText`). The user's own words and the latest user
 * message never are.
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
import { MessageParts, UserSpeech, ViewEdit } from "@context-engine/core"
import * as HeadTail from "./HeadTail.ts"
import * as UserData from "./UserData.ts"

/**
 * Options. Token and character units are in the names.
 *
 * @category models
 */
export interface Options {
  /**
   * Most recent tool outputs (tool results and user-role data counted
   * together) never trimmed or cleared. Default 3: Anthropic
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
 * One piece of old tool output: a tool result ({@link Candidate}) or the
 * text of a user-role data message ({@link UserData.Part}: the observations
 * text-action agents send as user messages, shell output, command records).
 *
 * @category models
 */
export type Output = Candidate | UserData.Part

/**
 * The old outputs `collect` finds in a view, oldest first: before the last
 * `keepLastAssistants` assistant messages and not among the newest
 * `keepRecentToolResults` of them.
 */
const oldOf = <X>(
  view: ContextView.ContextView,
  options: Options,
  collect: (itemIndex: number) => ReadonlyArray<X>
): Array<X> => {
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
  const all: Array<X> = []
  for (let itemIndex = 0; itemIndex < cutoff; itemIndex++) all.push(...collect(itemIndex))
  // The newest `keepRecent` outputs overall (not only before the cutoff) are protected.
  let recentSeen = 0
  for (let index = items.length - 1; index >= cutoff && recentSeen < keepRecent; index--)
    recentSeen += collect(index).length
  const keepFromEnd = Math.max(0, keepRecent - recentSeen)
  return all.slice(0, Math.max(0, all.length - keepFromEnd))
}

const partsOf =
  <T extends "tool-result" | "tool-call">(view: ContextView.ContextView, type: T) =>
  (itemIndex: number): Array<{ itemIndex: number; partIndex: number; entryId: string; part: PartOf<T> }> => {
    const item = view.items[itemIndex]!
    const content = item.message.content
    if (typeof content === "string") return []
    const found: Array<{ itemIndex: number; partIndex: number; entryId: string; part: PartOf<T> }> = []
    for (let partIndex = 0; partIndex < content.length; partIndex++) {
      const part = content[partIndex]!
      if (part.type === type) found.push({ itemIndex, partIndex, entryId: item.entryId, part: part as PartOf<T> })
    }
    return found
  }

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
  const exclude = new Set(options.excludeTools ?? defaults.excludeTools)
  return oldOf(view, options, partsOf(view, type)).filter((old) => !exclude.has(old.part.toolName))
}

/**
 * The unprotected old outputs of a view, oldest first: tool results and
 * user-role data ({@link UserData}), protected together (the newest
 * `keepRecentToolResults` of both, those after the last `keepLastAssistants`
 * assistant messages); tools in `excludeTools`, results with media (left to
 * `media`) and outputs already cleared are left out.
 *
 * @category analysis
 */
export const outputs = (view: ContextView.ContextView, options: Options = {}): Array<Output> => {
  const placeholder = (options.placeholder ?? defaults.placeholder).replace(/\]$/, "")
  const exclude = new Set(options.excludeTools ?? defaults.excludeTools)
  const results = partsOf(view, "tool-result")
  const userData = UserData.collector(view.items)
  return oldOf(view, options, (itemIndex): Array<Output> => [...results(itemIndex), ...userData(itemIndex)]).filter(
    (output) =>
      output.part.type === "text"
        ? !UserSpeech.isClearedText(output.part.text)
        : !exclude.has(output.part.toolName) &&
          !MessageParts.outputHasMedia(output.part.output) &&
          !isCleared(output.part, placeholder)
  )
}

/**
 * The unprotected tool results of a view, oldest first ({@link outputs}
 * less the user-role data).
 *
 * @category analysis
 */
export const candidates = (view: ContextView.ContextView, options: Options = {}): Array<Candidate> =>
  outputs(view, options).filter((output): output is Candidate => output.part.type === "tool-result")

const isCleared = (part: Message.ToolResultPart, placeholderPrefix: string): boolean =>
  (part.output.type === "text" || part.output.type === "error-text") && part.output.value.startsWith(placeholderPrefix)

const textOf = (output: Output): string =>
  output.part.type === "text" ? output.part.text : MessageParts.outputText(output.part.output)

const withText = (output: Output, text: string): Message.ContentPart =>
  output.part.type === "text" ? { ...output.part, text } : MessageParts.withTextOutput(output.part, text)

/**
 * Estimated tokens of one output: its message's (cached) count, shared among
 * the message's outputs by text length. The pipeline re-measures exactly.
 */
const outputTokens = (input: Strategy.StrategyInput, output: Output): number => {
  const item = input.view.items[output.itemIndex]!
  const total = input.measurer.messageTokens(item.message, item.source)
  const content = MessageParts.contentParts(item.message)
  if (content.length === 1) return total
  let chars = 0
  for (const part of content)
    if (part.type === "tool-result") chars += MessageParts.outputText(part.output).length
    else if (part.type === "text") chars += part.text.length
  return chars === 0 ? 0 : Math.round((total * textOf(output).length) / chars)
}

type Rewrite = (output: Output) => string | undefined

/**
 * Shared driver: rewrites outputs oldest first until the estimated total
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
  let results = 0
  let userData = 0
  for (const output of outputs(input.view, options)) {
    if (freed >= needed) break
    const text = rewrite(output)
    if (text === undefined) continue
    // Estimates only (proportional to characters); the pipeline re-measures the result exactly.
    const before = outputTokens(input, output)
    const originalChars = textOf(output).length
    const after = originalChars === 0 ? before : Math.ceil((before * text.length) / originalChars)
    if (after >= before) continue
    freed += before - after
    if (output.part.type === "text") userData++
    else results++
    ViewEdit.setPart(byItem, output.itemIndex, output.partIndex, withText(output, text))
  }
  return {
    edits: ViewEdit.replaceParts(input.view.items, byItem, stage, reason),
    tokensFreed: freed,
    note: `${results} tool result(s)${userData > 0 ? `, ${userData} user-role output(s)` : ""}`
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
      rewriteOldest(input, options, SOFT, "old tool result soft-trimmed to head + tail", (output) => {
        const text = textOf(output)
        if (text.length <= maxChars || text.length <= keepChars) return undefined
        const tokens = Math.ceil(text.length / 4)
        return HeadTail.truncate(text, keepChars, headShare, tokens, HeadTail.marker("trimmed", output.entryId))
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
      rewriteOldest(input, options, CLEAR, "old tool result cleared", (output) =>
        output.part.type === "text"
          ? UserData.placeholderText(output as UserData.Part)
          : placeholderText(placeholder, output.entryId, output.part)
      )
  }
}

/**
 * Both stages, soft trim first (the input clear, `ToolInputClear`, follows them in `Tiers.deterministic`).
 *
 * @category constructors
 */
export const make = (options: Options = {}): ReadonlyArray<Strategy.Strategy> => [soft(options), clear(options)]
