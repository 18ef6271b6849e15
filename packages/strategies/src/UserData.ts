/**
 * `UserData`: user-role messages that carry data, not the user's words — the
 * observations text-action agents send as user messages (SWE-agent's
 * `[File: …]` screens, "Your proposed edit has introduced…"), shell-mode
 * output, command records, pasted logs without prose, few-shot
 * demonstrations (`UserSpeech.classify`, shared case C21). They are tool
 * output in all but role, so the tool-output stages (`ToolTrim`'s soft trim
 * and hard clear) reduce the old ones as they reduce old tool results.
 *
 * Never data here: the latest user message (`Turns.latestUserIndex`, kept
 * verbatim — DESIGN.md invariants) and any message with the user's own
 * words in it (`Turns.isUserWordsItem`: an unedited message of speech, or a
 * pasted log with a question around it — the rule the latest-user pin uses).
 * An edited user message (clamped, trimmed) is data here as it is for the
 * pin: its edited text is not what the user said.
 *
 * @since 0.4.0
 */
import type { ContextView, Message } from "@context-engine/core"
import { Turns, UserSpeech } from "@context-engine/core"

/**
 * One text part of a user-role data message. A message whose content is a
 * string is one text part, index 0 (`MessageParts.contentParts`).
 *
 * @category models
 */
export interface Part {
  readonly itemIndex: number
  readonly partIndex: number
  readonly entryId: string
  readonly part: Message.TextPart
  /** What the message is (`UserSpeech.Kind`), named in a placeholder. */
  readonly kind: UserSpeech.Kind
}

/**
 * The collector of {@link Part}s of a view: call it with each item and its
 * index; the latest user message is found once, when it is made.
 *
 * @category constructors
 */
export const collector = (
  items: ReadonlyArray<Pick<ContextView.ViewItem, "message" | "entryId"> & Turns.WordsCandidate>
): ((itemIndex: number) => Array<Part>) => {
  const latestUser = Turns.latestUserIndex(items)
  return (itemIndex) => {
    const item = items[itemIndex]!
    const message = item.message
    if (message.role !== "user" || itemIndex === latestUser || Turns.isUserWordsItem(item)) return []
    const kind = UserSpeech.classify(UserSpeech.userText(message))
    if (typeof message.content === "string")
      return [{ itemIndex, partIndex: 0, entryId: item.entryId, part: { type: "text", text: message.content }, kind }]
    return message.content.flatMap((part, partIndex) =>
      part.type === "text" ? [{ itemIndex, partIndex, entryId: item.entryId, part, kind }] : []
    )
  }
}

/**
 * The placeholder of a cleared user-role data message
 * (`UserSpeech.clearedText`: what it was, how long, the transcript entry
 * that holds it), e.g. `[Old observation cleared — user-role message of 5158
 * characters; full text in transcript entry swe:20]`. It classifies as the
 * kind it names, so a cleared message stays data.
 *
 * @category constructors
 */
export const placeholderText = (part: Part): string =>
  UserSpeech.clearedText(
    part.kind === "speech" || part.kind === "empty" ? "observation" : part.kind,
    part.part.text.length,
    part.entryId
  )
