/**
 * Importer for Claude Code session JSONL
 * (`~/.claude/projects/<project>/<session>.jsonl`, and subagent files).
 *
 * | record | entry |
 * |---|---|
 * | `user` with text | user message (id = `uuid`, parent = `parentUuid`) |
 * | `user` with `tool_result` blocks | tool message; tool names come from the matching `tool_use` of an earlier record |
 * | `assistant` | assistant message (text, thinking + signature, tool_use); Claude Code writes one record per content block, and each stays its own entry |
 * | `summary` (a session title) | event `claude-code.summary` (`summary`, `leafUuid`) |
 * | `system` | event `claude-code.system` (`subtype`, `content`, `compactMetadata`) |
 * | `user` with `isCompactSummary` (after a `compact_boundary`) | checkpoint: `text` = the summary, `tokensBefore` = `compactMetadata.preTokens`, `firstKeptEntryId` = the first of `preservedMessages.uuids` present, else null |
 * | other types (`file-history-snapshot`, …) | event `claude-code.unknown`, reported as `kept-as-event` |
 *
 * Sidechain records (subagent conversations run by the Task tool) are kept
 * in file order with `meta.isSidechain: true`; `requestId`, the API message
 * id, model and usage travel in `meta`. `toolUseResult` (the UI's structured
 * copy of a tool result) is not kept: the model never sees it.
 *
 * @since 0.1.0
 */
import * as AnthropicBlocks from "./AnthropicBlocks.ts"
import { isObject, meta, parseJsonLine } from "./EntryBuilder.ts"
import type { LineFormat } from "./Format.ts"

const str = (u: unknown): string | undefined => (typeof u === "string" ? u : undefined)

/**
 * The Claude Code session importer.
 *
 * @category importers
 */
export const format: LineFormat = {
  id: "claude-code",
  kind: "lines",
  prefix: "cc",
  detect: ({ firstRecord }) =>
    firstRecord !== undefined &&
    ((typeof firstRecord.uuid === "string" && "parentUuid" in firstRecord) ||
      (firstRecord.type === "summary" && typeof firstRecord.leafUuid === "string") ||
      (typeof firstRecord.sessionId === "string" && isObject(firstRecord.message))),
  start: (builder) => {
    const names = new Map<string, string>()
    let started = false
    let named = false
    const ensureSession = (record: Record<string, unknown>) => {
      const sessionId = str(record.sessionId)
      if (!started) {
        builder.startSession(sessionId ?? "claude-code", str(record.timestamp))
        started = true
        named = sessionId !== undefined
      } else if (!named && sessionId !== undefined) {
        // a summary record (no sessionId) opened the file: name the session after the first record that has one
        builder.renameSession(sessionId)
        named = true
      }
    }
    /** The last `compact_boundary` seen, waiting for its `isCompactSummary` record. */
    let boundary:
      | { preTokens: number; keptIds: ReadonlyArray<string>; beforeId: string | null; trigger: unknown }
      | undefined
    let generation = 0
    let previousFirstKept: string | null = null
    const compactSummary = (record: Record<string, unknown>, message: Record<string, unknown>, line: number) => {
      const text = AnthropicBlocks.blocks(message.content)
        .map((block) => (typeof block.text === "string" ? block.text : ""))
        .join("\n")
      const firstKept = boundary?.keptIds.find((id) => builder.has(id)) ?? null
      const fields = header(record)
      generation++
      const id = builder.checkpoint(
        line,
        {
          id: fields.id ?? `cc:${line}`,
          generation,
          coveredRange: { fromEntryId: previousFirstKept, toEntryId: boundary?.beforeId ?? builder.lastId() ?? "" },
          firstKeptEntryId: firstKept,
          tokensBefore: Math.round(boundary?.preTokens ?? 0),
          tokensAfter: 0,
          summarizer: { kind: "imported", promptVersion: "claude-code" },
          text,
          createdAt: fields.timestamp ?? ""
        },
        {
          ...fields,
          meta: meta({
            source: "claude-code.compact",
            isCompactSummary: true,
            trigger: boundary?.trigger,
            tokensBeforeRecorded: boundary !== undefined,
            tokensAfterRecorded: false
          })
        }
      )
      previousFirstKept = firstKept
      boundary = undefined
      return id
    }
    const header = (record: Record<string, unknown>) => ({
      id: str(record.uuid),
      parentId: typeof record.parentUuid === "string" ? record.parentUuid : undefined,
      timestamp: str(record.timestamp)
    })
    return {
      line: (text, line, unterminated) => {
        if (text.trim().length === 0) return
        const record = parseJsonLine(builder, text, line, unterminated)
        if (record === undefined) return
        if (!isObject(record)) return builder.skip(line, "line is JSON but not an object")
        ensureSession(record)
        switch (record.type) {
          case "user":
          case "assistant": {
            const message = record.message
            if (!isObject(message)) return builder.skip(line, `${record.type} record without a message object`)
            if (record.type === "user" && record.isCompactSummary === true) {
              compactSummary(record, message, line)
              return
            }
            const converted = AnthropicBlocks.toMessages(message, names)
            if ("error" in converted) return builder.skip(line, converted.error)
            ensureSession(record)
            const recordMeta = meta({
              isSidechain: record.isSidechain,
              isMeta: record.isMeta,
              isCompactSummary: record.isCompactSummary,
              requestId: record.requestId,
              messageId: message.id,
              model: message.model,
              stopReason: message.stop_reason,
              usage: message.usage,
              agentId: record.agentId,
              userType: record.userType
            })
            converted.forEach((msg, index) => {
              const base = header(record)
              builder.message(line, msg, {
                ...base,
                ...(index > 0 ? { id: `${base.id ?? `cc:${line}`}:${msg.role}`, parentId: undefined } : {}),
                meta: recordMeta
              })
            })
            return
          }
          case "summary":
            ensureSession(record)
            builder.event(line, "claude-code.summary", meta({ summary: record.summary, leafUuid: record.leafUuid }))
            return
          case "system":
            ensureSession(record)
            if (record.subtype === "compact_boundary") {
              const metadata = isObject(record.compactMetadata) ? record.compactMetadata : {}
              const preserved = isObject(metadata.preservedMessages) ? metadata.preservedMessages : {}
              boundary = {
                preTokens: typeof metadata.preTokens === "number" ? metadata.preTokens : 0,
                keptIds: Array.isArray(preserved.uuids) ? preserved.uuids.filter((id) => typeof id === "string") : [],
                beforeId: str(record.logicalParentUuid) ?? builder.lastId(),
                trigger: metadata.trigger
              }
            }
            builder.event(
              line,
              "claude-code.system",
              meta({
                subtype: record.subtype,
                content: record.content,
                level: record.level,
                compactMetadata: record.compactMetadata
              }),
              header(record)
            )
            return
          default:
            ensureSession(record)
            builder.note({
              line,
              action: "kept-as-event",
              reason: `unknown Claude Code record type ${JSON.stringify(record.type)}`
            })
            builder.event(line, "claude-code.unknown", meta(record), header(record))
        }
      },
      end: () => {}
    }
  }
}
