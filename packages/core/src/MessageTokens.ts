/**
 * Counting one message by category: which text of which part lands in which
 * {@link Category}, plus the per-message framing every chat format adds.
 * `Measurer.ts` caches these counts per message and sums them per view.
 *
 * @since 0.1.0
 */
import type { ItemSource } from "./ContextView.ts"
import type { Category } from "./Measurement.ts"
import * as MediaTokens from "./MediaTokens.ts"
import type { ContentPart, Message, ToolResultContentItem, ToolResultOutput } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"
import * as OpaqueParts from "./OpaqueParts.ts"
import * as ReasoningTokens from "./ReasoningTokens.ts"
import type { Tokenizer } from "./Tokenizer.ts"

/**
 * Framing tokens per message: 3, from OpenAI's cookbook "How to count tokens
 * with tiktoken" (`tokens_per_message = 3` for gpt-3.5-turbo-0613, gpt-4 and
 * gpt-4o: `<|start|>{role}<|message|>…<|end|>`). Other providers wrap
 * messages similarly and publish no number; the same 3 is used for them.
 * Reported in the `framing` category.
 *
 * @category constants
 */
export const messageFramingTokens = 3

/**
 * Tokens priming the reply (`<|start|>assistant<|message|>`), counted once
 * per request: 3, from the same cookbook ("every reply is primed with
 * <|start|>assistant<|message|>"). Reported in the `framing` category.
 *
 * @category constants
 */
export const replyPrimingTokens = 3

/** Re-exported for measurement notes. @category constants */
export const unknownImageTokens = MediaTokens.unknownImageTokens

/**
 * Options for counting a message.
 *
 * @category models
 */
export interface Options {
  readonly tokenizer: Tokenizer
  readonly mediaFamily: MediaTokens.MediaFamily
  /** Defaults to {@link messageFramingTokens}. */
  readonly messageFramingTokens?: number
  /** How prior-turn reasoning counts; default `all-turns` (see `ReasoningTokens`). */
  readonly reasoningRule?: ReasoningTokens.Rule
  /** Where the message sits: `prior` turns' reasoning is stripped under `current-tool-loop`; default `current`. */
  readonly reasoningPosition?: ReasoningTokens.Position
}

/**
 * The count of one message.
 *
 * @category models
 */
export interface MessageCount {
  /** Tokens by category, the message's framing under `framing`; categories with 0 tokens are omitted. */
  readonly byCategory: Partial<Record<Category, number>>
  /** Sum of `byCategory`. */
  readonly totalTokens: number
  /** Images counted with {@link MediaTokens.unknownImageTokens} (pixels unreadable). */
  readonly unknownImages: number
  /** Files whose tokens are an estimate (PDF pages, unknown binaries). */
  readonly estimatedFiles: number
}

interface Accumulator {
  readonly byCategory: Partial<Record<Category, number>>
  unknownImages: number
  estimatedFiles: number
}

const add = (acc: Accumulator, category: Category, tokens: number): void => {
  if (tokens > 0) acc.byCategory[category] = (acc.byCategory[category] ?? 0) + tokens
}

/**
 * JSON text of tool arguments / JSON outputs as sent to the model (a string
 * input is taken as already-serialized arguments).
 *
 * @category counting
 */
export const jsonText = (value: unknown): string => {
  if (typeof value === "string") return value
  if (value === undefined) return ""
  try {
    return JSON.stringify(value) ?? ""
  } catch {
    return String(value)
  }
}

const detailOf = (providerOptions: unknown): "low" | "high" | "auto" | undefined => {
  const detail = (providerOptions as { openai?: { imageDetail?: unknown } } | undefined)?.openai?.imageDetail
  return detail === "low" || detail === "high" || detail === "auto" ? detail : undefined
}

const image = (acc: Accumulator, options: Options, data: unknown, providerOptions: unknown): number => {
  const dimensions = MediaTokens.imageDimensions(data)
  if (dimensions === undefined) acc.unknownImages++
  return MediaTokens.imageTokens(options.mediaFamily, dimensions, detailOf(providerOptions))
}

const isTextMediaType = (mediaType: string): boolean =>
  mediaType.startsWith("text/") || /json|xml|yaml|csv|javascript|typescript/.test(mediaType)

/** Tokens of a file (`data` in any `FilePart` / tool-result file form). */
const file = (
  acc: Accumulator,
  options: Options,
  data: unknown,
  mediaType: string | undefined,
  providerOptions: unknown
): number => {
  const type = mediaType ?? ""
  const tagged = data as { type?: string; data?: unknown; text?: unknown; url?: unknown } | undefined
  const inner = typeof tagged === "object" && tagged !== null && "type" in tagged ? tagged : undefined
  if (inner?.type === "text" && typeof inner.text === "string") return options.tokenizer.count(inner.text)
  const payload = inner?.type === "data" ? inner.data : inner === undefined ? data : undefined
  if (type.startsWith("image/")) return image(acc, options, payload, providerOptions)
  const bytes = MediaTokens.inlineBytes(payload)
  if (bytes !== undefined && isTextMediaType(type)) return options.tokenizer.count(new TextDecoder().decode(bytes))
  acc.estimatedFiles++
  if (bytes !== undefined && type === "application/pdf") {
    return (MediaTokens.pdfPageCount(bytes) ?? 1) * MediaTokens.pdfPageTokensFor(options.mediaFamily)
  }
  return MediaTokens.unknownFileTokens
}

