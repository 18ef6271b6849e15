import { ContextView, Measurer, type Message, Tokenizers, UsageScale } from "@context-engine/core"
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

describe("each anchor keeps its own prefix fingerprints", () => {
  const history: Array<Message.Message> = Array.from({ length: 300 }, (_, index) =>
    index % 2 === 0 ? { role: "user", content: `question ${index}` } : { role: "assistant", content: `answer ${index}` }
  )
  const next: Array<Message.Message> = [
    { role: "user", content: "one more question" },
    { role: "assistant", content: "one more answer" }
  ]
  // Items whose property reads are counted (a read of an earlier item means its prefix was compared or hashed again).
  const counted = (view: ContextView.ContextView, reads: { count: number }): ContextView.ContextView => ({
    ...view,
    items: view.items.map(
      (item) =>
        new Proxy(item, {
          get: (target, key, receiver) => {
            reads.count++
            return Reflect.get(target, key, receiver)
          }
        })
    )
  })

  it("two sessions with the same history stepping in turn: a step reads none of its earlier items, same fingerprints", () => {
    const readsA = { count: 0 }
    const viewA1 = counted(ContextView.fromMessages(history), readsA)
    // Session B: the same entry ids and contents, other objects (a fork, or two users of one agent template).
    const viewB1 = counted(ContextView.fromMessages(history), { count: 0 })
    const anchorA1 = Measurer.anchorFor(viewA1, { inputTokens: 9_000, lastEntryId: "m299" })
    const anchorB1 = Measurer.anchorFor(viewB1, { inputTokens: 9_000, lastEntryId: "m299" })
    expect(anchorB1.prefixFingerprint).toBe(anchorA1.prefixFingerprint)
    const appended = ContextView.fromMessages([...history, ...next]).items.slice(history.length)
    const viewA2 = { ...viewA1, items: [...viewA1.items, ...appended] }
    readsA.count = 0
    expect(UsageScale.locate(viewA2, anchorA1)).toEqual({ index: 299 })
    const anchorA2 = Measurer.anchorFor(viewA2, { inputTokens: 9_100, lastEntryId: "m301" }, anchorA1)
    // locate finds m299 from the end: one read of an earlier item (its entry id); nothing compared by content.
    expect(readsA.count).toBeLessThanOrEqual(1)
    expect(anchorA2.prefixFingerprint).toBe(
      Measurer.prefixFingerprint(ContextView.fromMessages([...history, ...next]), "m301")
    )
    // Usage for a request whose last message is not in the view (normalization dropped it): no fingerprint, and the
    // next anchor still extends the chain instead of hashing the whole prefix again.
    const anchorA3 = Measurer.anchorFor(viewA2, { inputTokens: 9_200, lastEntryId: "dropped" }, anchorA2)
    expect(anchorA3.prefixFingerprint).toBeUndefined()
    const viewA4 = {
      ...viewA2,
      items: [...viewA2.items, ...appended.map((item) => ({ ...item, entryId: `${item.entryId}b` }))]
    }
    readsA.count = 0
    const anchorA4 = Measurer.anchorFor(viewA4, { inputTokens: 9_300, lastEntryId: "m301b" }, anchorA3)
    expect(readsA.count).toBe(0)
    expect(anchorA4.prefixFingerprint).toBe(Measurer.prefixFingerprint(viewA4, "m301b"))
  })

  it("a previous anchor from before a compaction gives the same fingerprint as none, and stays valid for its own view", () => {
    const view = ContextView.fromMessages(history)
    const anchor = Measurer.anchorFor(view, { inputTokens: 9_000, lastEntryId: "m299" })
    const compacted = ContextView.applyEdits(view, [
      {
        op: "replace",
        entryId: "m10",
        strategy: "toolTrim",
        reason: "cleared",
        message: { role: "user", content: "…" }
      }
    ])
    const after = Measurer.anchorFor(compacted, { inputTokens: 8_000, lastEntryId: "m299" }, anchor)
    expect(after.prefixFingerprint).toBe(Measurer.prefixFingerprint(compacted, "m299"))
    expect(after.prefixFingerprint).not.toBe(anchor.prefixFingerprint)
    expect(UsageScale.locate(compacted, anchor).index).toBe(-1)
    expect(UsageScale.locate(view, anchor)).toEqual({ index: 299 })
    expect(UsageScale.locate(compacted, after)).toEqual({ index: 299 })
  })
})
