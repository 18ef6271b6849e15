/**
 * Whether the messages an application sends are the ones a session holds,
 * as values (`Session.sync`). The AI SDK re-sends the whole history every
 * step as new message and part objects around the same values
 * (`convertToLanguageModelPrompt` copies each message and part), so
 * identity does not tell; hashing or serializing every message every step
 * costs O(history) in characters.
 *
 * {@link sameMessage} is the exact comparison (identity short-cuts every
 * shared subtree). {@link make} keeps, per held message, its leaves in one
 * flat array (role, content string or part count; per part its type, the
 * values of its type's fields in a fixed order and its field count — or,
 * for a part with a field its type does not list, each field's name and
 * value), so matching a step walks the incoming messages and that array —
 * not the held message objects, scattered in memory by the time a session
 * is long — reading each known field directly, and falls back to
 * {@link sameMessage} where the fast walk does not agree (fields in another
 * order, a rebuilt value).
 *
 * @since 0.3.0
 */
import { Errors, type Message } from "@context-engine/core"

/** The bytes of a binary value (`Uint8Array` or `ArrayBuffer`), else undefined. */
const bytesOf = (value: object): Uint8Array | undefined =>
  value instanceof Uint8Array ? value : value instanceof ArrayBuffer ? new Uint8Array(value) : undefined

const sameBytes = (a: Uint8Array, b: Uint8Array): boolean => {
  if (a.length !== b.length) return false
  for (let index = 0; index < a.length; index++) if (a[index] !== b[index]) return false
  return true
}

/**
 * Whether two values are equal as data: `===` first (strings by value,
 * anything else by identity), then arrays item by item, bytes by content,
 * URLs by `href`, and plain objects field by field ({@link sameFields}).
 * Identity short-cuts every shared subtree, so values rebuilt around the
 * same leaves cost a few pointer compares.
 */
const sameValue = (a: unknown, b: unknown): boolean => {
  if (a === b) return true
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false
  if (Array.isArray(a) || Array.isArray(b)) {
    if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
    for (let index = 0; index < a.length; index++) if (!sameValue(a[index], b[index])) return false
    return true
  }
  const bytes = bytesOf(a)
  if (bytes !== undefined || bytesOf(b) !== undefined) {
    const other = bytesOf(b)
    return bytes !== undefined && other !== undefined && sameBytes(bytes, other)
  }
  if (a instanceof URL || b instanceof URL) return a instanceof URL && b instanceof URL && a.href === b.href
  return sameFields(a as Record<string, unknown>, b as Record<string, unknown>, undefined)
}

/**
 * Same fields with equal values ({@link sameValue}); a field holding
 * `undefined` counts as absent (as in JSON), and `skip` is not compared.
 */
const sameFields = (a: Record<string, unknown>, b: Record<string, unknown>, skip: string | undefined): boolean => {
  let fields = 0
  for (const key in b) {
    const value = b[key]
    if (value === undefined || key === skip) continue
    if (!sameValue(a[key], value)) return false
    fields++
  }
  for (const key in a) if (a[key] !== undefined && key !== skip) fields--
  return fields === 0
}

/**
 * Whether `next` is the message `known` as a value: same role, and the same
 * content — the same string, or the same parts with every field equal
 * ({@link sameValue}) except `providerOptions` (apps move cache-control
 * breakpoints across earlier messages every step; that is not an edit of
 * the conversation). Exact: any change of text, tool input or output,
 * part type or field is seen, whatever its length or position, with no
 * hashing or serialization. The AI SDK rebuilds the message and part
 * objects every step around the same values, so an unchanged message costs
 * a few pointer compares per part.
 *
 * @category utils
 */
export const sameMessage = (known: Message.Message, next: Message.Message): boolean => {
  if (known === next) return true
  if (known.role !== next.role) return false
  const a = known.content as unknown
  const b = next.content as unknown
  if (a === b) return true
  if (!Array.isArray(a) || !Array.isArray(b) || a.length !== b.length) return false
  for (let index = 0; index < a.length; index++) {
    const left = a[index] as Record<string, unknown>
    const right = b[index] as Record<string, unknown>
    if (left !== right && !sameFields(left, right, "providerOptions")) return false
  }
  return true
}

