import type { Message } from "@context-engine/core"
import type { ModelMessage } from "ai"
import { describe, expect, expectTypeOf, it } from "vitest"

describe("Message ⇄ AI SDK ModelMessage", () => {
  it("is assignable both ways (type level)", () => {
    expectTypeOf<ModelMessage>().toExtend<Message.Message>()
    expectTypeOf<Message.Message>().toExtend<ModelMessage>()
    const fromSdk = (message: ModelMessage): Message.Message => message
    const toSdk = (message: Message.Message): ModelMessage => message
    const message: ModelMessage = { role: "user", content: "hi" }
    expect(toSdk(fromSdk(message))).toBe(message)
  })
})
