/**
 * Importer for Claude Code session JSONL
 * (`~/.claude/projects/<project>/<session>.jsonl`, and subagent files).
 *
 * | record | entry |
 * |---|---|
 * | `user` with text | user message (id = `uuid`, parent = `parentUuid`) |
 * | `user` with `tool_result` blocks | tool message; tool names come from the matching `tool_use` of an earlier record |
 * | `assistant` | assistant message (text, thinking + signature, tool_use); Claude Code writes one record per content block: consecutive main-thread records of one API message (same `message.id`) become one entry (id = first record's `uuid`; the others in `meta.mergedUuids`), so parallel tool calls share one assistant message |
 * | consecutive `user` records with `tool_result` blocks answering the same assistant message | one tool message (id = first record's `uuid`, the others in `meta.mergedUuids`) |
 * | `isSidechain: true` (a subagent run by the Task tool) | event `claude-code.sidechain`, never a message (see below) |
 * | `summary` (a session title) | event `claude-code.summary` (`summary`, `leafUuid`) |
 * | `system` | event `claude-code.system` (`subtype`, `content`, `compactMetadata`) |
 * | `user` with `isCompactSummary` (after a `compact_boundary`) | checkpoint: `text` = the summary, `tokensBefore` = `compactMetadata.preTokens`, `firstKeptEntryId` = the first of `preservedMessages.uuids` present, else null |
 * | other types (`file-history-snapshot`, …) | event `claude-code.unknown`, reported as `kept-as-event` |
 *
 * The message entries are the main conversation only, so every tool result
 * follows the assistant message that made the call (providers reject a
 * `tool_use` not answered right after). Sidechain records (a subagent's own
 * conversation, which Claude Code writes inline while the main thread waits
 * for the Task result) are kept whole (in a subagent's own file, whose first
 * record is a sidechain record, they are the conversation and become messages) as `claude-code.sidechain` events:
 * `data` holds the record's `message` verbatim, `type`, `uuid`, `parentUuid`,
 * `agentId`, `requestId`, `sidechainRootUuid` (the subagent's first record)
 * and `taskToolCallId` (the main-thread Task call whose prompt started it,
 * when the prompt matches), and `messages`, the record as core messages
 * (`SubAgentWork.SubAgentEventData`: the checkpoint reads the files the
 * subagent changed off them). An entry built from several records is written
 * where its first record was; sidechain events read meanwhile follow it, so
 * every `parentId` names an earlier entry (merged uuids resolve to the entry
 * that holds them). `requestId`, the API message id, model and usage (the
 * last record's, which has the final output tokens) travel in `meta`.
 * `toolUseResult` (the UI's structured copy of a tool result) is not kept:
 * the model never sees it.
 *
 * @since 0.1.0
 */

