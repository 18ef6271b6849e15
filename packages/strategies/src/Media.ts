/**
 * `media`: images and files in older turns are replaced by a text reference
 * that keeps what a reader needs to know they were there: name, media type,
 * pixel dimensions (read from inline data) and the transcript entry that
 * holds the original. Oldest first; stops once the view is estimated to fit.
 *
 * Covers user image and file parts, assistant file parts and the media items
 * of tool results. Media in the most recent turns and in the latest user
 * message is never replaced.
 *
 * @since 0.1.0
 */

import type { Message, Strategy, ViewEdit } from "@context-engine/core"
import { MediaTokens, MessageParts, Turns } from "@context-engine/core"
import * as Invariants from "./Invariants.ts"

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  /**
   * Most recent turns whose media is kept, counting the turn in progress.
   * Default 4: the turn in progress plus the 3 most recent completed turns
   * that OpenClaw's image cleanup keeps byte for byte.
   */
  readonly keepRecentTurns?: number
  /** Prompt-cache guard (tokens). Default 0. */
  readonly minReclaimTokens?: number
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = { keepRecentTurns: 4, minReclaimTokens: 0 } as const satisfies Required<Options>

/**
 * Name of the strategy (and of its stage in reports).
 *
 * @category constants
 */
export const NAME = "media"

/**
 * What a reference says about one media item.
 *
 * @category models
 */
export interface Described {
  readonly kind: "image" | "file"
  readonly name?: string
  readonly mediaType?: string
  readonly dimensions?: MediaTokens.Dimensions
}

/**
 * The reference text for a removed media item.
 *
 * @category constructors
 */
export const referenceText = (described: Described, entryId: string): string => {
  const facts = [
    described.name,
    described.mediaType,
    described.dimensions ? `${described.dimensions.width}×${described.dimensions.height} px` : undefined
  ].filter((fact): fact is string => fact !== undefined && fact.length > 0)
  return `[${described.kind} removed from context${facts.length > 0 ? `: ${facts.join(", ")}` : ""}; original in transcript entry ${entryId}]`
}

const urlName = (url: unknown): string | undefined => {
  const text =
    url instanceof URL ? url.href : typeof url === "string" && /^(https?|gs|s3|file):/.test(url) ? url : undefined
  return text === undefined ? undefined : text.split("/").pop()?.split("?")[0]
}

type ResultItem = Extract<Message.ToolResultOutput, { type: "content" }>["value"][number]

const describePart = (part: Message.ContentPart): Described | undefined => {
  if (part.type === "image") {
    const name = urlName(part.image)
    const dimensions = MediaTokens.imageDimensions(part.image)
    return {
      kind: "image",
      ...(name ? { name } : {}),
      ...(part.mediaType ? { mediaType: part.mediaType } : {}),
      ...(dimensions ? { dimensions } : {})
    }
  }
  if (part.type === "file") {
    const inline = typeof part.data === "object" && part.data !== null && "type" in part.data ? part.data : undefined
    const raw = inline === undefined ? part.data : inline.type === "data" ? inline.data : undefined
    const dimensions =
      part.mediaType.startsWith("image/") && raw !== undefined ? MediaTokens.imageDimensions(raw) : undefined
    const name = part.filename ?? urlName(inline?.type === "url" ? inline.url : raw)
    return {
      kind: part.mediaType.startsWith("image/") ? "image" : "file",
      mediaType: part.mediaType,
      ...(name ? { name } : {}),
      ...(dimensions ? { dimensions } : {})
    }
  }
  return undefined
}

const describeItem = (item: ResultItem): Described | undefined => {
  switch (item.type) {
    case "text":
    case "custom":
      return undefined
    case "image-data": {
      const dimensions = MediaTokens.imageDimensions(item.data)
      return { kind: "image", mediaType: item.mediaType, ...(dimensions ? { dimensions } : {}) }
    }
    case "file-data": {
      const dimensions = item.mediaType.startsWith("image/") ? MediaTokens.imageDimensions(item.data) : undefined
      return {
        kind: item.mediaType.startsWith("image/") ? "image" : "file",
        mediaType: item.mediaType,
        ...(item.filename ? { name: item.filename } : {}),
        ...(dimensions ? { dimensions } : {})
      }
    }
    case "image-url":
      return { kind: "image", ...(urlName(item.url) ? { name: urlName(item.url)! } : {}) }
    case "file-url":
      return {
        kind: "file",
        ...(urlName(item.url) ? { name: urlName(item.url)! } : {}),
        ...(item.mediaType ? { mediaType: item.mediaType } : {})
      }
    case "file":
      return {
        kind: item.mediaType.startsWith("image/") ? "image" : "file",
        mediaType: item.mediaType,
        ...(item.filename ? { name: item.filename } : {})
      }
    default:
      return { kind: item.type.startsWith("image") ? "image" : "file" }
  }
}

/**
 * The message with its media replaced by references, or `undefined` when it
 * has none.
 *
 * @category combinators
 */
export const replaceMedia = (message: Message.Message, entryId: string): Message.Message | undefined => {
  if (typeof message.content === "string") return undefined
  let changed = false
  const parts = (message.content as ReadonlyArray<Message.ContentPart>).map((part): Message.ContentPart => {
    const described = describePart(part)
    if (described !== undefined) {
      changed = true
      return { type: "text", text: referenceText(described, entryId) }
    }
    if (part.type === "tool-result" && part.output.type === "content") {
      let itemChanged = false
      const value = part.output.value.map((item): ResultItem => {
        const about = describeItem(item)
        if (about === undefined) return item
        itemChanged = true
        return { type: "text", text: referenceText(about, entryId) }
      })
      if (!itemChanged) return part
      changed = true
      return { ...part, output: { ...part.output, value } }
    }
    return part
  })
  return changed ? MessageParts.withParts(message, parts) : undefined
}

/**
 * Builds the strategy.
 *
 * @category constructors
 */
export const make = (options: Options = {}): Strategy.Strategy => {
  const keepRecentTurns = Math.max(1, options.keepRecentTurns ?? defaults.keepRecentTurns)
  return {
    name: NAME,
    minReclaimTokens: options.minReclaimTokens ?? defaults.minReclaimTokens,
    apply: ({ view, measurement, targetTokens, measurer }) => {
      const spans = Turns.turns(view.items)
      const end = spans.length > keepRecentTurns ? spans[spans.length - keepRecentTurns]!.start : 0
      const guard = Invariants.protectedOf(view)
      const needed = measurement.inputTokens - targetTokens
      const edits: Array<ViewEdit.ViewEdit> = []
      let freed = 0
      for (let index = 0; index < end && freed < needed; index++) {
        const item = view.items[index]!
        if (!Invariants.isEditable(guard, item.entryId)) continue
        const replaced = replaceMedia(item.message, item.entryId)
        if (replaced === undefined) continue
        const saved = measurer.messageTokens(item.message, item.source) - measurer.messageTokens(replaced, item.source)
        if (saved <= 0) continue
        freed += saved
        edits.push({
          op: "replace",
          entryId: item.entryId,
          message: replaced,
          strategy: NAME,
          reason: "old media replaced by a text reference"
        })
      }
      return { edits, tokensFreed: freed, note: `${edits.length} message(s) with media` }
    }
  }
}

/**
 * The strategy with default options.
 *
 * @category constructors
 */
export const media: Strategy.Strategy = make()
