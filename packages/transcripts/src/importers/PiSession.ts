/**
 * Importer for pi coding-agent session JSONL (`badlogic/pi-mono`,
 * `packages/coding-agent/src/core/session-manager.ts`), versions 1–3.
 *
 * | pi line | entry |
 * |---|---|
 * | `session` header | event `session.start` (cwd, provider, model, thinking level) |
 * | `message` user / assistant / toolResult | message user / assistant / tool |
 * | `message` bashExecution (`!cmd` typed by the user) | user message with the text pi sends the model, `meta.role: "bashExecution"` |
 * | `message` custom / hookMessage / branchSummary / compactionSummary | user message |
 * | `compaction` | checkpoint (`summarizer.kind: "imported"`, `text`, `firstKeptEntryId`, `tokensBefore`) |
 * | `model_change`, `thinking_level_change`, `label`, `session_info`, `custom` | event |
 * | anything else | event `pi.unknown`, reported as `kept-as-event` |
 *
 * Assistant `thinking` blocks become reasoning parts with the signature in
 * `providerOptions.anthropic.signature`; `toolCall` blocks become tool-call
 * parts (`arguments` → `input`). Version-1 files have no entry ids: ids are
 * `pi:<line>` and a compaction's `firstKeptEntryIndex` (an index into the
 * file's parsed entries, header included) is resolved to that entry's id,
 * as pi's own v1→v2 migration does.
 *
 * @since 0.1.0
 */
import { type Checkpoint, Entry, type Message } from "@context-engine/core"
import { type EntryBuilder, isObject, meta, parseJsonLine } from "./EntryBuilder.ts"
import type { LineFormat } from "./Format.ts"

type Block = Record<string, unknown>

const blocks = (content: unknown): ReadonlyArray<Block> =>
  typeof content === "string"
    ? [{ type: "text", text: content }]
    : Array.isArray(content)
      ? content.filter(isObject)
      : []

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

const userParts = (content: unknown): Array<Message.UserContentPart> => {
  const parts: Array<Message.UserContentPart> = []
  for (const block of blocks(content)) {
    if (block.type === "text" && typeof block.text === "string") parts.push({ type: "text", text: block.text })
    else if (block.type === "image" && typeof block.data === "string")
      parts.push({ type: "image", image: block.data, mediaType: str(block.mimeType) ?? "image/png" })
  }
  return parts
}

const assistantParts = (content: unknown): Array<Message.AssistantContentPart> => {
  const parts: Array<Message.AssistantContentPart> = []
  for (const block of blocks(content)) {
    switch (block.type) {
      case "text":
        parts.push(
          typeof block.textSignature === "string" && block.textSignature.length > 0
            ? {
                type: "text",
                text: str(block.text) ?? "",
                providerOptions: { pi: { textSignature: block.textSignature } }
              }
            : { type: "text", text: str(block.text) ?? "" }
        )
        break
      case "thinking": {
        const signature = str(block.thinkingSignature)
        const redacted = block.redacted === true
        parts.push({
          type: "reasoning",
          text: str(block.thinking) ?? "",
          ...(signature || redacted
            ? {
                providerOptions: {
                  anthropic: redacted ? { redactedData: signature ?? "" } : { signature: signature ?? "" }
                }
              }
            : {})
        })
        break
      }
      case "toolCall":
        parts.push({
          type: "tool-call",
          toolCallId: str(block.id) ?? "",
          toolName: str(block.name) ?? "",
          input: block.arguments ?? {}
        })
        break
      case "image":
        if (typeof block.data === "string")
          parts.push({ type: "file", data: block.data, mediaType: str(block.mimeType) ?? "image/png" })
        break
    }
  }
  return parts
}

const toolOutput = (content: unknown, isError: boolean): Message.ToolResultOutput => {
  const items = blocks(content)
  if (items.every((block) => block.type === "text")) {
    const value = items.map((block) => str(block.text) ?? "").join("\n")
    return isError ? { type: "error-text", value } : { type: "text", value }
  }
  return {
    type: "content",
    value: items.flatMap(
      (block): Array<Message.ToolResultContentItem> =>
        block.type === "text"
          ? [{ type: "text", text: str(block.text) ?? "" }]
          : block.type === "image" && typeof block.data === "string"
            ? [{ type: "image-data", data: block.data, mediaType: str(block.mimeType) ?? "image/png" }]
            : []
    )
  }
}

/**
 * The text pi sends the model for a user `!command` (`bashExecutionToText`
 * in pi's `messages.ts`).
 *
 * @category utils
 */
