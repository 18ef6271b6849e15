/**
 * `toolTrim.clearInputs`: the long string arguments of old tool calls (a file
 * written whole, an edit's old and new text) are replaced by a placeholder
 * naming the transcript entry; short arguments (paths, ids, one-line
 * commands) and the JSON shape stay, so the call still says what was done
 * to what. Source: Anthropic context editing `clear_tool_uses_20250919` with
 * `clear_tool_inputs`. In coding sessions these arguments are a third of the
 * tokens (the pi session: 138K of 414K o200k tokens), so clearing tool
 * results alone cannot bring a long session down.
 *
 * Protection and options are {@link ToolTrim}'s (`keepRecentToolResults`
 * counts calls here, `keepLastAssistants`, `excludeTools`,
 * `minReclaimTokens`) plus `clearInputMinChars`.
 *
 * @since 0.3.0
 */
import type { Strategy } from "@context-engine/core"
import { MessageParts, ViewEdit } from "@context-engine/core"
import * as ToolTrim from "./ToolTrim.ts"

/**
 * Stage name.
 *
 * @category constants
 */
export const NAME = "toolTrim.clearInputs"

/** Characters of a JSON-like value's string leaves. */
const leafChars = (value: unknown): number => {
  let chars = 0
  MessageParts.mapStrings(value, (text) => {
    chars += text.length
    return text
  })
  return chars
}

/**
 * The placeholder of a cleared tool-call argument.
 *
 * @category constructors
 */
export const clearedInputText = (entryId: string, chars: number): string =>
  `[Old tool input cleared — ${chars} characters; full input in transcript entry ${entryId}]`

/**
 * Input clear: the long string arguments of old tool calls, oldest first,
 * until the estimated total reaches the target (and at least
 * `minReclaimTokens` are freed). Arguments given as a JSON string are parsed
 * and re-serialized; one that is not JSON is cleared whole.
 *
 * @category constructors
 */
export const make = (options: ToolTrim.Options = {}): Strategy.Strategy => {
  const minChars = options.clearInputMinChars ?? ToolTrim.defaults.clearInputMinChars
  return {
    name: NAME,
    minReclaimTokens: options.minReclaimTokens ?? ToolTrim.defaults.minReclaimTokens,
    apply: (input) => {
      const minimum = options.minReclaimTokens ?? ToolTrim.defaults.minReclaimTokens
      const needed = Math.max(input.measurement.inputTokens - input.targetTokens, minimum)
      const byItem: ViewEdit.PartReplacements = new Map()
      let freed = 0
      let cleared = 0
      for (const old of ToolTrim.oldParts(input.view, options, "tool-call")) {
        if (freed >= needed) break
        let removedChars = 0
        const leaf = (text: string): string => {
          if (text.length <= minChars) return text
          const placeholder = clearedInputText(old.entryId, text.length)
          removedChars += text.length - placeholder.length
          return placeholder
        }
        const value = old.part.input
        let next: unknown = value
        if (typeof value === "string") {
          try {
            const parsed = JSON.parse(value) as unknown
            const mapped = MessageParts.mapStrings(parsed, leaf)
            next = mapped === parsed ? value : JSON.stringify(mapped)
          } catch {
            next = leaf(value)
          }
        } else next = MessageParts.mapStrings(value, leaf)
        if (next === value || removedChars <= 0) continue
        // Estimate (the pipeline re-measures exactly): the message's tokens shared by characters.
        const item = input.view.items[old.itemIndex]!
        const messageChars = Math.max(1, leafChars(item.message.content))
        freed += Math.floor((input.measurer.messageTokens(item.message, item.source) * removedChars) / messageChars)
        cleared++
        ViewEdit.setPart(byItem, old.itemIndex, old.partIndex, { ...old.part, input: next })
      }
      const edits = ViewEdit.replaceParts(input.view.items, byItem, NAME, "old tool call arguments cleared")
      return { edits, tokensFreed: freed, note: `${cleared} tool call(s)` }
    }
  }
}
