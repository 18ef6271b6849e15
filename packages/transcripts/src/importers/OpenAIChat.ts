/**
 * Importer for OpenAI Chat Completions JSON: a message array, a request
 * body (`{ model, messages, tools }`), a response (`{ choices }`), or
 * `{ request, response }` / `{ messages, choices }` (the response's message
 * is appended).
 *
 * | OpenAI | core |
 * |---|---|
 * | `system` / `developer` | system message (text parts joined with `\n`) |
 * | `user` (string or `text` / `image_url` / `input_audio` / `file` parts) | user message; `data:` URLs become base64 + media type |
 * | `assistant` (`content`, `tool_calls`, legacy `function_call`, `reasoning_content`, `refusal`) | assistant message; arguments parsed from JSON (kept as the raw string when invalid) |
 * | `tool` (`tool_call_id`) / legacy `function` (`name`) | tool message; tool name from the matching call |
 *
 * @since 0.1.0
 */
import type { Message } from "@context-engine/core"
import { type EntryBuilder, isObject, meta } from "./EntryBuilder.ts"
import type { DocumentFormat } from "./Format.ts"

type Obj = Record<string, unknown>
const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/**
 * Splits a `data:` URL into media type and base64 data.
 *
 * @category utils
 */
export const parseDataUrl = (url: string): { mediaType: string; data: string } | undefined => {
  const match = /^data:([^;,]+)?(;base64)?,(.*)$/s.exec(url)
  if (match === null) return undefined
  const data = match[2] ? match[3]! : Buffer.from(decodeURIComponent(match[3]!)).toString("base64")
  return { mediaType: match[1] ?? "application/octet-stream", data }
}

const textOf = (content: unknown): string =>
  typeof content === "string"
    ? content
    : Array.isArray(content)
      ? content
          .filter(isObject)
          .map((part) => str(part.text) ?? str(part.refusal) ?? "")
          .join("\n")
      : ""

const userPart = (part: Obj): Message.UserContentPart | undefined => {
  if (part.type === "text") return { type: "text", text: str(part.text) ?? "" }
  if (part.type === "image_url") {
    const url = isObject(part.image_url) ? str(part.image_url.url) : str(part.image_url)
    if (url === undefined) return undefined
    const data = parseDataUrl(url)
    return data ? { type: "image", image: data.data, mediaType: data.mediaType } : { type: "image", image: url }
  }
  if (part.type === "input_audio" && isObject(part.input_audio))
    return {
      type: "file",
      data: str(part.input_audio.data) ?? "",
      mediaType: `audio/${str(part.input_audio.format) ?? "wav"}`
    }
  if (part.type === "file" && isObject(part.file)) {
    const fileData = str(part.file.file_data)
    const parsed = fileData ? parseDataUrl(fileData) : undefined
    const filename = str(part.file.filename)
    return {
      type: "file",
      data: parsed?.data ?? fileData ?? str(part.file.file_id) ?? "",
      mediaType: parsed?.mediaType ?? "application/pdf",
      ...(filename ? { filename } : {})
    }
  }
  return undefined
}

const parseArguments = (raw: unknown): unknown => {
  if (typeof raw !== "string") return raw ?? {}
  if (raw.trim().length === 0) return {}
  try {
    return JSON.parse(raw)
  } catch {
    return raw
  }
}

/**
 * One OpenAI chat message as a core message, collecting call id → tool
 * name in `names` for later tool messages.
 *
 * @category conversions
 */