export const bashExecutionText = (m: Record<string, unknown>): string => {
  let text = `Ran \`${str(m.command) ?? ""}\`\n`
  const output = str(m.output)
  text += output ? `\`\`\`\n${output}\n\`\`\`` : "(no output)"
  if (m.cancelled === true) text += "\n\n(command cancelled)"
  else if (typeof m.exitCode === "number" && m.exitCode !== 0) text += `\n\nCommand exited with code ${m.exitCode}`
  if (m.truncated === true && typeof m.fullOutputPath === "string")
    text += `\n\n[Output truncated. Full output: ${m.fullOutputPath}]`
  return text
}

/**
 * Converts one pi message (the `message` field of a `message` line) to a
 * core message plus its metadata, or a reason it cannot be converted.
 *
 * @category conversions
 */
export const toMessage = (
  m: Record<string, unknown>
): { message: Message.Message; meta: Message.JsonObject } | { error: string } => {
  switch (m.role) {
    case "user":
      return { message: { role: "user", content: userParts(m.content) }, meta: meta({ sourceTimestamp: m.timestamp }) }
    case "assistant":
      return {
        message: { role: "assistant", content: assistantParts(m.content) },
        meta: meta({
          provider: m.provider,
          model: m.model,
          api: m.api,
          usage: m.usage,
          stopReason: m.stopReason,
          errorMessage: m.errorMessage
        })
      }
    case "toolResult":
      if (typeof m.toolCallId !== "string") return { error: "toolResult without toolCallId" }
      return {
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: m.toolCallId,
              toolName: str(m.toolName) ?? "",
              output: toolOutput(m.content, m.isError === true)
            }
          ]
        },
        meta: meta({ details: m.details, isError: m.isError })
      }
    case "bashExecution":
      return {
        message: { role: "user", content: [{ type: "text", text: bashExecutionText(m) }] },
        meta: meta({
          role: "bashExecution",
          command: m.command,
          exitCode: m.exitCode,
          cancelled: m.cancelled,
          truncated: m.truncated,
          fullOutputPath: m.fullOutputPath
        })
      }
    case "custom":
    case "hookMessage":
    case "branchSummary":
    case "compactionSummary": {
      const text = str(m.summary)
      return {
        message: { role: "user", content: text !== undefined ? [{ type: "text", text }] : userParts(m.content) },
        meta: meta({ role: m.role, customType: m.customType })
      }
    }
    default:
      return { error: `unknown message role ${JSON.stringify(m.role)}` }
  }
}

const EVENT_TYPES: Record<string, string> = {
  model_change: "model.change",
  thinking_level_change: "thinking-level.change",
  label: "pi.label",
  session_info: "pi.session-info",
  custom: "pi.custom"
}

/**
 * The pi session importer.
 *
 * @category importers
 */
