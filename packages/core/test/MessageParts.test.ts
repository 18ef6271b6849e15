import { ContextView, MeasureCache, Measurer, type Message, MessageParts, Tokenizers } from "@context-engine/core"
import { FakeMeasurer } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"

const denied: Message.ToolResultOutput = { type: "execution-denied" }
const deniedWithReason: Message.ToolResultOutput = { type: "execution-denied", reason: "user said no" }

describe("MessageParts.outputText", () => {
  it("gives every output kind one text, and a denied call the AI SDK's wire text", () => {
    expect(MessageParts.outputText({ type: "text", value: "ok" })).toBe("ok")
    expect(MessageParts.outputText({ type: "error-text", value: "boom" })).toBe("boom")
    expect(MessageParts.outputText({ type: "json", value: { a: [1, 2] } })).toBe('{"a":[1,2]}')
    expect(MessageParts.outputText({ type: "error-json", value: "x" })).toBe('"x"')
    expect(MessageParts.outputText(denied)).toBe("Tool call execution denied.")
    expect(MessageParts.outputText(deniedWithReason)).toBe("user said no")
  })

  it("joins the text items of multi-part content and drops media unless markers are asked for", () => {
    const content: Message.ToolResultOutput = {
      type: "content",
      value: [
        { type: "text", text: "first" },
        { type: "image-data", data: "AAAA", mediaType: "image/png" },
        { type: "text", text: "second" }
      ]
    }
    expect(MessageParts.outputText(content)).toBe("first\nsecond")
    expect(MessageParts.outputText(content, { mediaMarkers: true })).toBe("first\n[image-data]\nsecond")
    expect(MessageParts.outputHasMedia(content)).toBe(true)
  })

  it("treats a denied call as an error, like error-text and error-json", () => {
    expect(MessageParts.outputIsError(denied)).toBe(true)
    expect(MessageParts.outputIsError({ type: "error-json", value: null })).toBe(true)
    expect(MessageParts.outputIsError({ type: "text", value: "fine" })).toBe(false)
  })

  it("the measurer counts a denied result by the same text", () => {
    const tokenizer = Tokenizers.get("o200k_base")
    const measurer = Measurer.make(tokenizer)
    const result = (output: Message.ToolResultOutput): Message.Message => ({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c1", toolName: "bash", output }]
    })
    const asText = measurer.messageTokens(result({ type: "text", value: MessageParts.deniedText(undefined) }))
    expect(measurer.messageTokens(result(denied))).toBe(asText)
  })
})

describe("MeasureCache.wrap", () => {
  it("returns a measurer made by Measurer.make as it is (it already caches)", () => {
    const measurer = Measurer.make(Tokenizers.get("o200k_base"))
    expect(MeasureCache.wrap(measurer)).toBe(measurer)
  })

  it("counts each message object once per source, is idempotent, and recounts after clearCache", () => {
    let counted = 0
    const cached = MeasureCache.wrap(FakeMeasurer.make({ onCount: () => counted++ }))
    expect(MeasureCache.wrap(cached)).toBe(cached)
    const view = ContextView.fromMessages([
      { role: "user", content: "hello there" },
      { role: "assistant", content: "hi" }
    ])
    const [first, second] = view.items
    const tokens = cached.messageTokens(first!.message, first!.source)
    cached.messageTokens(first!.message, first!.source)
    cached.messageTokens(second!.message, second!.source)
    expect(counted).toBe(2)
    expect(cached.cacheSize()).toBe(2)
    expect(tokens).toBe(3 + Math.ceil("hello there".length / 4))
    cached.clearCache()
    expect(cached.cacheSize()).toBe(0)
    cached.messageTokens(first!.message, first!.source)
    expect(counted).toBe(3)
  })
})
