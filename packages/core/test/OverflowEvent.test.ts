import { Entry, OverflowEvent } from "@context-engine/core"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"

const data: OverflowEvent.Data = {
  provider: "anthropic.messages",
  model: "claude-sonnet-4-5",
  providerMessage: "prompt is too long: 210000 tokens > 200000 maximum",
  limitTokens: 200_000,
  requestedTokens: 210_000,
  measuredInputTokens: 190_000,
  learnedWindowTokens: 200_000,
  compacted: true
}

describe("OverflowEvent", () => {
  it("make writes a valid, current-version event entry that decode reads back unchanged", () => {
    const entry = OverflowEvent.make({ id: "ov1", parentId: "m9", timestamp: "2026-03-01T00:00:00.000Z" }, data)
    expect(Schema.decodeUnknownSync(Entry.Entry)(entry)).toEqual(entry)
    expect(entry.schemaVersion).toBe(Entry.CURRENT_SCHEMA_VERSION)
    expect(entry.event.name).toBe("context-overflow")
    expect(OverflowEvent.decode(JSON.parse(JSON.stringify(entry)) as Entry.Entry)).toEqual(data)
  })

  it("decode ignores other entries and overflow events whose payload does not decode", () => {
    const header = { id: "e", parentId: null, timestamp: "2026-03-01T00:00:00.000Z", schemaVersion: 1 as const }
    expect(
      OverflowEvent.decode({ ...header, kind: "event", event: { name: "model.change", data: { model: "x" } } })
    ).toBe(undefined)
    expect(
      OverflowEvent.decode({ ...header, kind: "event", event: { name: "context-overflow", data: { model: 3 } } })
    ).toBe(undefined)
    expect(OverflowEvent.decode({ ...header, kind: "event", event: { name: "context-overflow" } })).toBe(undefined)
  })
})
