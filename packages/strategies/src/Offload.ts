/**
 * Offload as results arrive (DESIGN.md "Memory, offload and context
 * tools"): a tool result over a threshold is shown in the view as its head
 * and tail plus a pointer — the entry id, its size, and how to read the
 * rest (`context_restore`). The original stays in the transcript; the
 * offload is a `replace` view edit (strategy {@link STRATEGY}), so a later
 * `replace` with the original (a restore) puts it back.
 *
 * Unlike `toolTrim`, which trims old output only when the request is over
 * budget, offload acts on each new result at once, before it ever reaches a
 * request (Deep Agents' filesystem middleware evicts large tool results to a
 * file as they arrive; compactor offloads at arrival too).
 *
 * @since 0.1.0
 */

import type { Entry, Message, ViewEdit } from "@context-engine/core"
import { MessageParts } from "@context-engine/core"
import * as HeadTail from "./HeadTail.ts"

/**
 * The strategy name offload edits carry.
 *
 * @category constants
 */
export const STRATEGY = "offload"

/**
 * Options. Units are in the names.
 *
 * @category models
 */
export interface Options {
  /**
   * A tool result over this many tokens is offloaded. Default 20,000: Deep
   * Agents' `FilesystemMiddleware` `tool_token_limit_before_evict`.
   */
  readonly thresholdTokens?: number
  /** Characters of the head kept in the view. Default 1,500 (OpenClaw `softTrim.headChars`, as `toolTrim`). */
  readonly headChars?: number
  /** Characters of the tail kept in the view. Default 1,500 (OpenClaw `softTrim.tailChars`). */
  readonly tailChars?: number
  /** Tools whose output must stay whole (never offloaded). Default none. */
  readonly keepWholeTools?: ReadonlyArray<string>
  /** Token count of a text. Default `ceil(characters / 4)` (OpenAI's rule of thumb); pass the policy's tokenizer. */
  readonly countTokens?: (text: string) => number
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = {
  thresholdTokens: 20_000,
  headChars: 1_500,
  tailChars: 1_500,
  keepWholeTools: [] as ReadonlyArray<string>
} as const

/**
 * The pointer text placed between head and tail: what was offloaded, its
 * size, and the exact call that reads the rest.
 *
 * @category constructors
 */
export const pointer = (input: {
  readonly entryId: string
  readonly toolName: string
  readonly totalChars: number
  readonly totalTokens: number
  readonly headChars: number
  readonly cutChars: number
}): string =>
  `\n[… offloaded: the ${input.toolName} result is ${input.totalChars} characters (~${input.totalTokens} tokens); ` +
  `${input.cutChars} characters from the middle are in transcript entry ${input.entryId}. ` +
  `Read them with context_restore {"entry":"${input.entryId}","offset":${input.headChars},"length":${input.cutChars}}, ` +
  `or put the whole result back with context_restore {"entry":"${input.entryId}"} …]\n`

const estimate = (text: string): number => Math.ceil(text.length / 4)

/**
 * The offloaded form of one message, or `undefined` when none of its tool
 * results is over the threshold (or they belong to tools kept whole, or
 * carry media).
 *
 * @category combinators
 */
export const offloadMessage = (
  entryId: string,
  message: Message.Message,
  options: Options = {}
): Message.Message | undefined => {
  if (message.role !== "tool" || typeof message.content === "string") return undefined
  const thresholdTokens = options.thresholdTokens ?? defaults.thresholdTokens
  const headChars = options.headChars ?? defaults.headChars
  const tailChars = options.tailChars ?? defaults.tailChars
  const keepWhole = new Set(options.keepWholeTools ?? defaults.keepWholeTools)
  const count = options.countTokens ?? estimate
  let changed = false
  const parts = message.content.map((part) => {
    if (part.type !== "tool-result" || keepWhole.has(part.toolName) || MessageParts.outputHasMedia(part.output))
      return part
    const text = MessageParts.outputText(part.output)
    if (text.length <= headChars + tailChars) return part
    const totalTokens = count(text)
    if (totalTokens <= thresholdTokens) return part
    changed = true
    const truncated = HeadTail.truncate(
      text,
      headChars + tailChars,
      headChars / (headChars + tailChars),
      totalTokens,
      (cut) =>
        pointer({
          entryId,
          toolName: part.toolName,
          totalChars: cut.totalChars,
          totalTokens,
          headChars,
          cutChars: cut.cutChars
        })
    )
    return MessageParts.withTextOutput(part, truncated)
  })
  return changed ? MessageParts.withParts(message, parts) : undefined
}

/**
 * Offload edits for newly arrived entries: one `replace` per message entry
 * with a tool result over the threshold. Entries already named by an
 * offload edit in `existingEdits` are skipped (idempotent).
 *
 * @category constructors
 */
export const editsFor = (
  entries: ReadonlyArray<Entry.Entry>,
  options: Options = {},
  existingEdits: ReadonlyArray<ViewEdit.ViewEdit> = []
): ReadonlyArray<ViewEdit.ViewEdit> => {
  const done = new Set(
    existingEdits.flatMap((edit) => (edit.op === "replace" && edit.strategy === STRATEGY ? [edit.entryId] : []))
  )
  return entries.flatMap((entry): ReadonlyArray<ViewEdit.ViewEdit> => {
    if (entry.kind !== "message" || done.has(entry.id)) return []
    const message = offloadMessage(entry.id, entry.message, options)
    return message === undefined
      ? []
      : [
          {
            op: "replace",
            entryId: entry.id,
            message,
            strategy: STRATEGY,
            reason: "tool result over the offload threshold; original in the transcript"
          }
        ]
  })
}
