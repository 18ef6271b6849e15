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
 * flat array (role, content string or part count, each part's field names
 * and values), so matching a step walks the incoming messages and that
 * array — not the held message objects, scattered in memory by the time a
 * session is long — and falls back to {@link sameMessage} where the fast
 * walk does not agree (fields in another order, a rebuilt value).
 *
 * @since 0.3.0
 */
import type { Message } from "@context-engine/core"

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

const isSkipped = (key: string, value: unknown): boolean => value === undefined || key === "providerOptions"

const pushLeaves = (leaves: Array<unknown>, message: Message.Message): void => {
  leaves.push(message.role)
  const content = message.content as unknown
  if (!Array.isArray(content)) {
    leaves.push(content)
    return
  }
  leaves.push(content.length)
  for (const part of content as ReadonlyArray<Record<string, unknown>>) {
    for (const key in part) {
      const value = part[key]
      if (!isSkipped(key, value)) leaves.push(key, value)
    }
    leaves.push(END_OF_PART)
  }
}

/** Whether `next` matches the leaves from `start`, field by field in order (false is not "different"). */
const matchesLeaves = (leaves: ReadonlyArray<unknown>, start: number, next: Message.Message): boolean => {
  let cursor = start
  if (leaves[cursor++] !== next.role) return false
  const content = next.content as unknown
  const head = leaves[cursor++]
  if (!Array.isArray(content)) return head === content
  if (head !== content.length) return false
  for (const part of content as ReadonlyArray<Record<string, unknown>>) {
    for (const key in part) {
      const value = part[key]
      if (isSkipped(key, value)) continue
      if (leaves[cursor] !== key) return false
      const held = leaves[cursor + 1]
      if (held !== value && !sameValue(held, value)) return false
      cursor += 2
    }
    if (leaves[cursor++] !== END_OF_PART) return false
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
}

/**
 * An empty {@link Matcher}.
 *
 * @category constructors
 */
export const make = (): Matcher => {
  const leaves: Array<unknown> = []
  const starts: Array<number> = []
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
    matchedPrefix: (messages, held) => {
      const limit = Math.min(starts.length, messages.length)
      let matched = 0
      while (
        matched < limit &&
        (matchesLeaves(leaves, starts[matched]!, messages[matched]!) || sameMessage(held(matched), messages[matched]!))
      )
        matched++
      return matched
    }
  }
}