export const toMessage = (
  m: Obj,
  index: number,
  names: Map<string, string>
): { message: Message.Message } | { error: string } => {
  switch (m.role) {
    case "system":
    case "developer":
      return { message: { role: "system", content: textOf(m.content) } }
    case "user":
      return {
        message: {
          role: "user",
          content:
            typeof m.content === "string"
              ? m.content
              : Array.isArray(m.content)
                ? m.content.filter(isObject).flatMap((part) => {
                    const converted = userPart(part)
                    return converted ? [converted] : []
                  })
                : ""
        }
      }
    case "assistant": {
      const parts: Array<Message.AssistantContentPart> = []
      const reasoning = str(m.reasoning_content) ?? str(m.reasoning)
      if (reasoning !== undefined && reasoning.length > 0) parts.push({ type: "reasoning", text: reasoning })
      const text = textOf(m.content)
      if (text.length > 0) parts.push({ type: "text", text })
      if (typeof m.refusal === "string" && m.refusal.length > 0) parts.push({ type: "text", text: m.refusal })
      const calls = Array.isArray(m.tool_calls) ? m.tool_calls.filter(isObject) : []
      calls.forEach((call, callIndex) => {
        const fn = isObject(call.function) ? call.function : {}
        const id = str(call.id) ?? `call_${index}_${callIndex}`
        const name = str(fn.name) ?? ""
        names.set(id, name)
        parts.push({ type: "tool-call", toolCallId: id, toolName: name, input: parseArguments(fn.arguments) })
      })
      if (isObject(m.function_call)) {
        const id = `function_call_${index}`
        const name = str(m.function_call.name) ?? ""
        names.set(id, name)
        names.set(`function:${name}`, id)
        parts.push({
          type: "tool-call",
          toolCallId: id,
          toolName: name,
          input: parseArguments(m.function_call.arguments)
        })
      }
      return { message: { role: "assistant", content: parts } }
    }
    case "tool": {
      const ids =
        typeof m.tool_call_id === "string"
          ? [m.tool_call_id]
          : Array.isArray(m.tool_call_ids)
            ? m.tool_call_ids.filter((id): id is string => typeof id === "string")
            : []
      if (ids.length === 0) return { error: "tool message without tool_call_id" }
      const value = textOf(m.content)
      return {
        message: {
          role: "tool",
          content: ids.map((toolCallId) => ({
            type: "tool-result" as const,
            toolCallId,
            toolName: names.get(toolCallId) ?? str(m.name) ?? "",
            output: { type: "text" as const, value }
          }))
        }
      }
    }
    case "function": {
      const name = str(m.name) ?? ""
      const toolCallId = names.get(`function:${name}`) ?? `function_call_${index}`
      return {
        message: {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId, toolName: name, output: { type: "text", value: textOf(m.content) } }
          ]
        }
      }
    }
    default:
      return { error: `unknown message role ${JSON.stringify(m.role)}` }
  }
}

/**
 * The message list of an OpenAI document, or `undefined`.
 *
 * @category utils
 */
export const messagesOf = (document: unknown): ReadonlyArray<unknown> | undefined => {
  if (Array.isArray(document)) return document
  if (!isObject(document)) return undefined
  const request = isObject(document.request) ? document.request : document
  const response = isObject(document.response) ? document.response : document
  const messages = Array.isArray(request.messages) ? [...request.messages] : []
  if (Array.isArray(response.choices)) {
    const first = response.choices.find(isObject)
    if (first !== undefined && isObject(first.message)) messages.push(first.message)
  }
  return messages.length > 0 || Array.isArray(request.messages) ? messages : undefined
}

const hasOpenAIMarkers = (message: unknown): boolean =>
  isObject(message) &&
  (Array.isArray(message.tool_calls) ||
    typeof message.tool_call_id === "string" ||
    message.role === "developer" ||
    message.role === "function" ||
    isObject(message.function_call) ||
    (message.role === "assistant" && message.content === null) ||
    (Array.isArray(message.content) &&
      message.content.some((part) => isObject(part) && (part.type === "image_url" || part.type === "input_audio"))))

/**
 * Imports a parsed document into `builder`, one entry per message with id
 * `openai:<index>`.
 *
 * @category importers
 */
export const importMessages = (builder: EntryBuilder, messages: ReadonlyArray<unknown>, prefix: string): void => {
  const names = new Map<string, string>()
  builder.startSession(prefix)
  for (const [index, raw] of messages.entries()) {
    if (!isObject(raw)) {
      builder.skip(0, `messages[${index}] is not an object`)
      continue
    }
    const converted = toMessage(raw, index, names)
    if ("error" in converted) {
      builder.skip(0, `messages[${index}]: ${converted.error}`)
      continue
    }
    builder.message(index, converted.message, {
      id: `${prefix}:${index}`,
      meta: meta({ name: raw.role === "function" ? undefined : raw.name })
    })
  }
}

/**
 * The OpenAI Chat Completions importer.
 *
 * @category importers
 */
export const format: DocumentFormat = {
  id: "openai-chat",
  kind: "document",
  prefix: "openai",
  markers:
    "a JSON document with `choices` or `response`, or messages with `tool_calls`, `tool_call_id` or a `developer` role",
  detect: (document) => {
    if (isObject(document) && (Array.isArray(document.choices) || isObject(document.response))) return true
    const messages = messagesOf(document)
    return messages?.some(hasOpenAIMarkers) === true
  },
  fromValue: (builder, document) => importMessages(builder, messagesOf(document) ?? [], "openai")
}