export const format: LineFormat = {
  id: "pi",
  kind: "lines",
  prefix: "pi",
  markers: "a first JSON record that is a `session` header or a `message` with a role",
  detect: ({ firstRecord }) =>
    firstRecord !== undefined &&
    ((firstRecord.type === "session" && typeof firstRecord.id === "string") ||
      (firstRecord.type === "message" && isObject(firstRecord.message) && "role" in firstRecord.message)),
  start: (builder: EntryBuilder) => {
    /** Entry id created for each parsed line, by pi entry index (v1 `firstKeptEntryIndex`). */
    const byIndex: Array<string | null> = []
    let headerId: string | null = null
    let generation = 0
    let previousFirstKept: string | null = null
    let model: string | undefined
    let started = false

    const header = (record: Record<string, unknown>, line: number) => {
      const id = str(record.id)
      const parentRaw = record.parentId
      const parentId = typeof parentRaw === "string" ? parentRaw : parentRaw === null ? (headerId ?? null) : undefined
      return { id: id ?? `pi:${line}`, parentId, timestamp: str(record.timestamp) }
    }

    type Handler = (record: Record<string, unknown>, line: number) => string | null

    const onSession: Handler = (record, line) => {
      builder.startSession(str(record.id) ?? "pi", str(record.timestamp))
      started = true
      model = str(record.modelId) ?? str(record.model)
      headerId = builder.event(
        line,
        Entry.SESSION_START_EVENT,
        meta({
          sessionId: record.id,
          version: record.version ?? 1,
          cwd: record.cwd,
          provider: record.provider,
          modelId: record.modelId,
          thinkingLevel: record.thinkingLevel,
          branchedFrom: record.branchedFrom,
          parentSession: record.parentSession
        }),
        { id: `session:${str(record.id) ?? line}`, parentId: null, timestamp: str(record.timestamp) }
      )
      return headerId
    }

    const onMessage: Handler = (record, line) => {
      if (!isObject(record.message)) {
        builder.skip(line, "message line without a message object")
        return null
      }
      const converted = toMessage(record.message)
      if ("error" in converted) {
        builder.skip(line, converted.error)
        return null
      }
      if (record.message.role === "assistant" && typeof record.message.model === "string") model = record.message.model
      return builder.message(line, converted.message, { ...header(record, line), meta: converted.meta })
    }

    /** `custom_message` and `branch_summary` lines: a user message. */
    const onSummaryMessage: Handler = (record, line) => {
      const text = str(record.summary)
      return builder.message(
        line,
        { role: "user", content: text !== undefined ? [{ type: "text", text }] : userParts(record.content) },
        { ...header(record, line), meta: meta({ piType: record.type, customType: record.customType }) }
      )
    }

    /** The compaction's first kept entry id (v1: by entry index), or null (reported) when it is not in the file. */
    const firstKeptOf = (record: Record<string, unknown>, line: number): string | null => {
      let firstKept: string | null = null
      if (typeof record.firstKeptEntryId === "string") firstKept = record.firstKeptEntryId
      else if (typeof record.firstKeptEntryIndex === "number") firstKept = byIndex[record.firstKeptEntryIndex] ?? null
      if (firstKept === null || !builder.has(firstKept))
        builder.note({
          line,
          action: "repaired",
          reason: `compaction's first kept entry (${String(record.firstKeptEntryId ?? record.firstKeptEntryIndex)}) is not in the file; firstKeptEntryId set to null`
        })
      return firstKept !== null && builder.has(firstKept) ? firstKept : null
    }

    const onCompaction: Handler = (record, line) => {
      if (typeof record.summary !== "string" || typeof record.tokensBefore !== "number") {
        builder.skip(line, "compaction line without summary or tokensBefore")
        return null
      }
      const kept = firstKeptOf(record, line)
      generation++
      const fields = header(record, line)
      // the entry before the first kept one; when nothing is kept or it came first, the latest entry
      const toEntryId = (kept === null ? null : builder.idBefore(kept)) ?? builder.lastId() ?? ""
      const checkpoint: Checkpoint.Checkpoint = {
        id: fields.id,
        generation,
        coveredRange: { fromEntryId: previousFirstKept, toEntryId },
        firstKeptEntryId: kept,
        tokensBefore: Math.round(record.tokensBefore),
        tokensAfter: 0,
        summarizer: { kind: "imported", promptVersion: "pi", ...(model !== undefined ? { model } : {}) },
        text: record.summary,
        createdAt: fields.timestamp ?? ""
      }
      previousFirstKept = kept
      return builder.checkpoint(line, checkpoint, {
        ...fields,
        meta: meta({
          source: "pi.compaction",
          tokensAfterRecorded: false,
          firstKeptEntryIndex: record.firstKeptEntryIndex,
          details: record.details,
          fromHook: record.fromHook
        })
      })
    }

    /** Known event types become their event; anything else `pi.unknown`, reported as `kept-as-event`. */
    const onOther: Handler = (record, line) => {
      const name = typeof record.type === "string" ? EVENT_TYPES[record.type] : undefined
      const { type: _type, id: _id, parentId: _parentId, timestamp: _timestamp, ...data } = record
      if (name !== undefined) return builder.event(line, name, meta(data), header(record, line))
      builder.note({ line, action: "kept-as-event", reason: `unknown pi entry type ${JSON.stringify(record.type)}` })
      return builder.event(line, "pi.unknown", meta(record), header(record, line))
    }

    const handlers = new Map<unknown, Handler>([
      ["session", onSession],
      ["message", onMessage],
      ["custom_message", onSummaryMessage],
      ["branch_summary", onSummaryMessage],
      ["compaction", onCompaction]
    ])

    const onRecord: Handler = (record, line) => {
      if (!started && record.type !== "session") {
        builder.startSession("pi", str(record.timestamp))
        started = true
      }
      return (handlers.get(record.type) ?? onOther)(record, line)
    }

    return {
      line: (text, line, unterminated) => {
        if (text.trim().length === 0) return
        const value = parseJsonLine(builder, text, line, unterminated)
        if (value === undefined) return
        if (!isObject(value)) {
          builder.skip(line, "line is JSON but not an object")
          return
        }
        byIndex.push(onRecord(value, line))
      },
      end: () => {}
    }
  }
}
