/**
 * What the sub-agents a main-thread call started did. A harness that runs a
 * sub-agent inline (Claude Code's `Task` tool: the sub-agent's own
 * conversation is written into the session file, `isSidechain: true`, while
 * the main thread waits for the Task result) keeps those records out of the
 * main conversation — the main thread's model never saw them — but the files
 * the sub-agent wrote are in the workspace all the same. The Claude Code
 * importer keeps each record as a `claude-code.sidechain` event; any
 * importer's event with the fields of {@link SubAgentEventData} (the call
 * that started the sub-agent, the record as core messages) is read the same
 * way.
 *
 * {@link byMessage} attaches each message's sub-agent messages to it (a view
 * of messages never holds events), as `HarnessOutput.byMessage` attaches a
 * harness's output; `ToolActions` reads the files they changed off them.
 *
 * @since 0.6.0
 */
import { Schema } from "effect"
import type { Entry } from "./Entry.ts"
import { Message } from "./Message.ts"

/**
 * The fields of an event that records one message of a sub-agent's run:
 * `taskToolCallId`, the id of the main-thread tool call that started the
 * sub-agent; `messages`, the record as core messages (tool calls and their
 * results in the shape of the main conversation's).
 *
 * @category models
 */
export interface SubAgentEventData {
  readonly taskToolCallId: string
  readonly messages: ReadonlyArray<Message>
}

const isMessage = Schema.is(Message)

/**
 * The messages of a sub-agent event ({@link SubAgentEventData}) that carry its
 * work — its assistant messages (their tool calls) and tool messages (their
 * results) — and the call that started it; `undefined` for any other entry.
 *
 * @category getters
 */
export const of = (entry: Entry): { readonly callId: string; readonly messages: Array<Message> } | undefined => {
  if (entry.kind !== "event") return undefined
  const data = entry.event.data
  if (typeof data !== "object" || data === null || Array.isArray(data)) return undefined
  const { taskToolCallId, messages } = data as { readonly [key: string]: unknown }
  if (typeof taskToolCallId !== "string" || !Array.isArray(messages)) return undefined
  const work = messages.filter(
    (message): message is Message => isMessage(message) && (message.role === "assistant" || message.role === "tool")
  )
  return { callId: taskToolCallId, messages: work }
}

/**
 * Per message entry id, the work messages ({@link of}) of the sub-agents its
 * tool calls started, in `branch` order (root first); sub-agents whose call
 * is in no message of the branch belong to none. One pass over the branch.
 *
 * @category constructors
 */
export const byMessage = (branch: ReadonlyArray<Entry>): Map<string, Array<Message>> => {
  const callers = new Map<string, string>()
  const byCall = new Map<string, Array<Message>>()
  for (const entry of branch) {
    if (entry.kind === "message" && typeof entry.message.content !== "string")
      for (const part of entry.message.content) if (part.type === "tool-call") callers.set(part.toolCallId, entry.id)
    const work = of(entry)
    if (work === undefined || work.messages.length === 0) continue
    const known = byCall.get(work.callId)
    if (known === undefined) byCall.set(work.callId, [...work.messages])
    else known.push(...work.messages)
  }
  const out = new Map<string, Array<Message>>()
  for (const [callId, messages] of byCall) {
    const owner = callers.get(callId)
    if (owner === undefined) continue
    const known = out.get(owner)
    if (known === undefined) out.set(owner, messages)
    else known.push(...messages)
  }
  return out
}
