/**
 * Provider-specific reasoning accounting (ReasoningTokens, issue #13 item 5):
 * one case per rule — Anthropic and OpenAI strip prior turns' reasoning and
 * count the current tool loop's; Gemini / unknown count every turn; opaque
 * fields (signature, item id) count 0; redacted / encrypted reasoning counts
 * in the current loop only; other providers' fields count as sent.
 */
import { describe, expect, it } from "vitest"
import * as ContextView from "../src/ContextView.ts"
import * as Measurer from "../src/Measurer.ts"
import type { Message } from "../src/Message.ts"
import * as ReasoningTokens from "../src/ReasoningTokens.ts"
import * as Tokenizers from "../src/Tokenizers.ts"

const o200k = Tokenizers.get("o200k_base")
const signature = "EoECCkYIChgCKkBpGVeD2BUjivcJv7p5XDKPKURww1QxYc6BB7u+fReY+mpPnqpPMAggZovuIfakcBA1ehx"
const encrypted = "gAAAAABoZ2Vuc2VjcmV0cmVhc29uaW5nY29udGVudGJhc2U2NGJsb2JibG9iYmxvYg=="
const earlierThinking = "Earlier turn: the user wants the parser fixed first."
const loopThinking = "Current loop: the test output says line 12 fails."

const thinking = (text: string, providerOptions: Record<string, Record<string, string>>): Message => ({
  role: "assistant",
  content: [
    { type: "reasoning", text, providerOptions },
    { type: "tool-call", toolCallId: `call-${text.length}`, toolName: "bash", input: { command: "ls" } }
  ]
})
const result = (id: string): Message => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName: "bash", output: { type: "text", value: "ok" } }]
})

/** user → assistant (thinking) → tool → user → assistant (thinking, current loop) → tool */
const conversation = (options: Record<string, Record<string, string>>): Array<Message> => [
  { role: "user", content: "Fix the parser." },
  thinking(earlierThinking, options),
  result(`call-${earlierThinking.length}`),
  { role: "user", content: "Now run the tests." },
  thinking(loopThinking, options),
  result(`call-${loopThinking.length}`)
]

const reasoningOf = (messages: ReadonlyArray<Message>, family: "anthropic" | "openai" | "gemini") =>
  Measurer.make(o200k, { mediaFamily: family }).measure(ContextView.fromMessages(messages)).byCategory.reasoning

describe("ReasoningTokens rules", () => {
  it("Anthropic: earlier turns' thinking is stripped, the current tool loop's counts, the signature never", () => {
    expect(ReasoningTokens.ruleFor("anthropic")).toBe("current-tool-loop")
    expect(reasoningOf(conversation({ anthropic: { signature } }), "anthropic")).toBe(o200k.count(loopThinking))
  })

  it("Anthropic: redacted thinking counts inside the current loop, not in earlier turns", () => {
    const messages = conversation({ anthropic: { redactedData: encrypted } })
    expect(reasoningOf(messages, "anthropic")).toBe(o200k.count(loopThinking) + o200k.count(encrypted))
  })

  it("OpenAI: reasoning items before the last user message are dropped; encrypted content counts in the loop; item ids never", () => {
    expect(ReasoningTokens.ruleFor("openai")).toBe("current-tool-loop")
    const messages = conversation({ openai: { itemId: "rs_123", reasoningEncryptedContent: encrypted } })
    expect(reasoningOf(messages, "openai")).toBe(o200k.count(loopThinking) + o200k.count(encrypted))
  })

  it("Gemini and unknown providers: every turn's reasoning counts as sent; other providers' fields as sent", () => {
    expect(ReasoningTokens.ruleFor("gemini")).toBe("all-turns")
    expect(ReasoningTokens.ruleFor("generic")).toBe("all-turns")
    const messages = conversation({ google: { thoughtSignature: "c2lnbmF0dXJl" } })
    expect(reasoningOf(messages, "gemini")).toBe(
      o200k.count(earlierThinking) + o200k.count(loopThinking) + 2 * o200k.count("c2lnbmF0dXJl")
    )
  })

  it("with no later user message every turn is the current loop; a new user message moves the boundary", () => {
    const messages = conversation({ anthropic: { signature } })
    const first = messages.slice(0, 3)
    expect(reasoningOf(first, "anthropic")).toBe(o200k.count(earlierThinking))
    // The same measurer, before and after the boundary moves: the cache keeps the positions apart.
    const measurer = Measurer.make(o200k, { mediaFamily: "anthropic" })
    expect(measurer.measure(ContextView.fromMessages(first)).byCategory.reasoning).toBe(o200k.count(earlierThinking))
    expect(measurer.measure(ContextView.fromMessages(messages)).byCategory.reasoning).toBe(o200k.count(loopThinking))
  })

  it("an explicit rule overrides the family's", () => {
    const measurer = Measurer.make(o200k, { mediaFamily: "anthropic", reasoningRule: "all-turns" })
    expect(
      measurer.measure(ContextView.fromMessages(conversation({ anthropic: { signature } }))).byCategory.reasoning
    ).toBe(o200k.count(earlierThinking) + o200k.count(loopThinking))
  })
})
