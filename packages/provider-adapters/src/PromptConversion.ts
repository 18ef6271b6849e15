/**
 * Conversion between the provider-level prompt a middleware sees
 * (`LanguageModelV4Prompt` of `@ai-sdk/provider`) and our {@link Message}
 * (the AI SDK `ModelMessage` shape).
 *
 * - V4 → Message is lossless and allocation-free: every V4 message is already
 *   a valid `Message` (type-tested in `test/PromptConversion.test.ts`), so the
 *   same objects are returned and identity comparisons keep working.
 * - Message → V4 normalises what `ModelMessage` allows and V4 does not: string
 *   content becomes one text part, `image` parts become `file` parts, untagged
 *   file data becomes tagged `{ type: "data" | "url" | "reference" }`, tool
 *   result items (`image-data`, `file-url`, …) become `file` items, and
 *   assistant `tool-approval-request` parts are dropped (V4 prompts carry no
 *   such part). `providerOptions` (reasoning signatures, cache control,
 *   compaction markers) are kept at message, part and output level.
 *
 * The AI SDK's own `convertToLanguageModelPrompt` is exported only from
 * `ai/internal` (not a public API) and downloads URL assets; messages reaching
 * a middleware were already converted by it, so a synchronous structural
 * conversion is enough here.
 *
 * @since 0.1.0
 */
import type {
  LanguageModelV4FilePart,
  LanguageModelV4Message,
  LanguageModelV4Prompt,
  LanguageModelV4ToolResultOutput,
  LanguageModelV4ToolResultPart,
  SharedV4FileData,
  SharedV4ProviderOptions
} from "@ai-sdk/provider"
import type { Message } from "@context-engine/core"
import * as PromptAlignment from "./PromptAlignment.ts"

type AnyMessage = Message.Message

/**
 * The prompt as messages. Returns the same message objects.
 *
 * @category conversions
 */
export const fromPrompt = (prompt: LanguageModelV4Prompt): Array<AnyMessage> => prompt as Array<AnyMessage>

const withOptions = <A extends object>(value: A, providerOptions: unknown): A =>
  providerOptions === undefined ? value : { ...value, providerOptions: providerOptions as SharedV4ProviderOptions }

const isTagged = (data: unknown): data is SharedV4FileData =>
  typeof data === "object" &&
  data !== null &&
  !(data instanceof Uint8Array) &&
  !(data instanceof URL) &&
  !(data instanceof ArrayBuffer) &&
  "type" in data &&
  ["data", "url", "reference", "text"].includes((data as { type: string }).type)

const toFileData = (data: unknown): SharedV4FileData => {
  if (isTagged(data)) return data
  if (data instanceof URL) return { type: "url", url: data }
  if (data instanceof Uint8Array) return { type: "data", data }
  if (data instanceof ArrayBuffer) return { type: "data", data: new Uint8Array(data) }
  if (typeof data === "string") {
    if (/^(https?|data):/i.test(data)) return { type: "url", url: new URL(data) }
    return { type: "data", data }
  }
  return { type: "reference", reference: data as Record<string, string> }
}

const filePart = (data: unknown, mediaType: string, filename: string | undefined, providerOptions: unknown) =>
  withOptions<LanguageModelV4FilePart>(
    { type: "file", data: toFileData(data), mediaType, ...(filename !== undefined ? { filename } : {}) },
    providerOptions
  )

type OutputItem = Extract<LanguageModelV4ToolResultOutput, { type: "content" }>["value"][number]

const toOutputItem = (item: Message.ToolResultContentItem): OutputItem => {
  const options = item.providerOptions
  switch (item.type) {
    case "text":
      return withOptions<OutputItem>({ type: "text", text: item.text }, options)
    case "file":
      return withOptions<OutputItem>(
        {
          type: "file",
          data: toFileData(item.data),
          mediaType: item.mediaType,
          ...(item.filename !== undefined ? { filename: item.filename } : {})
        },
        options
      )
    case "file-data":
    case "image-data":
      return withOptions<OutputItem>(
        {
          type: "file",
          data: { type: "data", data: item.data },
          mediaType: item.mediaType,
          ...("filename" in item && item.filename !== undefined ? { filename: item.filename } : {})
        },
        options
      )
    case "file-url":
      return withOptions<OutputItem>(
        { type: "file", data: { type: "url", url: new URL(item.url) }, mediaType: item.mediaType ?? "application" },
        options
      )
    case "image-url":
      return withOptions<OutputItem>(
        { type: "file", data: { type: "url", url: new URL(item.url) }, mediaType: "image" },
        options
      )
    case "file-reference":
    case "image-file-reference":
      return withOptions<OutputItem>(
        {
          type: "file",
          data: { type: "reference", reference: item.providerReference },
          mediaType: item.type === "image-file-reference" ? "image" : "application"
        },
        options
      )
    case "file-id":
    case "image-file-id":
      return withOptions<OutputItem>(
        {
          type: "file",
          data: {
            type: "reference",
            reference: typeof item.fileId === "string" ? { openai: item.fileId } : item.fileId
          },
          mediaType: item.type === "image-file-id" ? "image" : "application"
        },
        options
      )
    case "custom":
      return withOptions<OutputItem>({ type: "custom" }, options)
  }
}

