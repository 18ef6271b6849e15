/**
 * The edits the model makes through the context tools (DESIGN.md "Memory,
 * offload and context tools"), as pure functions from the active path to
 * view edits: read a piece of an original, put an offloaded one back,
 * offload an entry with the model's own note, and rewind a finished stretch
 * into the model's summary plus an index of what it replaced.
 *
 * Every change is a view edit appended to the transcript (originals are
 * never touched), so it takes effect when the next request is assembled.
 * Failures are values ({@link AgentEditError}) with a message the model can
 * act on, never exceptions.
 *
 * @since 0.1.0
 */
import {
  ActiveView,
  CheckpointValidation,
  type ContextView,
  type Entry,
  type Message,
  ToolPairing,
  TranscriptSearch,
  Turns,
  type ViewEdit
} from "@context-engine/core"
import { clip } from "./checkpoint/Text.ts"

/**
 * Strategy names of the agent's edits.
 *
 * @category constants
 */
export const STRATEGY = { restore: "context_restore", offload: "context_offload", rewind: "context_rewind" } as const

/**
 * Characters a read returns when no `length` is given. Own choice: ~2,000
 * tokens, a piece that answers a detail question (compactor measured 3–8K
 * tokens for search + restore against 8–20K for re-reading).
 *
 * @category constants
 */
export const DEFAULT_READ_CHARS = 8_000

/**
 * A failure the model can act on.
 *
 * @category models
 */
export interface AgentEditError {
  readonly error: string
}

/**
 * Where an entry stands relative to the next request.
 *
 * @category models
 */
export type Placement = "in-view" | "edited" | "covered-by-checkpoint" | "other-branch" | "not-found"

/**
 * Where `entryId` stands: in the view verbatim, in the view under an edit
 * (offloaded, trimmed, rewound), covered by the checkpoint, only on another
 * branch (`transcript` holds every branch), or unknown.
 *
 * @category getters
 */
export const placement = (
  path: ReadonlyArray<Entry.Entry>,
  transcript: ReadonlyArray<Entry.Entry>,
  entryId: string
): Placement => {
  if (!path.some((entry) => entry.id === entryId))
    return transcript.some((entry) => entry.id === entryId) ? "other-branch" : "not-found"
  const item = ActiveView.reconstruct(path).conversation.find((candidate) => candidate.entryId === entryId)
  if (item === undefined) {
    const edited = path.some(
      (entry) => entry.kind === "edit" && "entryId" in entry.edit && entry.edit.entryId === entryId
    )
    return edited ? "edited" : "covered-by-checkpoint"
  }
  return item.editedBy.length > 0 ? "edited" : "in-view"
}

/**
 * A piece of an original: characters `[offset, offset + length)` of its
 * text ({@link TranscriptSearch.entryText}), with the total and the offset
 * to continue from.
 *
 * @category getters
 */
export const read = (
  transcript: ReadonlyArray<Entry.Entry>,
  entryId: string,
  offset = 0,
  length = DEFAULT_READ_CHARS
):
  | { readonly text: string; readonly offset: number; readonly totalChars: number; readonly nextOffset?: number }
  | AgentEditError => {
  const entry = transcript.find((candidate) => candidate.id === entryId)
  if (entry === undefined) return { error: `no entry ${entryId} in this session` }
  const text = TranscriptSearch.entryText(entry)
  const start = Math.max(0, Math.min(text.length, Math.floor(offset)))
  const end = Math.min(text.length, start + Math.max(0, Math.floor(length)))
  return {
    text: text.slice(start, end),
    offset: start,
    totalChars: text.length,
    ...(end < text.length ? { nextOffset: end } : {})
  }
}

/**
 * The edit that puts an edited entry back whole (a `replace` with its
 * original message), or an error when it is not edited.
 *
 * @category constructors
 */
export const restoreEdit = (path: ReadonlyArray<Entry.Entry>, entryId: string): ViewEdit.ViewEdit | AgentEditError => {
  const entry = path.find(
    (candidate): candidate is Entry.MessageEntry => candidate.kind === "message" && candidate.id === entryId
  )
  if (entry === undefined) return { error: `no message ${entryId} on the active path` }
  const where = placement(path, path, entryId)
  if (where !== "edited") return { error: `entry ${entryId} is ${where}; read it with offset and length instead` }
  return { op: "replace", entryId, message: entry.message, strategy: STRATEGY.restore, reason: "restored by the model" }
}

const pointerText = (entryId: string): string =>
  `[offloaded by the model; the original is transcript entry ${entryId}: context_restore {"entry":"${entryId}"}]`

/**
 * The edit that shows the model's `text` in place of an entry's content.
 * Tool results keep their ids (pairing holds) and get the note as output;
 * tool calls of an assistant message are kept; text is replaced. Refused
 * (an {@link AgentEditError}) for a system message, an empty note and the
 * latest user message, which stays verbatim as in a rewind.
 *
 * @category constructors
 */
export const offloadEdit = (
  path: ReadonlyArray<Entry.Entry>,
  entryId: string,
  text: string
): ViewEdit.ViewEdit | AgentEditError => {
  const entry = path.find(
    (candidate): candidate is Entry.MessageEntry => candidate.kind === "message" && candidate.id === entryId
  )
  if (entry === undefined) return { error: `no message ${entryId} on the active path` }
  const message = entry.message
  if (message.role === "system") return { error: "system messages are never offloaded" }
  if (text.trim().length === 0) return { error: "the note is empty" }
  // The same rule as a rewind: the latest user message is what the request answers and stays verbatim.
  const conversation = ActiveView.reconstruct(path).conversation
  if (conversation[Turns.latestUserIndex(conversation)]?.entryId === entryId)
    return { error: "the latest user message stays verbatim; it is never offloaded" }
  const note = `${text.trim()}\n${pointerText(entryId)}`
  let replacement: Message.Message
  if (message.role === "tool" && typeof message.content !== "string")
    replacement = {
      ...message,
      content: message.content.map((part) =>
        part.type === "tool-result" ? { ...part, output: { type: "text" as const, value: note } } : part
      )
    }
  else if (message.role === "assistant" && typeof message.content !== "string")
    replacement = {
      ...message,
      content: [{ type: "text", text: note }, ...message.content.filter((part) => part.type === "tool-call")]
    }
  else replacement = { ...message, content: note } as Message.Message
  return { op: "replace", entryId, message: replacement, strategy: STRATEGY.offload, reason: "offloaded by the model" }
}

