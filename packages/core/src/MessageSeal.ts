/**
 * Sealed messages: a message whose object, content array and part objects
 * are frozen, so its role, content and each part's fields can never change.
 * The measurer's caches check an unsealed message for in-place edits every
 * time they reuse its count (`ViewPrefix` stamps, O(parts) of a message that
 * is scattered in memory by the time a session is long); a sealed message
 * needs no check, so a step re-reads only what is new (issue #13: the
 * per-step cost must not grow with the session).
 *
 * A session seals the messages it holds ({@link seal}: a frozen shallow copy
 * when the caller's own objects are not frozen — caller input is never
 * mutated, DESIGN.md invariants). Payload values (a tool call's `input`
 * object, a tool result's `output`, bytes) are shared, not copied: the
 * in-place-edit check never looked inside them either.
 *
 * @since 0.4.0
 */
import type { Message } from "./Message.ts"

/**
 * Whether `message`, its content array and every part object are frozen.
 * O(parts).
 *
 * @category guards
 */
export const isSealed = (message: Message): boolean => {
  if (!Object.isFrozen(message)) return false
  const content = message.content as unknown
  if (!Array.isArray(content)) return true
  if (!Object.isFrozen(content)) return false
  for (const part of content) if (!Object.isFrozen(part)) return false
  return true
}

/**
 * `message` itself when it is already sealed, else a sealed copy: a new
 * message object, content array and part objects with the same fields (the
 * values are shared). O(parts); `message` is never modified.
 *
 * @example
 * ```ts
 * import { MessageSeal } from "@context-engine/core"
 * const sealed = MessageSeal.seal({ role: "user", content: [{ type: "text", text: "hi" }] })
 * MessageSeal.isSealed(sealed) // true
 * ```
 *
 * @category constructors
 */
export const seal = (message: Message): Message => {
  if (isSealed(message)) return message
  const content = message.content as unknown
  const copy = Array.isArray(content)
    ? { ...message, content: Object.freeze(content.map((part: object) => Object.freeze({ ...part }))) }
    : { ...message }
  return Object.freeze(copy) as Message
}
