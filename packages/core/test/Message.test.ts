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