/** Marks the end of a part's fields in the leaves. */
const END_OF_PART = Symbol("end-of-part")
/** Starts a part held field by field (a part with a field its type's list does not name). */
const ANY_PART = Symbol("any-part")

const isSkipped = (key: string, value: unknown): boolean => value === undefined || key === "providerOptions"

/**
 * The fields each part type of `ModelMessage` and the V4 prompt carries
 * besides `type` and `providerOptions` (`@ai-sdk/provider-utils` content
 * parts, `LanguageModelV4Prompt`). A held part whose fields are all listed
 * for its type is held as `type`, the listed values in this order and its
 * field count; matching reads those fields directly and counts the incoming
 * part's fields (with the values equal, equal counts mean no other field).
 */
const FIELDS: Readonly<Record<string, ReadonlyArray<string>>> = {
  text: ["text"],
  reasoning: ["text"],
  "tool-call": ["toolCallId", "toolName", "input", "providerExecuted"],
  "tool-result": ["toolCallId", "toolName", "output"],
  file: ["data", "mediaType", "filename"],
  image: ["image", "mediaType"],
  "reasoning-file": ["data", "mediaType"],
  "tool-approval-request": ["approvalId", "toolCallId"],
  "tool-approval-response": ["approvalId", "approved", "reason", "providerExecuted"],
  custom: ["kind"]
}

/** The part's fields that are compared: all but `providerOptions` and those holding `undefined`. */
const fieldCount = (part: Record<string, unknown>): number => {
  let count = 0
  for (const key in part) if (!isSkipped(key, part[key])) count++
  return count
}

const isListed = (part: Record<string, unknown>, fields: ReadonlyArray<string> | undefined): boolean => {
  if (fields === undefined) return false
  for (const key in part) if (!isSkipped(key, part[key]) && key !== "type" && !fields.includes(key)) return false
  return true
}

const pushLeaves = (leaves: Array<unknown>, message: Message.Message): void => {
  leaves.push(message.role)
  const content = message.content as unknown
  if (!Array.isArray(content)) {
    leaves.push(content)
    return
  }
  leaves.push(content.length)
  for (const part of content as ReadonlyArray<Record<string, unknown>>) {
    const fields = typeof part.type === "string" && Object.hasOwn(FIELDS, part.type) ? FIELDS[part.type] : undefined
    if (fields !== undefined && isListed(part, fields)) {
      leaves.push(part.type)
      for (const field of fields) leaves.push(part[field])
      leaves.push(fieldCount(part))
      continue
    }
    leaves.push(ANY_PART)
    for (const key in part) {
      const value = part[key]
      if (!isSkipped(key, value)) leaves.push(key, value)
    }
    leaves.push(END_OF_PART)
  }
}

const same = (held: unknown, value: unknown): boolean => held === value || sameValue(held, value)

/** Whether `part` matches the part held field by field from `cursor`; the cursor after it, or -1. */
const matchesAnyPart = (leaves: ReadonlyArray<unknown>, cursor: number, part: Record<string, unknown>): number => {
  for (const key in part) {
    const value = part[key]
    if (isSkipped(key, value)) continue
    if (leaves[cursor] !== key || !same(leaves[cursor + 1], value)) return -1
    cursor += 2
  }
  return leaves[cursor] === END_OF_PART ? cursor + 1 : -1
}

/**
 * Whether `part` matches the part held from `cursor` (its type, then its
 * type's fields — see {@link FIELDS}); the cursor after it, or -1. Written
 * out per type: one property read per field, no key lookups.
 */
