/**
 * `CachedMeasurer.withEstimates`: the selected messages are counted by the
 * estimator unless their exact count is cached; the rest exactly; the
 * measurement says when estimates went into it; the exact caches never hold
 * an estimate.
 */
import { describe, expect, it } from "vitest"
import * as ContextView from "../src/ContextView.ts"
import * as Measurer from "../src/Measurer.ts"
import type { Message } from "../src/Message.ts"
import * as MessageTokens from "../src/MessageTokens.ts"
import type { Tokenizer } from "../src/Tokenizer.ts"
import * as Tokenizers from "../src/Tokenizers.ts"

const o200k = Tokenizers.get("o200k_base")
/** An estimator that is easy to tell apart: 1 token per text. */
const one: Tokenizer = { name: "estimate:one", method: "estimate", count: (text) => (text.length === 0 ? 0 : 1) }

const old: Message = { role: "user", content: "the old part of the session, estimated ".repeat(20) }
const recent: Message = { role: "user", content: "the recent part, counted exactly ".repeat(20) }
const view = ContextView.fromMessages([old, recent])

describe("Measurer.withEstimates", () => {
  it("counts the selected messages with the estimator, the others exactly, and says so", () => {
    const exact = Measurer.make(o200k)
    const mixed = exact.withEstimates!(one, (message) => message === old)
    expect(mixed.messageTokens(old)).toBe(1 + MessageTokens.messageFramingTokens)
    expect(mixed.messageTokens(recent)).toBe(Measurer.make(o200k).messageTokens(recent))
    const measurement = mixed.measure(view)
    expect(measurement.method).toBe("estimate")
    expect(measurement.notes).toContain("1 message(s) estimated (not counted exactly)")
    expect(measurement.inputTokens).toBe(
      1 + MessageTokens.messageFramingTokens + exact.messageTokens(recent) + MessageTokens.replyPrimingTokens
    )
  })

  it("never stores an estimate as an exact count, and uses an exact count once it is cached", () => {
    const exact = Measurer.make(o200k)
    const mixed = exact.withEstimates!(one, () => true)
    mixed.measure(view)
    // The parent measurer still counts exactly.
    const exactTokens = Measurer.make(o200k).measure(view).inputTokens
    expect(exact.measure(view).inputTokens).toBe(exactTokens)
    // Now both messages are cached exactly: the derived measurer uses those counts.
    const again = mixed.measure(view)
    expect(again.method).toBe("exact")
    expect(again.inputTokens).toBe(exactTokens)
  })
})

describe("Measurer.withEstimates and the tokenizer's known counts", () => {
  it("counts a large text exactly when the tokenizer already counted it (e.g. a part a strategy truncated)", () => {
    const tokenizer = Tokenizers.gptTokenizer("o200k_base")
    const text = "./.git/objects/2d/d9964aa40a9cfda93fa00ce59812881150180a\n".repeat(200)
    const message: Message = { role: "user", content: text }
    const exactTokens = Measurer.make(Tokenizers.gptTokenizer("o200k_base")).messageTokens(message)
    // Not known yet: estimated (1 token by the test estimator).
    expect(Measurer.make(tokenizer).withEstimates!(one, () => true).messageTokens(message)).toBe(
      1 + MessageTokens.messageFramingTokens
    )
    tokenizer.count(text)
    expect(Measurer.make(tokenizer).withEstimates!(one, () => true).messageTokens(message)).toBe(exactTokens)
  })
})

describe("Tokenizers large-text cache", () => {
  it("returns the same count for a large text counted twice, and for a text above the cache's size", () => {
    const tokenizer = Tokenizers.gptTokenizer("o200k_base")
    const reference = Tokenizers.gptTokenizer("o200k_base")
    const text = "const value = compute(index) // a line of code\n".repeat(400)
    expect(text.length).toBeGreaterThanOrEqual(Tokenizers.largeTextCache.minChars)
    const first = tokenizer.count(text)
    expect(tokenizer.count(text)).toBe(first)
    expect(tokenizer.count(`${text}x`)).toBe(reference.count(`${text}x`))
    // Keyed by content, not length: a same-length text with other tokens gets its own count.
    const other = text.replaceAll("a line of code", "zqxjzqxjzqxjzq")
    expect(other.length).toBe(text.length)
    expect(tokenizer.count(other)).toBe(reference.count(other))
    expect(tokenizer.count(other)).not.toBe(first)
    const small = "hello world"
    expect(tokenizer.count(small)).toBe(2)
  })
})