const toOutput = (output: Message.ToolResultOutput): LanguageModelV4ToolResultOutput =>
  output.type === "content"
    ? withOptions<LanguageModelV4ToolResultOutput>(
        { type: "content", value: output.value.map(toOutputItem) },
        output.providerOptions
      )
    : (output as LanguageModelV4ToolResultOutput)

const toToolResult = (part: Message.ToolResultPart): LanguageModelV4ToolResultPart =>
  part.output.type !== "content"
    ? (part as LanguageModelV4ToolResultPart)
    : withOptions<LanguageModelV4ToolResultPart>(
        { type: "tool-result", toolCallId: part.toolCallId, toolName: part.toolName, output: toOutput(part.output) },
        part.providerOptions
      )

type AssistantPart = Extract<LanguageModelV4Message, { role: "assistant" }>["content"][number]
type ToolPart = Extract<LanguageModelV4Message, { role: "tool" }>["content"][number]
type UserPart = Extract<LanguageModelV4Message, { role: "user" }>["content"][number]

const toUserPart = (part: Message.UserContentPart): UserPart => {
  switch (part.type) {
    case "text":
      return part as UserPart
    case "image":
      return filePart(part.image, part.mediaType ?? "image", undefined, part.providerOptions)
    case "file":
      return filePart(part.data, part.mediaType, part.filename, part.providerOptions)
  }
}

const toAssistantParts = (part: Message.AssistantContentPart): ReadonlyArray<AssistantPart> => {
  switch (part.type) {
    case "tool-approval-request":
      return []
    case "file":
      return [filePart(part.data, part.mediaType, part.filename, part.providerOptions)]
    case "reasoning-file":
      return [
        withOptions<AssistantPart>(
          {
            type: "reasoning-file",
            data: toFileData(part.data) as { type: "data"; data: string },
            mediaType: part.mediaType
          },
          part.providerOptions
        )
      ]
    case "tool-result":
      return [toToolResult(part)]
    default:
      return [part as AssistantPart]
  }
}

const toToolPart = (part: Message.ToolContentPart): ToolPart =>
  part.type === "tool-result"
    ? toToolResult(part)
    : part.providerExecuted === undefined
      ? (part as ToolPart)
      : {
          type: "tool-approval-response",
          approvalId: part.approvalId,
          approved: part.approved,
          ...(part.reason !== undefined ? { reason: part.reason } : {})
        }

/**
 * One message in the V4 prompt shape. Returns the same object when the
 * message is already V4-shaped (the common case: messages that came from a
 * prompt and passed through an engine untouched), and the same converted
 * object for the same message object on later calls (cached by identity).
 *
 * @category conversions
 */
export const toPromptMessage = (message: AnyMessage): LanguageModelV4Message => {
  let converted = conversions.get(message)
  if (converted === undefined) {
    converted = convertMessage(message)
    conversions.set(message, converted)
  }
  return converted
}

/**
 * Conversions by message object: a request rebuilt every step (a repaired
 * or compacted view) converts only the messages it has not seen. Messages
 * are immutable values (DESIGN.md invariants).
 */
const conversions = new WeakMap<AnyMessage, LanguageModelV4Message>()

const convertMessage = (message: AnyMessage): LanguageModelV4Message => {
  switch (message.role) {
    case "system":
      return message as LanguageModelV4Message
    case "user": {
      if (typeof message.content === "string") {
        return withOptions<LanguageModelV4Message>(
          { role: "user", content: [{ type: "text", text: message.content }] },
          message.providerOptions
        )
      }
      const content = message.content.map(toUserPart)
      return content.every((part, index) => part === message.content[index])
        ? (message as LanguageModelV4Message)
        : withOptions<LanguageModelV4Message>({ role: "user", content }, message.providerOptions)
    }
    case "assistant": {
      if (typeof message.content === "string") {
        return withOptions<LanguageModelV4Message>(
          { role: "assistant", content: message.content.length > 0 ? [{ type: "text", text: message.content }] : [] },
          message.providerOptions
        )
      }
      const content = message.content.flatMap(toAssistantParts)
      return content.length === message.content.length &&
        content.every((part, index) => part === message.content[index])
        ? (message as LanguageModelV4Message)
        : withOptions<LanguageModelV4Message>({ role: "assistant", content }, message.providerOptions)
    }
    case "tool": {
      const content = message.content.map(toToolPart)
      if (content.every((part, index) => part === message.content[index])) return message as LanguageModelV4Message
      return withOptions<LanguageModelV4Message>({ role: "tool", content }, message.providerOptions)
    }
  }
}