const matchesPart = (leaves: ReadonlyArray<unknown>, cursor: number, part: Record<string, unknown>): number => {
  const head = leaves[cursor]
  if (head === ANY_PART) return matchesAnyPart(leaves, cursor + 1, part)
  if (head !== part.type) return -1
  let next: number
  switch (head) {
    case "text":
    case "reasoning":
      if (!same(leaves[cursor + 1], part.text)) return -1
      next = cursor + 2
      break
    case "tool-call":
      if (
        !same(leaves[cursor + 1], part.toolCallId) ||
        !same(leaves[cursor + 2], part.toolName) ||
        !same(leaves[cursor + 3], part.input) ||
        !same(leaves[cursor + 4], part.providerExecuted)
      )
        return -1
      next = cursor + 5
      break
    case "tool-result":
      if (
        !same(leaves[cursor + 1], part.toolCallId) ||
        !same(leaves[cursor + 2], part.toolName) ||
        !same(leaves[cursor + 3], part.output)
      )
        return -1
      next = cursor + 4
      break
    default: {
      const fields = FIELDS[head as string]!
      for (let index = 0; index < fields.length; index++)
        if (!same(leaves[cursor + 1 + index], part[fields[index]!])) return -1
      next = cursor + 1 + fields.length
    }
  }
  return leaves[next] === fieldCount(part) ? next + 1 : -1
}

/** Whether `next` matches the leaves from `start` (false is not "different": fields in another order). */
const matchesLeaves = (leaves: ReadonlyArray<unknown>, start: number, next: Message.Message): boolean => {
  let cursor = start
  if (leaves[cursor++] !== next.role) return false
  const content = next.content as unknown
  const head = leaves[cursor++]
  if (!Array.isArray(content)) return head === content
  if (head !== content.length) return false
  for (let index = 0; index < content.length; index++) {
    cursor = matchesPart(leaves, cursor, content[index] as Record<string, unknown>)
    if (cursor < 0) return false
  }
  return true
}

/**
 * Held messages, matched against incoming ones position by position.
 *
 * @category models
 */
export interface Matcher {
  /** Holds `message` as the next position. */
  readonly push: (message: Message.Message) => void
  /** Keeps the first `count` positions. */
  readonly truncate: (count: number) => void
  /**
   * How many leading `messages` equal the held ones ({@link sameMessage}),
   * stopping at the first difference; `held(index)` is the held message
   * object at a position (read only where the fast walk disagrees).
   */
  readonly matchedPrefix: (messages: ReadonlyArray<Message.Message>, held: (index: number) => Message.Message) => number
  /**
   * {@link matchedPrefix} by default; with `"sampled"` ({@link HistoryCheck}),
   * when `messages` are at least as many as the held ones, first compares
   * only a bounded sample of held positions (the first, the last
   * {@link RECENT_MESSAGES} and the next {@link ROTATED_MESSAGES} of a
   * rotation over the others) and every position of `watched` (held
   * positions the request does not send as the application's own message,
   * e.g. a tool result an edit entry offloaded: an edit there would not go
   * out until seen): all equal → every held position counts as matched; any
   * difference → {@link matchedPrefix} finds the first one.
   */
  readonly checkedPrefix: (
    messages: ReadonlyArray<Message.Message>,
    held: (index: number) => Message.Message,
    check: HistoryCheck,
    watched?: Iterable<number>
  ) => number
}

/**
 * How much of the history `Session.sync` compares each step.
 *
 * - `"full"`: every held position, every step (O(history) per step: each
 *   incoming part is read; ≈ 0.3–0.7 ms at 8K messages, memory-bound — the
 *   AI SDK hands over a freshly built prompt every call).
 * - `"sampled"` (the controller's default): a bounded sample per step (≤
 *   1 + {@link RECENT_MESSAGES} + {@link ROTATED_MESSAGES} messages),
 *   exact wherever it looks; a difference anywhere in the sample falls back to
 *   the full comparison, so the branch point is always exact. What it sees at
 *   once: new messages, a rewritten first (system) message, anything removed
 *   or inserted before the end (every later position shifts, so the first and
 *   last positions differ), edits among the last {@link RECENT_MESSAGES}
 *   (the AI SDK's `pruneMessages` rewrites there: reasoning before the last
 *   message, tool calls before the last N). An in-place edit of one older
 *   message that changes nothing else is seen within
 *   ⌈(held − 1 − {@link RECENT_MESSAGES}) / {@link ROTATED_MESSAGES}⌉ steps
 *   (32 steps at 8K messages); meanwhile the request still carries the edit
 *   where the view keeps the message (kept positions are sent as the
 *   application's own message objects). Messages an edit entry dropped or
 *   replaced (an offloaded tool result) are compared every step, so an edit
 *   of one is taken at once. Not carried until seen: an edit of a message a
 *   checkpoint covers (the request sends the checkpoint; `"full"` branches
 *   before it at once) or one normalization rewrites. Sessions of up to 1 + {@link RECENT_MESSAGES} +
 *   {@link ROTATED_MESSAGES} messages are compared in full every step.
 *
 * @category models
 */
