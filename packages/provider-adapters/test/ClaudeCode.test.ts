import { Entry, ToolPairing } from "@context-engine/core"
import { Import } from "@context-engine/provider-adapters"
import { describe, expect, it } from "vitest"

const record = (fields: Record<string, unknown>) =>
  JSON.stringify({ sessionId: "s1", timestamp: "2025-09-03T00:00:00.000Z", isSidechain: false, ...fields })

const lines = [
  JSON.stringify({ type: "summary", summary: "Title", leafUuid: "u5" }),
  record({ type: "user", uuid: "u1", parentUuid: null, message: { role: "user", content: "run it" } }),
  record({
    type: "assistant",
    uuid: "u2",
    parentUuid: "u1",
    requestId: "req_1",
    message: {
      id: "msg_1",
      role: "assistant",
      model: "claude-sonnet-4-20250514",
      content: [
        { type: "thinking", thinking: "plan", signature: "sig" },
        { type: "redacted_thinking", data: "opaque" }
      ]
    }
  }),
  // Claude Code writes each content block of one API message as its own record
  record({
    type: "assistant",
    uuid: "u3",
    parentUuid: "u2",
    requestId: "req_1",
    message: {
      id: "msg_1",
      role: "assistant",
      content: [{ type: "tool_use", id: "t1", name: "Bash", input: { command: "ls" } }]
    }
  }),
  // a subagent (Task tool) conversation, interleaved
  record({
    type: "user",
    uuid: "a1",
    parentUuid: null,
    isSidechain: true,
    agentId: "agent-1",
    message: { role: "user", content: "sub task" }
  }),
  record({
    type: "user",
    uuid: "u4",
    parentUuid: "u3",
    toolUseResult: { stdout: "a.txt" },
    message: {
      role: "user",
      content: [
        {
          type: "tool_result",
          tool_use_id: "t1",
          content: [
            { type: "text", text: "a.txt" },
            { type: "image", source: { type: "base64", media_type: "image/png", data: "iVBORw0KGgo=" } }
          ]
        },
        { type: "text", text: "and now?" }
      ]
    }
  }),
  record({
    type: "system",
    uuid: "u5",
    parentUuid: "u4",
    subtype: "compact_boundary",
    content: "Conversation compacted"
  }),
  record({ type: "file-history-snapshot", messageId: "x" })
]

describe("Claude Code importer", () => {
  const result = Import.importTextSync(lines.join("\n"))
  const entries = result.transcript.entries
  const byId = new Map(entries.map((entry) => [entry.id, entry]))

  it("detects the format and keeps uuids and parentUuids", () => {
    expect(result.format).toBe("claude-code")
    expect(result.sessions.map((session) => session.sessionId)).toEqual(["s1"])
    expect(byId.get("u3")!.parentId).toBe("u2")
    expect(byId.get("u2")!.meta).toMatchObject({
      requestId: "req_1",
      messageId: "msg_1",
      model: "claude-sonnet-4-20250514"
    })
  })

  it("keeps thinking signatures and redacted thinking", () => {
    const u2 = byId.get("u2")!
    expect(u2.kind === "message" && u2.message.content).toEqual([
      { type: "reasoning", text: "plan", providerOptions: { anthropic: { signature: "sig" } } },
      { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque" } } }
    ])
  })

  it("pairs a tool result with the call of an earlier record, and splits the user text that shares its record", () => {
    const u4 = byId.get("u4")!
    expect(u4.kind === "message" && u4.message).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "t1",
          toolName: "Bash",
          output: {
            type: "content",
            value: [
              { type: "text", text: "a.txt" },
              { type: "image-data", data: "iVBORw0KGgo=", mediaType: "image/png" }
            ]
          }
        }
      ]
    })
    const text = byId.get("u4:user")!
    expect(text.kind === "message" && text.message).toEqual({
      role: "user",
      content: [{ type: "text", text: "and now?" }]
    })
    expect(text.parentId).toBe("u4")
    const messages = entries.filter(Entry.isMessageEntry)
    expect(ToolPairing.analyze(messages.map((e) => ({ entryId: e.id, message: e.message }))).problems).toEqual([])
  })

  it("marks sidechain (subagent) records, keeps summary and system records as events, unknown types as reported events", () => {
    expect(byId.get("a1")!.meta).toMatchObject({ isSidechain: true, agentId: "agent-1" })
    const events = entries.filter((entry): entry is Entry.EventEntry => entry.kind === "event")
    expect(events.map((entry) => entry.event.name)).toEqual([
      "claude-code.summary",
      "claude-code.system",
      "claude-code.unknown"
    ])
    expect(result.issues).toEqual([
      { line: 8, action: "kept-as-event", reason: 'unknown Claude Code record type "file-history-snapshot"' }
    ])
  })
})

describe("Claude Code compaction", () => {
  it("turns a compact_boundary + isCompactSummary pair into a checkpoint with tokensBefore and the preserved first entry", () => {
    const text = [
      record({ type: "user", uuid: "k0", parentUuid: null, message: { role: "user", content: "old ask" } }),
      record({ type: "user", uuid: "k1", parentUuid: "k0", message: { role: "user", content: "kept ask" } }),
      record({
        type: "system",
        subtype: "compact_boundary",
        uuid: "b1",
        parentUuid: null,
        logicalParentUuid: "k1",
        content: "Conversation compacted",
        compactMetadata: { trigger: "auto", preTokens: 155_025, preservedMessages: { anchorUuid: "k0", uuids: ["k1"] } }
      }),
      record({
        type: "user",
        uuid: "cs1",
        parentUuid: "b1",
        isCompactSummary: true,
        message: { role: "user", content: "This session is being continued. Summary: ..." }
      }),
      record({ type: "user", uuid: "n1", parentUuid: "cs1", message: { role: "user", content: "next" } })
    ].join("\n")
    const result = Import.importTextSync(text)
    const checkpoint = result.transcript.entries.find(Entry.isCheckpointEntry)!
    expect(checkpoint.id).toBe("cs1")
    expect(checkpoint.checkpoint).toMatchObject({
      generation: 1,
      tokensBefore: 155_025,
      firstKeptEntryId: "k1",
      text: "This session is being continued. Summary: ...",
      summarizer: { kind: "imported" },
      coveredRange: { fromEntryId: null, toEntryId: "k1" }
    })
    expect(result.transcript.entries.filter(Entry.isMessageEntry).map((entry) => entry.id)).toEqual(["k0", "k1", "n1"])
  })
})
