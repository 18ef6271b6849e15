import { describe, expect, it } from "vitest"
import * as ContextView from "../src/ContextView.ts"
import * as Measurer from "../src/Measurer.ts"
import type { Message } from "../src/Message.ts"
import * as MessageSeal from "../src/MessageSeal.ts"
import * as Tokenizers from "../src/Tokenizers.ts"
import { piMessages } from "./support/piTranscript.ts"

const o200k = Tokenizers.get("o200k_base")

/**
 * `message` rebuilt so every read of the message, its content array or a part
 * counts in `reads.count` (proxies over the same objects; sealed when `seal`).
 */
const counted = (message: Message, reads: { count: number }, seal: boolean): Message => {
  const handler: ProxyHandler<object> = {
    get: (target, key, receiver) => {
      reads.count++
      return Reflect.get(target, key, receiver)
    }
  }
  const freeze = <A extends object>(value: A): A => (seal ? Object.freeze(value) : value)
  const content = message.content as unknown
  const copy = Array.isArray(content)
    ? {
        ...message,
        content: new Proxy(freeze(content.map((part: object) => new Proxy(freeze({ ...part }), handler))), handler)
      }
    : { ...message }
  return new Proxy(freeze(copy), handler) as Message
}

describe("MessageSeal", () => {
  it("seals a frozen copy and leaves the caller's message as it was", () => {
    const message: Message = { role: "assistant", content: [{ type: "text", text: "hello" }] }
    const sealed = MessageSeal.seal(message)
    expect(sealed).not.toBe(message)
    expect(sealed).toEqual(message)
    expect(MessageSeal.isSealed(sealed)).toBe(true)
    expect(Object.isFrozen(message)).toBe(false)
    expect(Object.isFrozen(message.content)).toBe(false)
    expect(MessageSeal.isSealed(message)).toBe(false)
    // Already sealed: the same object (no copy).
    expect(MessageSeal.seal(sealed)).toBe(sealed)
    const text: Message = Object.freeze({ role: "user", content: "hi" })
    expect(MessageSeal.seal(text)).toBe(text)
  })

  it("a frozen message whose content array or a part is not frozen is not sealed", () => {
    const part = { type: "text" as const, text: "x" }
    const withContent = (content: Array<typeof part>): Message =>
      Object.freeze({ role: "assistant", content }) as Message
    expect(MessageSeal.isSealed(withContent([part]))).toBe(false)
    expect(MessageSeal.isSealed(withContent(Object.freeze([part]) as Array<typeof part>))).toBe(false)
    expect(MessageSeal.isSealed(withContent(Object.freeze([Object.freeze(part)]) as Array<typeof part>))).toBe(true)
  })

  it("re-measuring a view of sealed messages after an append reads none of the earlier messages; unsealed ones are re-checked", () => {
    const messages = piMessages().slice(0, 301)
    for (const seal of [true, false]) {
      const reads = { count: 0 }
      const held = messages.map((message, index) => counted(message, index < 300 ? reads : { count: 0 }, seal))
      const measurer = Measurer.make(o200k)
      const anchor = { inputTokens: 50_000, lastEntryId: "m299" }
      measurer.measure(ContextView.fromMessages(held.slice(0, 300)), { anchor })
      reads.count = 0
      const view = ContextView.fromMessages(held)
      const items = view.items.slice(0, 300)
      const before = reads.count
      const next = measurer.measure(view, { anchor })
      // The view's items are new objects around the same messages (as a view rebuilt every step).
      expect(items.every((item, index) => item.message === held[index])).toBe(true)
      const earlierReads = reads.count - before
      // Sealed: only the roles the current-tool-loop scan reads (from the end back to the latest user message).
      const latestUser = messages.findLastIndex((message, index) => index < 300 && message.role === "user")
      if (seal) expect(earlierReads).toBeLessThanOrEqual(300 - latestUser)
      else expect(earlierReads).toBeGreaterThan(300)
      expect(next).toEqual(Measurer.make(o200k, { cache: false }).measure(view, { anchor }))
    }
  })

  it("a sealed message's cached count is reused without reading the message; an unsealed one is re-checked", () => {
    const messages = piMessages().slice(0, 40)
    for (const seal of [true, false]) {
      const reads = { count: 0 }
      const held = messages.map((message) => counted(message, reads, seal))
      const measurer = Measurer.make(o200k)
      const first = held.map((message) => measurer.messageTokens(message))
      reads.count = 0
      const again = held.map((message) => measurer.messageTokens(message))
      // the identity cache keeps no shape of a sealed message (nothing to re-check: it cannot change)
      if (seal) expect(reads.count).toBe(0)
      else expect(reads.count).toBeGreaterThan(held.length)
      expect(again).toEqual(first)
      expect(first).toEqual(messages.map((message) => Measurer.make(o200k, { cache: false }).messageTokens(message)))
    }
  })
})
