/**
 * `dedupe`: the same file read several times, or the same tool output
 * returned several times, is in the context once. The newest result stays
 * verbatim; each older one becomes a short reference to the newer result and
 * to its own transcript entry. The tool call and its arguments stay, so
 * pairing is untouched.
 *
 * Two results are duplicates when
 * - their tools read the same file: same tool, same key argument (see
 *   {@link Options.keys}) and the same other arguments (an `offset`/`limit`
 *   read of another range is not a duplicate), or
 * - they have the same tool and byte-identical output (any tool).
 *
 * Error results are neither replaced nor used as the newer copy. The idea
 * is the deduplication of repeated tool calls in OpenCode's
 * dynamic-context-pruning plugin (`@tarquinen/opencode-dcp`) and of
 * Claude Code's read-file state, which answers a re-read of an unchanged
 * file with a short stub instead of the content again.
 *
 * @since 0.1.0
 */

import type { Message, Strategy } from "@context-engine/core"
import { MessageParts, ViewEdit } from "@context-engine/core"

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  /**
   * Per tool name, the argument(s) naming the file it reads; the first one
   * present is used. Default {@link defaultKeys}: the read tools of Pi
   * (`read` → `path`), Claude Code (`Read` → `file_path`), OpenCode (`read`
   * → `filePath`), Gemini CLI (`read_file` → `absolute_path`), Cursor /
   * Cline (`read_file` → `target_file` / `path`) and SWE-agent (`open` →
   * `path`).
   */
  readonly keys?: Readonly<Record<string, string | ReadonlyArray<string>>>
  /** Also replace byte-identical outputs of the same tool. Default true. */
  readonly identicalResults?: boolean
  /**
   * Results shorter than this (characters) are left alone: the reference
   * would not be shorter. Default 200 (own choice: about the length of the
   * reference text).
   */
  readonly minChars?: number
  /** Prompt-cache guard (tokens). Default 0: dedupe is exact, so any saving is kept. */
  readonly minReclaimTokens?: number
}

/**
 * Default file-key arguments per read tool (sources in {@link Options.keys}).
 *
 * @category constants
 */
export const defaultKeys: Readonly<Record<string, ReadonlyArray<string>>> = {
  read: ["path", "filePath", "file_path"],
  Read: ["file_path", "path"],
  read_file: ["path", "absolute_path", "target_file", "file_path"],
  view: ["path"],
  open: ["path"],
  cat: ["path"]
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = {
  keys: defaultKeys,
  identicalResults: true,
  minChars: 200,
  minReclaimTokens: 0
} as const satisfies Required<Options>

/**
 * Name of the strategy (and of its stage in reports).
 *
 * @category constants
 */
export const NAME = "dedupe"

const REFERENCE_PREFIX = "[deduplicated:"

/** Stable JSON (sorted keys) of the arguments other than the key. */
const restKey = (input: Record<string, unknown>, omit: string): string =>
  JSON.stringify(
    Object.keys(input)
      .filter((key) => key !== omit)
      .sort()
      .map((key) => [key, input[key]])
  )

const fileKey = (
  keys: Readonly<Record<string, string | ReadonlyArray<string>>>,
  toolName: string,
  input: unknown
): string | undefined => {
  const names = keys[toolName]
  if (names === undefined || input === null || typeof input !== "object" || Array.isArray(input)) return undefined
  const args = input as Record<string, unknown>
  for (const name of typeof names === "string" ? [names] : names) {
    const value = args[name]
    if (typeof value === "string" && value.length > 0) return `file|${toolName}|${value}|${restKey(args, name)}`
  }
  return undefined
}

/**
 * The reference text that replaces an older duplicate.
 *
 * @category constructors
 */
export const referenceText = (
  kind: "file" | "identical",
  part: Message.ToolResultPart,
  entryId: string,
  newerCallId: string
): string =>
  `${REFERENCE_PREFIX} ${kind === "file" ? "the same file was read again later" : "identical output returned again later"}; see the ${part.toolName} result of call ${newerCallId}. Original output of call ${part.toolCallId} in transcript entry ${entryId}]`

interface Seen {
  readonly itemIndex: number
  readonly partIndex: number
  readonly part: Message.ToolResultPart
}

/**
 * Builds the strategy.
 *
 * @category constructors
 */
export const make = (options: Options = {}): Strategy.Strategy => {
  const keys = options.keys ?? defaults.keys
  const identical = options.identicalResults ?? defaults.identicalResults
  const minChars = options.minChars ?? defaults.minChars
  return {
    name: NAME,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: ({ view }) => {
      const inputs = new Map<string, unknown>()
      for (const item of view.items) {
        if (typeof item.message.content === "string") continue
        for (const part of item.message.content) if (part.type === "tool-call") inputs.set(part.toolCallId, part.input)
      }
      const newest = new Map<string, Seen>()
      const replaced: ViewEdit.PartReplacements = new Map()
      let freedChars = 0
      // Walk newest first: the first result seen for a key is the one kept.
      for (let itemIndex = view.items.length - 1; itemIndex >= 0; itemIndex--) {
        const content = view.items[itemIndex]!.message.content
        if (typeof content === "string") continue
        for (let partIndex = content.length - 1; partIndex >= 0; partIndex--) {
          const part = content[partIndex]!
          if (part.type !== "tool-result") continue
          const text = MessageParts.outputText(part.output)
          if (
            MessageParts.outputIsError(part.output) ||
            MessageParts.outputHasMedia(part.output) ||
            text.startsWith(REFERENCE_PREFIX)
          )
            continue
          const seenKeys: Array<[string, "file" | "identical"]> = []
          const file = fileKey(keys, part.toolName, inputs.get(part.toolCallId))
          if (file !== undefined) seenKeys.push([file, "file"])
          if (identical) seenKeys.push([`same|${part.toolName}|${text}`, "identical"])
          let newer: [Seen, "file" | "identical"] | undefined
          for (const [key, kind] of seenKeys) {
            const hit = newest.get(key)
            if (hit !== undefined) {
              newer = [hit, kind]
              break
            }
          }
          if (newer === undefined) {
            for (const [key] of seenKeys) newest.set(key, { itemIndex, partIndex, part })
            continue
          }
          if (text.length < minChars) continue
          const entryId = view.items[itemIndex]!.entryId
          const reference = referenceText(newer[1], part, entryId, newer[0].part.toolCallId)
          ViewEdit.setPart(replaced, itemIndex, partIndex, MessageParts.withTextOutput(part, reference))
          freedChars += text.length - reference.length
        }
      }
      const edits = ViewEdit.replaceParts(
        view.items,
        replaced,
        NAME,
        "older duplicate tool result replaced by a reference to the newest"
      )
      return {
        edits,
        // An estimate (4 characters per token); the pipeline re-measures exactly.
        tokensFreed: Math.round(freedChars / 4),
        note: `${[...replaced.values()].reduce((total, parts) => total + parts.size, 0)} duplicate result(s)`
      }
    }
  }
}

/**
 * The strategy with default options.
 *
 * @category constructors
 */
export const dedupe: Strategy.Strategy = make()