export type HistoryCheck = "full" | "sampled"

/**
 * `value` as a {@link HistoryCheck} (`undefined` → `"sampled"`); throws
 * `Errors.InvalidInput` naming `path` for anything else.
 *
 * @category constructors
 */
export const historyCheckOf = (value: unknown, path: string): HistoryCheck => {
  if (value === undefined || value === "sampled") return "sampled"
  if (value === "full") return "full"
  throw new Errors.InvalidInput({
    what: "history check",
    path,
    detail: `${JSON.stringify(value) ?? String(value)} is not a history check; expected "sampled" or "full"`
  })
}

/**
 * The held positions at the end of the history that `"sampled"` compares
 * every step: 32 covers the windows of the AI SDK's `pruneMessages` as its
 * reference and course use them (`reasoning: "before-last-message"`,
 * `toolCalls: "before-last-2-messages"` / `"before-last-3-messages"`) with
 * room for a tool loop's last turns.
 */
export const RECENT_MESSAGES = 32

/**
 * Older held positions `"sampled"` compares per step, in rotation: bounds the
 * per-step comparison at about what a 290-message session costs in full,
 * and sees any position again every ⌈older / 256⌉ steps.
 */
export const ROTATED_MESSAGES = 256

/**
 * An empty {@link Matcher}.
 *
 * @category constructors
 */
export const make = (): Matcher => {
  const leaves: Array<unknown> = []
  const starts: Array<number> = []
  // The last older position `checkedPrefix` compared (the rotation resumes after it).
  let rotated = 0
  const matches = (messages: ReadonlyArray<Message.Message>, held: (index: number) => Message.Message, at: number) =>
    matchesLeaves(leaves, starts[at]!, messages[at]!) || sameMessage(held(at), messages[at]!)
  const matchedPrefix: Matcher["matchedPrefix"] = (messages, held) => {
    const limit = Math.min(starts.length, messages.length)
    let matched = 0
    while (matched < limit && matches(messages, held, matched)) matched++
    return matched
  }
  return {
    push: (message) => {
      starts.push(leaves.length)
      pushLeaves(leaves, message)
    },
    truncate: (count) => {
      if (count >= starts.length) return
      leaves.length = starts[count]!
      starts.length = count
    },
    matchedPrefix,
    checkedPrefix: (messages, held, check, watched = []) => {
      const count = starts.length
      // Older positions: after the first, before the recent ones.
      const recentStart = count - RECENT_MESSAGES
      if (check === "full" || messages.length < count || recentStart - 1 <= ROTATED_MESSAGES)
        return matchedPrefix(messages, held)
      if (!matches(messages, held, 0)) return 0
      for (let at = recentStart; at < count; at++)
        if (!matches(messages, held, at)) return matchedPrefix(messages, held)
      for (const at of watched) if (at < count && !matches(messages, held, at)) return matchedPrefix(messages, held)
      for (let step = 0; step < ROTATED_MESSAGES; step++) {
        rotated = rotated + 1 < recentStart ? rotated + 1 : 1
        if (!matches(messages, held, rotated)) return matchedPrefix(messages, held)
      }
      return count
    }
  }
}
