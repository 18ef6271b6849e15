import { ContextView, Measurer, type Message, Tokenizers } from "@context-engine/core"
import { describe, expect, it } from "vitest"

const messages: Array<Message.Message> = [
  { role: "system", content: "You are a coding agent." },
  { role: "user", content: "Read the config and fix the port." },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: "c1", toolName: "read", input: { path: "/app/config.json" } }]
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: "c1",
        toolName: "read",
        output: { type: "text", value: `{"port": 8080, "log": "${"x".repeat(4000)}"}` }
      }
    ]
  }
]

describe("anchored measurement", () => {
  const measurer = Measurer.make(Tokenizers.get("o200k_base"))
  const view = ContextView.fromMessages(messages)
  const counted = measurer.measure(view).inputTokens
  const reported = counted + 500 // the provider counts some framing we do not see

  it("uses the reported usage while the anchored prefix is unchanged", () => {
    const anchor = Measurer.anchorFor(view, { inputTokens: reported, lastEntryId: "m3" })
    const appended = ContextView.fromMessages([...messages, { role: "user", content: "Now run the tests." }])
    const measurement = measurer.measure(appended, { anchor })
    const appendedTokens = measurer.messageTokens({ role: "user", content: "Now run the tests." })
    expect(measurement.method).toBe("anchored")
    expect(measurement.inputTokens).toBe(reported + appendedTokens)
  })

  it("expires once a compaction edits an item the usage covered", () => {
    const anchor = Measurer.anchorFor(view, { inputTokens: reported, lastEntryId: "m3" })
    const compacted = ContextView.applyEdits(view, [
      {
        op: "replace",
        entryId: "m3",
        strategy: "toolTrim",
        reason: "cleared",
        message: {
          role: "tool",
          content: [
            {
              type: "tool-result",
              toolCallId: "c1",
              toolName: "read",
              output: { type: "text", value: "[Old tool result content cleared]" }
            }
          ]
        }
      }
    ])
    const measurement = measurer.measure(compacted, { anchor })
    expect(measurement.method).not.toBe("anchored")
    expect(measurement.inputTokens).toBe(measurer.measure(compacted).inputTokens)
    expect(measurement.inputTokens).toBeLessThan(counted)
    expect(measurement.notes?.join(" ")).toContain("changed since the provider reported usage")
  })

  it("still honours an anchor without a fingerprint (caller-built)", () => {
    const measurement = measurer.measure(view, { anchor: { inputTokens: reported, lastEntryId: "m3" } })
    expect(measurement.method).toBe("anchored")
    expect(measurement.inputTokens).toBe(reported)
  })
})