/**
 * What {@link rewindEdits} needs.
 *
 * @category models
 */
export interface RewindRequest {
  readonly from: string
  /** Last entry of the stretch; default the last message before the latest user message. */
  readonly to?: string | undefined
  readonly summary: string
}

/**
 * A rewind: its edits and the index of the messages it replaced.
 *
 * @category models
 */
export interface Rewind {
  readonly edits: ReadonlyArray<ViewEdit.ViewEdit>
  readonly replacedEntryIds: ReadonlyArray<string>
  readonly fromEntryId: string
  readonly toEntryId: string
}

const INDEX_LINE_CHARS = 100

const indexLine = (item: ContextView.ViewItem): string => {
  const message = item.message
  const calls =
    message.role === "assistant" && typeof message.content !== "string"
      ? message.content.flatMap((part) =>
          part.type === "tool-call" ? [`${part.toolName} ${JSON.stringify(part.input)}`] : []
        )
      : []
  const text = CheckpointValidation.messageText(message).replace(/\s+/g, " ").trim()
  const body =
    message.role === "tool"
      ? `${text.length} characters of tool output`
      : calls.length > 0
        ? `calls ${calls.join("; ")}`
        : text
  return `- ${item.entryId} ${message.role}: ${clip(body, INDEX_LINE_CHARS)}`
}

/**
 * Snaps `[fromIndex, toIndex]` outward to whole units (a tool call with all
 * its results), so the rewind never splits a pair.
 */
const snap = (
  conversation: ReadonlyArray<ContextView.ViewItem>,
  fromIndex: number,
  toIndex: number
): { readonly start: number; readonly end: number } => {
  let start = fromIndex
  let end = toIndex + 1
  for (const unit of Turns.units(conversation)) {
    if (unit.start <= fromIndex && fromIndex < unit.end) start = unit.start
    if (unit.start <= toIndex && toIndex < unit.end) end = unit.end
  }
  return { start, end }
}

/**
 * The edits of a rewind: the first message of the stretch is replaced by
 * the model's summary plus an index of every message it replaces (entry id,
 * role, a clipped line), the others are dropped. The stretch is widened to
 * whole tool-call units; it must be in the current view (not covered by a
 * checkpoint) and may not contain the latest user message (which survives
 * verbatim). The summary keeps the role of the message it replaces.
 *
 * @category constructors
 */
export const rewindEdits = (path: ReadonlyArray<Entry.Entry>, request: RewindRequest): Rewind | AgentEditError => {
  if (request.summary.trim().length === 0) return { error: "the summary is empty" }
  const conversation = ActiveView.reconstruct(path).conversation
  const fromIndex = conversation.findIndex((item) => item.entryId === request.from)
  if (fromIndex === -1)
    return { error: `entry ${request.from} is not in the current view (covered, dropped or unknown)` }
  const latestUser = Turns.latestUserIndex(conversation)
  const toIndex =
    request.to === undefined ? latestUser - 1 : conversation.findIndex((item) => item.entryId === request.to)
  if (toIndex === -1 && request.to !== undefined) return { error: `entry ${request.to} is not in the current view` }
  if (toIndex < fromIndex)
    return { error: `the stretch ${request.from} … ${request.to ?? "(before the latest request)"} is empty` }
  const { start, end } = snap(conversation, fromIndex, toIndex)
  if (start <= latestUser && latestUser < end)
    return { error: "the stretch contains the latest user message, which stays verbatim; end it before that message" }
  const stretch = conversation.slice(start, end)
  const first = stretch[0]!
  const role = first.message.role === "user" ? "user" : "assistant"
  const text = [
    `[context_rewind: ${stretch.length} messages (${first.entryId} … ${stretch.at(-1)!.entryId}) replaced by the model's summary; the originals stay in the transcript (context_search, context_restore)]`,
    request.summary.trim(),
    "Index of what it replaced:",
    ...stretch.map(indexLine)
  ].join("\n")
  const edits: Array<ViewEdit.ViewEdit> = [
    {
      op: "replace",
      entryId: first.entryId,
      message: { role, content: text },
      strategy: STRATEGY.rewind,
      reason: "rewound by the model"
    },
    ...stretch.slice(1).map(
      (item): ViewEdit.ViewEdit => ({
        op: "drop",
        entryId: item.entryId,
        strategy: STRATEGY.rewind,
        reason: "rewound by the model"
      })
    )
  ]
  // Whole units only, so pairing cannot break; checked anyway, since a view edited earlier may hold odd shapes.
  const before = ToolPairing.analyze(conversation).problems.length
  const after = [
    ...conversation.slice(0, start),
    { ...first, message: { role, content: text } as Message.Message },
    ...conversation.slice(end)
  ]
  if (ToolPairing.analyze(after).problems.length > before)
    return { error: "the rewind would separate a tool call from its result; choose whole steps" }
  return {
    edits,
    replacedEntryIds: stretch.map((item) => item.entryId),
    fromEntryId: first.entryId,
    toEntryId: stretch.at(-1)!.entryId
  }
}
