/**
 * What makes an assembled request valid for the provider, beyond pairing and
 * empty messages (the pipeline's normalize stage): how it may end.
 *
 * - **Assistant prefill.** A request that ends on an assistant message asks
 *   the model to continue it ("prefill"). Anthropic documented prefill for
 *   Claude up to 4.5 ("Prefill Claude's response",
 *   https://docs.claude.com/en/docs/build-with-claude/prompt-engineering/prefill-claudes-response)
 *   and removed it from Claude 4.6 on: "Prefilling assistant messages
 *   returns a 400 error" — "This model does not support assistant message
 *   prefill. The conversation must end with a user message."
 *   (https://platform.claude.com/docs/en/about-claude/models/whats-new-claude-4-6#prefill-removal,
 *   and the migration guide for Sonnet 4.6). OpenAI Chat Completions /
 *   Responses, Gemini and the OpenAI-compatible servers accept a trailing
 *   assistant message without an error (the model answers after it), so
 *   prefill is treated as supported unless the policy says otherwise
 *   (`ModelPolicy.assistantPrefill`, defaulted by {@link supportsAssistantPrefill}).
 * - **Empty latest user message.** Providers reject an empty text block
 *   (Anthropic: "text content blocks must be non-empty"); an empty latest ask
 *   is never sent silently: {@link emptyLatestUser} names it so the engine can
 *   fail with a typed `InvalidInput`.
 * - **Recorded commands at the end.** Local command records and slash
 *   commands (`UserSpeech` kinds `command-record` and `slash-command`, e.g.
 *   Claude Code's `<command-name>/compact</command-name> … <command-args>`)
 *   after the last assistant or tool message would read as a fresh ask:
 *   {@link markExecutedCommands} marks them as already executed (shared case
 *   C18 scenario B) — the text stays, nothing is dropped.
 *
 * @since 0.3.0
 */
import type { ViewItem } from "./ContextView.ts"
import type { Message } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"
import * as Turns from "./Turns.ts"
import * as UserSpeech from "./UserSpeech.ts"
import type * as ViewEdit from "./ViewEdit.ts"

type DropEdit = typeof ViewEdit.Drop.Type

/** Stage name on the edits this module proposes. @category constants */
export const REQUEST_SHAPE_STAGE = "request-shape"

// Claude ids: `claude-<name>-<major>[-<minor>]…` (claude-opus-4-6, claude-sonnet-4-5-20250929,
// us.anthropic.claude-opus-4-6-v1) or the older `claude-<major>-<minor>-<name>` (claude-3-5-sonnet).
const CLAUDE_VERSION = /claude-(?:[a-z]+-)?(\d+)(?:[-.](\d{1,2})(?!\d))?/

/**
 * Whether the model continues a trailing assistant message. `false` for
 * Claude 4.6 and later (Anthropic's prefill removal, see the module doc),
 * `true` otherwise.
 *
 * @category guards
 */
export const supportsAssistantPrefill = (model: string): boolean => {
  const match = CLAUDE_VERSION.exec(model.toLowerCase())
  if (match === null) return true
  const major = Number(match[1])
  const minor = match[2] === undefined ? 0 : Number(match[2])
  return major < 4 || (major === 4 && minor < 6)
}

/**
 * Drops for the assistant messages that end the request after its last user
 * message or tool result, for a provider that does not support prefill; `[]`
 * when the request already ends on a user message or tool result, or when
 * nothing but assistant messages would remain.
 *
 * @category constructors
 */
export const trailingAssistantDrops = (items: ReadonlyArray<ViewItem>, model: string): Array<DropEdit> => {
  let end = items.length
  while (end > 0 && items[end - 1]!.message.role === "assistant") end--
  if (end === items.length) return []
  const before = items.slice(0, end)
  if (!before.some((item) => item.message.role === "user" || item.message.role === "tool")) return []
  return items.slice(end).map((item) => ({
    op: "drop",
    entryId: item.entryId,
    strategy: REQUEST_SHAPE_STAGE,
    reason: `${model} does not support assistant prefill: the request must end on a user message or tool result (the transcript keeps the message)`
  }))
}

/**
 * The index of the last user message when it is empty (no text, no other
 * part), else -1.
 *
 * @category getters
 */
export const emptyLatestUser = (items: ReadonlyArray<ViewItem>): number => {
  for (let index = items.length - 1; index >= 0; index--) {
    const message = items[index]!.message
    if (message.role === "user") return MessageParts.isEmptyMessage(message) ? index : -1
  }
  return -1
}

/**
 * The marker put before a recorded command at the end of a request.
 *
 * @category constants
 */
export const EXECUTED_COMMAND_MARK = "[Recorded local command — already executed by the user; not a request]"

const marked = (message: Message): Message =>
  typeof message.content === "string"
    ? ({ ...message, content: `${EXECUTED_COMMAND_MARK}\n${message.content}` } as Message)
    : ({
        ...message,
        content: [{ type: "text", text: EXECUTED_COMMAND_MARK }, ...message.content]
      } as Message)

/**
 * The items with every recorded command or slash command after the last
 * assistant or tool message marked {@link EXECUTED_COMMAND_MARK}, except
 * the latest user message (`Turns.latestUserIndex`), which stays verbatim (new
 * messages; the items and their messages are not changed). Returns `items`
 * itself when there is nothing to mark.
 *
 * @category combinators
 */
export const markExecutedCommands = (items: ReadonlyArray<ViewItem>): ReadonlyArray<ViewItem> => {
  let start = items.length
  while (start > 0 && items[start - 1]!.message.role === "user") start--
  // The latest user message stays verbatim (DESIGN.md invariant) even when it is a command: with no words of
  // the user after it, it is what the request answers (Turns.latestUserIndex).
  const pinned = start < items.length ? Turns.latestUserIndex(items) : -1
  // Only the trailing user messages are read (a step's cost does not grow with the view).
  let out: Array<ViewItem> | undefined
  for (let index = start; index < items.length; index++) {
    if (index === pinned) continue
    const item = items[index]!
    const kind = UserSpeech.classify(UserSpeech.userText(item.message))
    if (kind !== "command-record" && kind !== "slash-command") continue
    if (MessageParts.textOf(item.message.content).startsWith(EXECUTED_COMMAND_MARK)) continue
    out ??= items.slice()
    out[index] = { ...item, message: marked(item.message) }
  }
  return out ?? items
}

/**
 * The tokens {@link markExecutedCommands} adds to `items` (0 when it marks
 * nothing), each marked message counted with and without its mark by
 * `countMessage`. Reads only the trailing user messages. A compaction aims
 * this much below its target, so the request it leaves — marked when it is
 * assembled — still fits (the marked messages end the request, which
 * compaction keeps).
 *
 * @category getters
 */
export const markTokens = (items: ReadonlyArray<ViewItem>, countMessage: (message: Message) => number): number => {
  const marked = markExecutedCommands(items)
  if (marked === items) return 0
  let tokens = 0
  for (let index = items.length - 1; index >= 0 && items[index]!.message.role === "user"; index--)
    if (marked[index] !== items[index])
      tokens += countMessage(marked[index]!.message) - countMessage(items[index]!.message)
  return Math.max(0, tokens)
}
