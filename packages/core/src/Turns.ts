/**
 * Structure of a conversation for cutting and dropping: atomic units and
 * user turns.
 *
 * - A **unit** is the smallest run of view items that may not be split: an
 *   assistant message with tool calls plus every tool message that answers
 *   them (a parallel batch moves as one), or any other single message.
 * - A **turn** starts at a user message and runs until the next one (Pi's
 *   turn boundaries in `findCutPoint`); items before the first user message
 *   form a leading turn without a user message.
 *
 * Indices are positions in the item array; ranges are half-open `[start, end)`.
 *
 * @since 0.1.0
 */
import type { ViewItem } from "./ContextView.ts"
import type { ContentPart, Message } from "./Message.ts"
import * as UserSpeech from "./UserSpeech.ts"

/**
 * A half-open range of item indices.
 *
 * @category models
 */
export interface Span {
  readonly start: number
  readonly end: number
}

const callIds = (message: Message): ReadonlyArray<string> =>
  message.role === "assistant" && typeof message.content !== "string"
    ? message.content.flatMap((part) => (part.type === "tool-call" ? [part.toolCallId] : []))
    : []

const resultIds = (message: Message): ReadonlyArray<string> =>
  typeof message.content === "string"
    ? []
    : (message.content as ReadonlyArray<ContentPart>).flatMap((part) =>
        part.type === "tool-result" ? [part.toolCallId] : []
      )

/**
 * Whether the message is a user message a person wrote (not a tool result).
 *
 * @category guards
 */
export const isUserTurnStart = (message: Message): boolean => message.role === "user"

/**
 * Splits items into atomic units. An assistant message with tool calls
 * absorbs the following tool messages whose results answer any of its calls,
 * and also tool messages in between (results of an interleaved batch); the
 * unit ends at the first message that is neither.
 *
 * @category analysis
 */
export const units = (items: ReadonlyArray<Pick<ViewItem, "message">>): Array<Span> => {
  const spans: Array<Span> = []
  let index = 0
  while (index < items.length) {
    const message = items[index]!.message
    const calls = callIds(message)
    let end = index + 1
    if (calls.length > 0) {
      const open = new Set(calls)
      while (end < items.length && items[end]!.message.role === "tool") {
        for (const id of resultIds(items[end]!.message)) open.delete(id)
        end++
        if (open.size === 0) break
      }
    }
    spans.push({ start: index, end })
    index = end
  }
  return spans
}

/**
 * Indices where the view may be cut: the start of every unit. Cutting at
 * index `i` keeps items `[i, n)` verbatim.
 *
 * @category analysis
 */
export const legalCutIndices = (items: ReadonlyArray<Pick<ViewItem, "message">>): Array<number> =>
  units(items).map((span) => span.start)

/**
 * Splits items into turns. Each turn starts at a user message except a
 * leading run before the first user message. System messages stay in the
 * turn they appear in; callers that must keep system messages filter them.
 *
 * @category analysis
 */
export const turns = (items: ReadonlyArray<Pick<ViewItem, "message">>): Array<Span> => {
  const spans: Array<Span> = []
  let start = 0
  for (const span of units(items)) {
    if (span.start > start && isUserTurnStart(items[span.start]!.message)) {
      spans.push({ start, end: span.start })
      start = span.start
    }
  }
  if (start < items.length) spans.push({ start, end: items.length })
  return spans
}

/**
 * Start of the last of {@link turns} (0 when there is none): the last user
 * message after index 0, since every user message starts a unit (a unit
 * absorbs only tool messages). One backward pass that allocates nothing —
 * the invariants ask for it at every stage (issue #13 req 6: `turns` built
 * every unit of a 60,000-item view for this one number).
 *
 * @category analysis
 */
export const lastTurnStart = (items: ReadonlyArray<Pick<ViewItem, "message">>): number => {
  for (let index = items.length - 1; index > 0; index--) if (isUserTurnStart(items[index]!.message)) return index
  return 0
}

// A user message's text reads as the user's words: speech (`UserSpeech.isSpeech`) or no text (an image).
const isWordsMessage = (message: Message): boolean =>
  message.role === "user" && (UserSpeech.isSpeech(message) || UserSpeech.userText(message).trim().length === 0)

/**
 * A view item as {@link isUserWordsItem} reads it: its message and, when it
 * was edited, the names of the strategies whose edits shaped it.
 *
 * @category models
 */
export type WordsCandidate = Pick<ViewItem, "message"> & { readonly editedBy?: ReadonlyArray<string> | undefined }

/**
 * Whether a view item is the user's words: an unedited user message of
 * speech (`UserSpeech.isSpeech`) or without text (an image). The one rule for
 * the latest-user pin ({@link latestUserIndex}, `ActiveView.reconstruct`) and
 * for which user-role messages are data (strategies `UserData`). An edited item (`editedBy` not empty: clamped,
 * offloaded, a synthetic insert) is never the user's words, whatever its
 * edited text reads as: strategies never edit the latest user words (they
 * are protected), so an edited user message was data — or older words —
 * when it was edited, and a transcript only grows. Reading the edited text
 * instead would let a clamped traceback (fewer lines, a marker) pass for
 * speech, and the engine's compaction (which reads the edited view) and
 * `ActiveView.reconstruct` (which reads the entries) would pin different
 * messages — the request sent would then be larger than the compaction
 * measured.
 *
 * @category guards
 */
export const isUserWordsItem = (item: WordsCandidate): boolean =>
  (item.editedBy === undefined || item.editedBy.length === 0) && isWordsMessage(item.message)

/**
 * Index of the latest user message that is not data (`UserSpeech.classify`:
 * the user's words, or a message without text such as an image), or, when
 * every user message is data, of the latest user message; -1 when there is
 * none. Shell-mode output, slash commands and
 * pasted logs after the user's last words are data: they can be clamped like
 * tool output instead of being pinned verbatim (shared case C21; a 27K-token
 * `!find .` output must not make a 32K window impossible).
 *
 * @category analysis
 */
export const latestUserIndex = (items: ReadonlyArray<WordsCandidate>): number => {
  let fallback = -1
  for (let index = items.length - 1; index >= 0; index--) {
    const item = items[index]!
    if (item.message.role !== "user") continue
    if (isUserWordsItem(item)) return index
    if (fallback === -1) fallback = index
  }
  return fallback
}