import type { Message } from "@context-engine/core"
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
  markers:
    "a first JSON record with `uuid` and `parentUuid`, or `sessionId` and `message`, or a `summary` with `leafUuid`",
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
    /** Source uuid of a record merged into an entry → the id of that entry. */
    const alias = new Map<string, string>()
    const resolve = (uuid: unknown): string | undefined =>
      typeof uuid === "string" ? (alias.get(uuid) ?? uuid) : undefined
    /**
     * The main-thread message being assembled: Claude Code writes one record
     * per content block, so consecutive assistant records of one API message
     * (same `message.id`), and the tool_result records answering it, are
     * collected here and written as one entry when a different record comes.
     */
    let pending: Pending | undefined
    /** Sidechain events read while a message was pending: written after it, so file order holds. */
    let deferred: Array<() => void> = []
    /** The tool-call ids of the last main-thread assistant message (the results that may follow it). */
    let openCalls = new Set<string>()
    const flush = () => {
      if (pending !== undefined) {
        const group = pending
        pending = undefined
        const id = builder.message(group.line, group.message, {
          id: group.id,
          parentId: group.parentId,
          timestamp: group.timestamp,
          meta: meta({
            ...group.meta,
            ...(group.merged.length > 0 ? { mergedUuids: group.merged, mergedLines: group.mergedLines } : {})
          })
        })
        if (group.id !== undefined && id !== group.id) alias.set(group.id, id)
        for (const uuid of group.merged) alias.set(uuid, id)
      }
      const waiting = deferred
      deferred = []
      for (const write of waiting) write()
    }
    /** Sidechains by their root record's uuid; the Task call that started each, when its prompt matches. */
    const sidechainRoot = new Map<string, string>()
    const sidechainTask = new Map<string, string>()
    /** Set by the first user/assistant record: a file that opens with a sidechain record is a subagent's own transcript. */
    let subagentFile: boolean | undefined
    /** Prompts of main-thread Task calls not yet matched to a sidechain. */
    const taskPrompts = new Map<string, string>()
    const sidechain = (record: Record<string, unknown>, message: Record<string, unknown>, line: number) => {
      const uuid = str(record.uuid)
      const parent = str(record.parentUuid)
      const root = (parent !== undefined ? sidechainRoot.get(parent) : undefined) ?? uuid
      if (uuid !== undefined && root !== undefined) sidechainRoot.set(uuid, root)
      if (root !== undefined && root === uuid && typeof message.content === "string") {
        const callId = taskPrompts.get(message.content)
        if (callId !== undefined) {
          sidechainTask.set(root, callId)
          taskPrompts.delete(message.content)
        }
      }
      const taskToolCallId = root !== undefined ? sidechainTask.get(root) : undefined
      const converted = AnthropicBlocks.toMessages(message, names)
      const write = () =>
        builder.event(
          line,
          "claude-code.sidechain",
          meta({
            type: record.type,
            uuid: record.uuid,
            parentUuid: record.parentUuid,
            sidechainRootUuid: root,
            taskToolCallId,
            agentId: record.agentId,
            requestId: record.requestId,
            isMeta: record.isMeta,
            message,
            messages: "error" in converted ? undefined : converted
          }),
          {
            ...header(record),
            meta: meta({ isSidechain: true, agentId: record.agentId, sidechainRootUuid: root, taskToolCallId })
          }
        )
      if (pending !== undefined) deferred.push(write)
      else write()
    }
    /** Records an assistant message's calls: the results that may follow, and Task prompts that start sidechains. */
    const noteCalls = (message: Message.Message) => {
      for (const part of partsOf(message)) {
        if (part.type !== "tool-call") continue
        openCalls.add(part.toolCallId)
        const prompt = part.toolName === "Task" && isObject(part.input) ? part.input.prompt : undefined
        if (typeof prompt === "string") taskPrompts.set(prompt, part.toolCallId)
      }
    }
    const resolveParent = (record: Record<string, unknown>) =>
      typeof record.parentUuid === "string" ? resolve(record.parentUuid) : undefined
    const mainMessage = (
      record: Record<string, unknown>,
      message: Record<string, unknown>,
      converted: ReadonlyArray<Message.Message>,
      line: number
    ) => {
      const fields = header(record)
      const recordMeta = meta({
        isSidechain: record.isSidechain,
        isMeta: record.isMeta,
        requestId: record.requestId,
        messageId: message.id,
        model: message.model,
        stopReason: message.stop_reason,
        usage: message.usage,
        agentId: record.agentId,
        userType: record.userType
      })
      const first = converted[0]
      const messageId = str(message.id)
      let rest = converted
      // one API message written as several records: append to the pending assistant message
      if (
        first?.role === "assistant" &&
        converted.length === 1 &&
        messageId !== undefined &&
        pending?.message.role === "assistant" &&
        pending.messageId === messageId
      ) {
        pending.message = { ...pending.message, content: [...partsOf(pending.message), ...partsOf(first)] }
        pending.meta = { ...pending.meta, ...lastKnown(recordMeta) }
        addMerged(pending, fields.id, line)
        noteCalls(first)
        return
      }
      // tool results answering the pending tool message's assistant message: append them
      if (
        first?.role === "tool" &&
        pending?.message.role === "tool" &&
        first.content.every((part) => part.type !== "tool-result" || openCalls.has(part.toolCallId))
      ) {
        pending.message = { role: "tool", content: [...pending.message.content, ...first.content] }
        addMerged(pending, fields.id, line)
        rest = converted.slice(1)
        if (rest.length === 0) return
      }
      const skipped = converted.length - rest.length
      rest.forEach((msg, position) => {
        flush()
        if (msg.role === "assistant") {
          openCalls = new Set()
          noteCalls(msg)
        }
        const derived = position + skipped > 0
        const base = {
          id: derived ? `${fields.id ?? `cc:${line}`}:${msg.role}` : fields.id,
          // a derived entry (the user text sharing a tool_result record) follows the entry before it
          parentId: derived ? undefined : fields.parentId === undefined ? undefined : resolve(fields.parentId),
          timestamp: fields.timestamp
        }
        pending = {
          ...base,
          line,
          message: msg,
          messageId: msg.role === "assistant" ? messageId : undefined,
          meta: recordMeta,
          merged: [],
          mergedLines: []
        }
        // only assistant and tool messages collect later records
        if (msg.role !== "assistant" && msg.role !== "tool") flush()
      })
    }
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
            // a subagent's own file (every record a sidechain) is its main conversation
            subagentFile ??= record.isSidechain === true
            if (record.isSidechain === true && !subagentFile) return sidechain(record, message, line)
            if (record.type === "user" && record.isCompactSummary === true) {
              flush()
              compactSummary(record, message, line)
              return
            }
            const converted = AnthropicBlocks.toMessages(message, names)
            if ("error" in converted) return builder.skip(line, converted.error)
            mainMessage(record, message, converted, line)
            return
          }
          case "summary":
            flush()
            builder.event(line, "claude-code.summary", meta({ summary: record.summary, leafUuid: record.leafUuid }))
            return
          case "system":
            flush()
            if (record.subtype === "compact_boundary") {
              const metadata = isObject(record.compactMetadata) ? record.compactMetadata : {}
              const preserved = isObject(metadata.preservedMessages) ? metadata.preservedMessages : {}
              boundary = {
                preTokens: typeof metadata.preTokens === "number" ? metadata.preTokens : 0,
                keptIds: Array.isArray(preserved.uuids)
                  ? preserved.uuids.flatMap((id) => (typeof id === "string" ? [resolve(id)!] : []))
                  : [],
                beforeId: resolve(record.logicalParentUuid) ?? builder.lastId(),
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
              { ...header(record), parentId: resolveParent(record) }
            )
            return
          default:
            flush()
            builder.note({
              line,
              action: "kept-as-event",
              reason: `unknown Claude Code record type ${JSON.stringify(record.type)}`
            })
            builder.event(line, "claude-code.unknown", meta(record), {
              ...header(record),
              parentId: resolveParent(record)
            })
        }
      },
      end: flush
    }
  }
}

interface Pending {
  readonly id: string | undefined
  readonly parentId: string | undefined
  readonly timestamp: string | undefined
  readonly line: number
  message: Message.Message
  readonly messageId: string | undefined
  meta: Record<string, unknown>
  readonly merged: Array<string>
  readonly mergedLines: Array<number>
}

const addMerged = (pending: Pending, uuid: string | undefined, line: number) => {
  if (uuid !== undefined) pending.merged.push(uuid)
  pending.mergedLines.push(line)
}

const partsOf = (message: Message.Message): ReadonlyArray<Message.AssistantContentPart> =>
  message.role !== "assistant"
    ? []
    : typeof message.content === "string"
      ? [{ type: "text", text: message.content }]
      : message.content

/** The per-response fields a later record of the same API message updates (final usage, stop reason). */
const lastKnown = (fields: Record<string, unknown>): Record<string, unknown> => {
  const out: Record<string, unknown> = {}
  for (const key of ["usage", "stopReason"]) if (fields[key] !== undefined) out[key] = fields[key]
  return out
}