const resultItem = (acc: Accumulator, options: Options, item: ToolResultContentItem, textCategory: Category): void => {
  const count = options.tokenizer.count
  switch (item.type) {
    case "text":
      add(acc, textCategory, count(item.text))
      return
    case "image-data":
      add(acc, "media", image(acc, options, item.data, item.providerOptions))
      return
    case "image-url":
    case "image-file-id":
    case "image-file-reference":
      add(acc, "media", image(acc, options, undefined, item.providerOptions))
      return
    case "file":
      add(acc, "media", file(acc, options, item.data, item.mediaType, item.providerOptions))
      return
    case "file-data":
      add(acc, "media", file(acc, options, item.data, item.mediaType, item.providerOptions))
      return
    case "file-url":
    case "file-id":
    case "file-reference":
      add(acc, "media", file(acc, options, undefined, "mediaType" in item ? item.mediaType : undefined, undefined))
      return
    case "custom":
      add(acc, textCategory, OpaqueParts.customTokens(item, count))
      return
  }
}

const toolOutput = (acc: Accumulator, options: Options, output: ToolResultOutput, category: Category): void => {
  const count = options.tokenizer.count
  switch (output.type) {
    case "text":
    case "error-text":
      add(acc, category, count(output.value))
      return
    case "json":
    case "error-json":
      add(acc, category, count(jsonText(output.value)))
      return
    case "execution-denied":
      add(acc, category, count(MessageParts.deniedText(output.reason)))
      return
    case "content":
      for (const item of output.value) resultItem(acc, options, item, category)
      return
  }
}

const part = (acc: Accumulator, options: Options, p: ContentPart, text: Category, override: boolean): void => {
  const count = options.tokenizer.count
  // Checkpoint / memory items put all their text in their own category.
  const as = (category: Category): Category => (override ? text : category)
  switch (p.type) {
    case "text":
      add(acc, text, count(p.text))
      return
    case "reasoning":
      add(
        acc,
        as("reasoning"),
        ReasoningTokens.partTokens(
          p,
          options.reasoningRule ?? "all-turns",
          options.reasoningPosition ?? "current",
          count
        )
      )
      return
    case "tool-call":
      add(acc, as("toolCalls"), count(p.toolName) + count(p.toolCallId) + count(jsonText(p.input)))
      return
    case "tool-result":
      add(acc, as("toolResults"), count(p.toolName) + count(p.toolCallId))
      toolOutput(acc, options, p.output, as("toolResults"))
      return
    case "tool-approval-request":
      add(acc, as("toolCalls"), count(p.toolCallId) + count(p.approvalId) + count(p.reason ?? ""))
      return
    case "tool-approval-response":
      add(
        acc,
        as("toolResults"),
        count(p.approvalId) + count(p.reason ?? "") + count(p.approved ? "approved" : "denied")
      )
      return
    case "image":
      add(acc, "media", image(acc, options, p.image, p.providerOptions))
      return
    case "file":
      add(acc, "media", file(acc, options, p.data, p.mediaType, p.providerOptions))
      return
    case "reasoning-file":
      add(acc, "media", file(acc, options, p.data, p.mediaType, p.providerOptions))
      return
    case "custom":
      // Opaque provider items: a fixed documented rule, never their payload's length (OpaqueParts).
      add(acc, OpaqueParts.isCompactionItem(p) ? "checkpoint" : text, OpaqueParts.customTokens(p, count))
      return
  }
}

/**
 * The category a message's text belongs to: `checkpoint` / `memory` for
 * items from those sources, otherwise by role. (Its framing is `framing`.)
 *
 * @category counting
 */
export const textCategory = (message: Message, source: ItemSource | undefined): Category => {
  if (source === "checkpoint") return "checkpoint"
  if (source === "memory") return "memory"
  switch (message.role) {
    case "system":
      return "system"
    case "user":
      return "userText"
    case "assistant":
      return "assistantText"
    case "tool":
      return "toolResults"
  }
}

/**
 * Counts one message: each part's text with the tokenizer, media by pixels,
 * plus {@link messageFramingTokens} in the `framing` category.
 *
 * @category counting
 */
export const count = (message: Message, source: ItemSource | undefined, options: Options): MessageCount => {
  const acc: Accumulator = { byCategory: {}, unknownImages: 0, estimatedFiles: 0 }
  const category = textCategory(message, source)
  const override = source === "checkpoint" || source === "memory"
  if (typeof message.content === "string") add(acc, category, options.tokenizer.count(message.content))
  else for (const p of message.content as ReadonlyArray<ContentPart>) part(acc, options, p, category, override)
  add(acc, "framing", options.messageFramingTokens ?? messageFramingTokens)
  let totalTokens = 0
  for (const tokens of Object.values(acc.byCategory)) totalTokens += tokens ?? 0
  return {
    byCategory: acc.byCategory,
    totalTokens,
    unknownImages: acc.unknownImages,
    estimatedFiles: acc.estimatedFiles
  }
}
