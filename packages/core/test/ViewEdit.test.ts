import { type Message, ViewEdit } from "@context-engine/core"
import { deepFreeze } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"

const result = (toolCallId: string, value: string): Message.ToolResultPart => ({
  type: "tool-result",
  toolCallId,
  toolName: "read",
  output: { type: "text", value }
})

describe("ViewEdit.replaceParts", () => {
  it("makes one replace edit per message, in view order, swapping only the recorded parts", () => {
    const items = deepFreeze([
      { entryId: "e0", message: { role: "user", content: "read both" } as Message.Message },
      {
        entryId: "e1",
        message: {
          role: "tool",
          content: [result("c1", "long one"), result("c2", "long two")],
          providerOptions: { cache: { mark: true } }
        } as Message.Message
      },
      { entryId: "e2", message: { role: "tool", content: [result("c3", "long three")] } as Message.Message }
    ])
    const replacements: ViewEdit.PartReplacements = new Map()
    ViewEdit.setPart(replacements, 2, 0, result("c3", "[cleared]"))
    ViewEdit.setPart(replacements, 1, 1, result("c2", "[cleared]"))

    const edits = ViewEdit.replaceParts(items, replacements, "toolTrim.soft", "old tool output trimmed")

    expect(edits).toEqual([
      {
        op: "replace",
        entryId: "e1",
        message: {
          role: "tool",
          content: [result("c1", "long one"), result("c2", "[cleared]")],
          providerOptions: { cache: { mark: true } }
        },
        strategy: "toolTrim.soft",
        reason: "old tool output trimmed"
      },
      {
        op: "replace",
        entryId: "e2",
        message: { role: "tool", content: [result("c3", "[cleared]")] },
        strategy: "toolTrim.soft",
        reason: "old tool output trimmed"
      }
    ])
  })

  it("a later setPart for the same part wins, and no replacements make no edits", () => {
    const replacements: ViewEdit.PartReplacements = new Map()
    ViewEdit.setPart(replacements, 0, 0, result("c1", "first"))
    ViewEdit.setPart(replacements, 0, 0, result("c1", "second"))
    const items = [{ entryId: "e0", message: { role: "tool", content: [result("c1", "x")] } as Message.Message }]
    const [edit] = ViewEdit.replaceParts(items, replacements, "s", "r")
    expect(edit?.op === "replace" && edit.message.content).toEqual([result("c1", "second")])
    expect(ViewEdit.replaceParts(items, new Map(), "s", "r")).toEqual([])
  })
})
