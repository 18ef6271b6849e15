import { Decode, Errors, Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"

describe("Message decoding", () => {
  it("names the path of a bad field", () => {
    const decode = Decode.decodeUnknownSync(Message.Message, "message")
    let caught: unknown
    try {
      decode({ role: "user", content: [{ type: "text", text: 1 }] })
    } catch (error) {
      caught = error
    }
    expect(caught).toBeInstanceOf(Errors.InvalidInput)
    expect((caught as Errors.InvalidInput).path).toBe("content[0].text")
  })
})

describe("JsonValue", () => {
  it("rejects numbers JSON cannot carry (NaN, Infinity) with the path", () => {
    const decode = Decode.decodeUnknownSync(Message.Message, "message")
    const withValue = (value: unknown) => ({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c1", toolName: "calc", output: { type: "json", value } }]
    })
    expect(decode(withValue({ result: 42.5 }))).toBeDefined()
    for (const bad of [Number.NaN, Number.POSITIVE_INFINITY]) {
      expect(() => decode(withValue({ result: bad }))).toThrow(Errors.InvalidInput)
    }
  })
})
