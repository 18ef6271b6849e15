/**
 * Part-level helpers shared by the built-in strategies: the text of a tool
 * result, rebuilding a message with new parts, and JSON string-leaf mapping
 * (so a clamped tool-call argument object stays valid JSON).
 *
 * @since 0.1.0
 */
import type { Message as M } from "@context-engine/core"

type ContentPart = M.ContentPart
type Message = M.Message
type ToolResultOutput = M.ToolResultOutput
type ToolResultPart = M.ToolResultPart

/**
 * The textual payload of a tool result (what dominates its token count).
 * JSON outputs are serialized; media items contribute nothing.
 *
 * @category getters
 */
export const outputText = (output: ToolResultOutput): string => {
  switch (output.type) {
    case "text":
    case "error-text":
      return output.value
    case "json":
    case "error-json":
      return JSON.stringify(output.value) ?? ""
    case "execution-denied":
      return output.reason ?? ""
    case "content":
      return output.value.map((item) => (item.type === "text" ? item.text : "")).join("\n")
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
 * Whether the output is an error.
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
