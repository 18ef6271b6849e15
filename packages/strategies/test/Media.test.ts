import type { Message } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { Media } from "../src/index.ts"
import { targetOf } from "./support/views.ts"

const measurer = FakeMeasurer.make()

/** A valid 1×1 PNG header with the given width and height. */
const png = (width: number, height: number): string => {
  const bytes = new Uint8Array(33)
  bytes.set([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])
  new DataView(bytes.buffer).setUint32(16, width)
  new DataView(bytes.buffer).setUint32(20, height)
  bytes.set([8, 6, 0, 0, 0], 24)
  return Buffer.from(bytes).toString("base64")
}

const userWithImage = (index: number): Message.Message => ({
  role: "user",
  content: [
    { type: "text", text: `look at shot ${index}` },
    { type: "image", image: png(1280 + index, 720), mediaType: "image/png" }
  ]
})

describe("Media", () => {
  it("replaces old images with a reference naming media type, dimensions and entry", () => {
    const messages: Array<Message.Message> = []
    for (let index = 0; index < 6; index++)
      messages.push(userWithImage(index), { role: "assistant", content: `seen ${index}` })
    const view = StrategyInput.frozenView(messages)
    const { edits } = Media.make({ keepRecentTurns: 2 }).apply(StrategyInput.make(view, measurer, 0))
    expect(edits.map(targetOf)).toEqual(["m0", "m2", "m4", "m6"])
    const first = edits[0]!
    if (first.op !== "replace") throw new Error("expected replace")
    const parts = first.message.content as ReadonlyArray<Message.TextPart>
    expect(parts[0]!.text).toBe("look at shot 0")
    expect(parts[1]!.text).toContain("image/png")
    expect(parts[1]!.text).toContain("1280×720 px")
    expect(parts[1]!.text).toContain("transcript entry m0")
  })

  it("replaces media items inside tool results and keeps their text", () => {
    const view = StrategyInput.frozenView([
      { role: "user", content: "screenshot please" },
      { role: "assistant", content: [{ type: "tool-call", toolCallId: "s1", toolName: "shot", input: {} }] },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "s1",
            toolName: "shot",
            output: {
              type: "content",
              value: [
                { type: "text", text: "captured" },
                { type: "image-data", data: png(800, 600), mediaType: "image/png" }
              ]
            }
          }
        ]
      },
      { role: "user", content: "thanks" },
      { role: "assistant", content: "ok" }
    ])
    const { edits } = Media.make({ keepRecentTurns: 1 }).apply(StrategyInput.make(view, measurer, 0))
    expect(edits.map(targetOf)).toEqual(["m2"])
    const edit = edits[0]!
    if (edit.op !== "replace") throw new Error("expected replace")
    const part = (edit.message.content as ReadonlyArray<Message.ToolResultPart>)[0]!
    expect(part.toolCallId).toBe("s1")
    expect(part.output.type).toBe("content")
    if (part.output.type !== "content") return
    expect(part.output.value[0]).toEqual({ type: "text", text: "captured" })
    expect(part.output.value[1]).toMatchObject({ type: "text" })
    expect((part.output.value[1] as { text: string }).text).toContain("800×600 px")
  })

  it("never touches the latest user message", () => {
    const view = StrategyInput.frozenView([userWithImage(0)])
    expect(Media.make({ keepRecentTurns: 1 }).apply(StrategyInput.make(view, measurer, 0)).edits).toEqual([])
  })
})
