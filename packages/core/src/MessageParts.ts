/**
 * The one home of message-part helpers: a message's content parts, a tool
 * output as text (with one text for a denied call), whether an output is an
 * error or carries media, rebuilding a message with new parts, and JSON
 * string-leaf mapping (so a clamped tool-call argument object stays valid
 * JSON). Used by the measurer, identifier extraction, the strategies, the
 * summarizers and the exporters.
 *
 * @since 0.2.0
 */
import * as JsonSafety from "./JsonSafety.ts"
import type { ContentPart, Message, ToolResultOutput, ToolResultPart } from "./Message.ts"

/**
 * The text a denied tool call's result carries: its reason, or
 * `"Tool call execution denied."` when it has none. That is the text the AI
 * SDK's provider packages send for an `execution-denied` output
 * (`@ai-sdk/openai` chat and responses converters), so counting, summarizing
 * and exporting it say what the model will read.
 *
 * @category getters
 */
export const deniedText = (reason: string | undefined): string => reason ?? "Tool call execution denied."

/**
 * Options of {@link outputText}.
 *
 * @category models
 */
export interface OutputTextOptions {
  /** Write `[image]` / `[file]`-style markers for media items (default: media items contribute nothing). */
  readonly mediaMarkers?: boolean
}

/**
 * The textual payload of a tool result (what dominates its token count):
 * text values as they are, JSON serialized, a denied call as
 * {@link deniedText}, multi-part content as its text items joined by `\n`
 * (media items dropped, or as markers with `mediaMarkers`).
 *
 * @example
 * ```ts
 * import { MessageParts } from "@context-engine/core"
 * MessageParts.outputText({ type: "json", value: { ok: true } }) // '{"ok":true}'
 * MessageParts.outputText({ type: "execution-denied" }) // "Tool call execution denied."
 * ```
 *
 * @category getters
 */
export const outputText = (output: ToolResultOutput, options: OutputTextOptions = {}): string => {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value
    case "json":
    case "error-json":
      return JSON.stringify(output.value) ?? ""
    case "execution-denied":
      return deniedText(output.reason)
    case "content":
      return output.value
        .flatMap((item) => (item.type === "text" ? [item.text] : options.mediaMarkers ? [`[${item.type}]`] : []))
        .join("\n")
  }
}

/**
 * Whether a tool result carries images or files.
 *
 * @category guards
 */
export const outputHasMedia = (output: ToolResultOutput): boolean =>
  output.type === "content" && output.value.some((item) => item.type !== "text")

/**
 * Whether the output is an error: `error-text`, `error-json`, or a denied call.
 *
 * @category guards
 */
export const outputIsError = (output: ToolResultOutput): boolean =>
  output.type === "error-text" || output.type === "error-json" || output.type === "execution-denied"

/**
 * A copy of `part` with a text output (keeps id, name and provider options).
 *
 * @category constructors
 */
export const withTextOutput = (part: ToolResultPart, text: string): ToolResultPart => ({
  ...part,
  output: { type: outputIsError(part.output) ? "error-text" : "text", value: text }
})

/**
 * The message's content parts (a string becomes one text part).
 *
 * @category getters
 */
export const contentParts = (message: Message): ReadonlyArray<ContentPart> =>
  typeof message.content === "string"
    ? message.content.length === 0
      ? []
      : [{ type: "text", text: message.content }]
    : message.content

/**
 * A copy of `message` with `parts` as content (keeps role and provider options).
 *
 * @category constructors
 */
export const withParts = (message: Message, parts: ReadonlyArray<ContentPart>): Message =>
  ({ ...message, content: parts }) as Message

/**
 * Whether a message has nothing to send: empty string, no parts, or only
 * empty text parts.
 *
 * @category guards
 */
export const isEmptyMessage = (message: Message): boolean => {
  if (typeof message.content === "string") return message.content.trim().length === 0
  return message.content.every((part) => part.type === "text" && part.text.trim().length === 0)
}

/**
 * The text of the text parts of a message's content, joined by `\n`.
 *
 * @category getters
 */
export const textOf = (content: Message["content"]): string =>
  typeof content === "string"
    ? content
    : (content as ReadonlyArray<ContentPart>).flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

/**
 * Plain text of a message, as validation and transcript search read it:
 * text parts, tool-call names and every string of their arguments
 * (unescaped, so commands match verbatim), tool-result outputs (text values
 * as they are, multi-part content as its text items, other outputs as the
 * output serialized). Reasoning is left out.
 *
 * @category getters
 */
export const plainText = (message: Message): string => {
  if (typeof message.content === "string") return message.content
  const out: Array<string> = []
  for (const part of message.content as ReadonlyArray<ContentPart>) {
    if (part.type === "text") out.push(part.text)
    else if (part.type === "tool-call") {
      out.push(part.toolName)
      for (const leaf of JsonSafety.stringLeaves(part.input)) out.push(leaf)
    } else if (part.type === "tool-result") {
      const output = part.output
      out.push(
        output.type === "text" || output.type === "error-text"
          ? output.value
          : output.type === "content"
            ? output.value.map((item) => (item.type === "text" ? item.text : "")).join("\n")
            : JSON.stringify(output)
      )
    }
  }
  return out.join("\n")
}

/**
 * Whether an assistant message holds only reasoning parts.
 *
 * @category guards
 */
export const isReasoningOnly = (message: Message): boolean =>
  message.role === "assistant" &&
  typeof message.content !== "string" &&
  message.content.length > 0 &&
  message.content.every((part) => part.type === "reasoning" || part.type === "reasoning-file")

/**
 * Maps every string leaf of a JSON-like value; other leaves, arrays and
 * object keys are kept, so the result serializes to valid JSON whenever the
 * input did. Returns the same object when no leaf changed.
 *
 * @category combinators
 */
export const mapStrings = (value: unknown, f: (text: string) => string): unknown => {
  if (typeof value === "string") return f(value)
  if (Array.isArray(value)) {
    let changed = false
    const out = value.map((element) => {
      const mapped = mapStrings(element, f)
      if (mapped !== element) changed = true
      return mapped
    })
    return changed ? out : value
  }
  if (value !== null && typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    let changed = false
    const out: Record<string, unknown> = {}
    for (const [key, element] of Object.entries(value)) {
      const mapped = mapStrings(element, f)
      if (mapped !== element) changed = true
      out[key] = mapped
    }
    return changed ? out : value
  }
  return value
}
