import type { Entry, Message } from "@context-engine/core"
import { MessageParts } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Offload from "../src/Offload.ts"

const result = (toolName: string, value: string, id = "c1"): Message.Message => ({
  role: "tool",
  content: [{ type: "tool-result", toolCallId: id, toolName, output: { type: "text", value } }]
})
const entry = (id: string, message: Message.Message): Entry.Entry => ({
  id,
  parentId: null,
  timestamp: new Date(0).toISOString(),
  schemaVersion: 1,
  kind: "message",
  message
})
const big = Array.from({ length: 4_000 }, (_, line) => `line ${line}: ${"x".repeat(20)}`).join("\n")

describe("Offload", () => {
  it("replaces a result over the threshold by head, tail and a pointer naming the entry and the restore call", () => {
    const original = result("read", big)
    const frozen = structuredClone(original)
    const [edit] = Offload.editsFor([entry("e7", original)], { thresholdTokens: 1_000, headChars: 100, tailChars: 50 })
    expect(original).toEqual(frozen)
    expect(edit).toMatchObject({ op: "replace", entryId: "e7", strategy: "offload" })
    const text =
      edit!.op === "replace"
        ? MessageParts.outputText((edit!.message.content as Array<Message.ToolResultPart>)[0]!.output)
        : ""
    expect(text.startsWith(big.slice(0, 100))).toBe(true)
    expect(text.endsWith(big.slice(-50))).toBe(true)
    expect(text).toContain("transcript entry e7")
    expect(text).toContain(`context_restore {"entry":"e7","offset":100,"length":${big.length - 150}}`)
    expect(text.length).toBeLessThan(big.length / 10)
  })

  it("leaves results under the threshold, tools kept whole and already offloaded entries alone", () => {
    const entries = [
      entry("a", result("read", "short")),
      entry("b", result("bash", big)),
      entry("c", result("read", big))
    ]
    const edits = Offload.editsFor(entries, { thresholdTokens: 1_000, keepWholeTools: ["bash"] })
    expect(edits.map((edit) => (edit.op === "replace" ? edit.entryId : ""))).toEqual(["c"])
    expect(Offload.editsFor(entries, { thresholdTokens: 1_000, keepWholeTools: ["bash"] }, edits)).toEqual([])
    // Default threshold: 20,000 tokens (~80,000 characters by the default estimate).
    expect(Offload.editsFor([entry("d", result("read", "y".repeat(79_000)))])).toEqual([])
    expect(Offload.editsFor([entry("e", result("read", "y".repeat(81_000)))])).toHaveLength(1)
  })
})