/**
 * Messages as a V4 prompt (see the module notes for what is normalised).
 *
 * @category conversions
 */
export const toPrompt = (messages: ReadonlyArray<AnyMessage>): LanguageModelV4Prompt => messages.map(toPromptMessage)

/**
 * An incremental {@link toPrompt} for one conversation. A position whose
 * message is an object of `original` (the prompt the application sent) —
 * at that position, or shifted by messages the request dropped or inserted
 * (`PromptAlignment.near`) — keeps that prompt message as is; one whose message is the object
 * converted at that position by the previous call reuses that conversion;
 * only the rest are converted ({@link toPromptMessage}). So a request that
 * is the application's prompt with a few positions rewritten (offloaded
 * tool results), or a rewritten view that grew by a few messages, costs
 * pointer compares, one copy of the prompt array and its rewritten or new
 * messages — no read or conversion of the others, and no other array of the
 * prompt's length. A request the controller built from `original` itself
 * (`PromptAlignment.noteBuilt`) names its other positions, so only those are
 * visited: one copy of the request, no pass over the rest — and none when
 * each of those positions already holds a V4-shaped message (the prompt's
 * own messages, minus what normalization dropped, plus e.g. synthesized tool
 * results): that request is returned as it is (issue #13 req 1: one
 * session-length array less per step). Otherwise a new array each call.
 * The arrays passed are neither kept nor changed, and no message of
 * `original` is remembered.
 *
 * @category conversions
 */
export const makeToPrompt = (): ((
  messages: ReadonlyArray<AnyMessage>,
  original?: LanguageModelV4Prompt
) => LanguageModelV4Prompt) => {
  // What was converted at each position (undefined where `original` was kept), updated in place.
  const from: Array<AnyMessage | undefined> = []
  const to: Array<LanguageModelV4Message | undefined> = []
  const convertAt = (index: number, message: AnyMessage): LanguageModelV4Message => {
    const converted = message === from[index] ? to[index]! : toPromptMessage(message)
    from[index] = message
    to[index] = converted
    return converted
  }
  return (messages, original = []) => {
    const sent = original as ReadonlyArray<unknown>
    // A request the controller built from this very prompt says which positions are not the prompt's own objects.
    const own = PromptAlignment.builtFrom(messages, original)
    if (own !== undefined) {
      from.length = Math.min(from.length, messages.length)
      to.length = from.length
      // Copied only once a position's message needs converting: a request whose own messages are already V4-shaped
      // (e.g. synthesized tool results) is the prompt to send, as it is.
      let prompt: Array<LanguageModelV4Message> | undefined
      for (const index of own) {
        const message = messages[index]!
        const converted = convertAt(index, message)
        if (converted !== message) prompt ??= messages.slice() as Array<LanguageModelV4Message>
        if (prompt !== undefined) prompt[index] = converted
      }
      return prompt ?? (messages as LanguageModelV4Prompt)
    }
    // One array of the request's length: a copy of `original` (memcpy) when it is at least that long.
    const copied = original.length >= messages.length
    const prompt: Array<LanguageModelV4Message> = copied
      ? original.slice(0, messages.length)
      : new Array<LanguageModelV4Message>(messages.length)
    let offset = 0
    for (let index = 0; index < messages.length; index++) {
      const message = messages[index]!
      // The application's own message, at its position or shifted by the messages the request dropped or inserted.
      // The common case (same offset as the previous message) tested inline: no closure per position.
      const at =
        message === sent[index + offset]
          ? index + offset
          : PromptAlignment.near(index + offset, (position) => message === sent[position])
      if (at >= 0) {
        offset = at - index
        if (!copied || at !== index) prompt[index] = original[at]!
        from[index] = undefined
        to[index] = undefined
        continue
      }
      prompt[index] = convertAt(index, message)
    }
    from.length = messages.length
    to.length = messages.length
    return prompt
  }
}
