/**
 * Shared cases with a model summarizer: transcript entries from a case's
 * messages, and a `MockLanguageModelV4` that answers with a case's
 * `summarizerReplies` in call order (a call past the end fails with a
 * network error, so an engine that calls again for the same range is caught).
 */
import type { LanguageModelV4CallOptions, LanguageModelV4Content } from "@ai-sdk/provider"
import type { Checkpoint, Entry, Message } from "@context-engine/core"
import { ExtractiveSummarizer } from "@context-engine/engines"
import { MockLanguageModelV4 } from "ai/test"
import { usage } from "./MockProvider.ts"

/** Entries `${prefix}0…` chained by parent id (after `parentId` when given). */
export const toEntries = (
  messages: ReadonlyArray<Message.Message>,
  prefix = "m",
  parentId: string | null = null
): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `${prefix}${index}`,
    parentId: index === 0 ? parentId : `${prefix}${index - 1}`,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))

/** A checkpoint entry standing for an earlier part of the session. */
export const checkpointEntry = (
  id: string,
  parentId: string,
  fields: Pick<Checkpoint.Checkpoint, "generation" | "firstKeptEntryId" | "coveredRange"> &
    Partial<Pick<Checkpoint.Checkpoint, "content" | "text">>
): Entry.Entry => ({
  id,
  parentId,
  timestamp: new Date(0).toISOString(),
  schemaVersion: 1,
  kind: "checkpoint",
  checkpoint: {
    id,
    tokensBefore: 0,
    tokensAfter: 0,
    summarizer: { kind: "imported", promptVersion: "case" },
    createdAt: new Date(0).toISOString(),
    ...fields
  }
})

interface Repeat {
  readonly repeat: string
  readonly times: number
}

const isRepeat = (value: unknown): value is Repeat =>
  typeof value === "object" && value !== null && "repeat" in value && "times" in value

/** A case string that may be written as `{ repeat, times }`. */
const expand = (text: unknown): string =>
  typeof text === "string" ? text : isRepeat(text) ? text.repeat.repeat(text.times) : String(text)

/** A reply of a case: `object` (structured form), `text`, or `content` parts (text / tool-call). */
export interface CaseReply {
  readonly object?: unknown
  readonly text?: unknown
  readonly content?: ReadonlyArray<{ readonly type: string; readonly text?: unknown; readonly [key: string]: unknown }>
  readonly finishReason?: string
}

/**
 * The model content of a reply, in its structured form (`object`; a reply
 * given only as Markdown text is read into the same sections, as a
 * structured-output model would have filled them) or its free-text form.
 */
const contentOf = (reply: CaseReply, form: "object" | "text"): Array<LanguageModelV4Content> => {
  if (form === "object" && reply.object === undefined && typeof reply.text === "string")
    return [{ type: "text", text: JSON.stringify(ExtractiveSummarizer.contentFromMarkdown(reply.text)) }]
  if (form === "object" && reply.object !== undefined && reply.object !== null)
    return [
      {
        type: "text",
        // A repeated list item (`nextSteps: { repeat, times }`) is that many identical items.
        text: JSON.stringify(reply.object, (_, value) =>
          isRepeat(value) ? Array.from({ length: value.times }, () => value.repeat.trim()) : value
        )
      }
    ]
  if (reply.content)
    return reply.content.map(
      (part): LanguageModelV4Content =>
        part.type === "tool-call"
          ? {
              type: "tool-call",
              toolCallId: String(part.toolCallId),
              toolName: String(part.toolName),
              input: JSON.stringify(part.input)
            }
          : { type: "text", text: expand(part.text) }
    )
  return [{ type: "text", text: expand(reply.text) }]
}

const promptText = (params: LanguageModelV4CallOptions): string =>
  params.prompt
    .flatMap((message) =>
      typeof message.content === "string"
        ? [message.content]
        : message.content.flatMap((part) => (part.type === "text" ? [part.text] : []))
    )
    .join("\n")

/** A model answering with `replies` in order; `prompts` records every call's prompt. */
export const replyModel = (replies: ReadonlyArray<CaseReply>, form: "object" | "text" = "object") => {
  const prompts: Array<string> = []
  const model = new MockLanguageModelV4({
    modelId: "case-summarizer",
    doGenerate: async (params) => {
      prompts.push(promptText(params))
      const reply = replies[prompts.length - 1]
      if (reply === undefined) throw new Error("fetch failed: ECONNRESET (no more scripted replies)")
      const content = contentOf(reply, form)
      return {
        content,
        finishReason: {
          unified: content.some((part) => part.type === "tool-call") ? "tool-calls" : "stop",
          raw: undefined
        },
        usage: usage(1_000, 200),
        warnings: []
      }
    }
  })
  return { model, prompts }
}
