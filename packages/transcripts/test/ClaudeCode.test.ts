import { Entry, SubAgentWork, ToolPairing } from "@context-engine/core"
import { Import } from "@context-engine/transcripts"
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

/**
 * Strict adjacency, as providers check it: the tool results of an assistant
 * message's calls sit in the tool message(s) right after it, before any
 * other user or assistant message. Returns one line per violation.
 */
const adjacencyViolations = (messages: ReadonlyArray<Entry.MessageEntry>): Array<string> => {
  const violations: Array<string> = []
  let open = new Map<string, string>()
  let caller = ""
  const closeTurn = (at: string) => {
    for (const id of open.keys()) violations.push(`call ${id} of ${caller} has no result before ${at}`)
    open = new Map()
  }
  for (const entry of messages) {
    const message = entry.message
    if (message.role === "tool") {
      for (const part of message.content) {
        if (part.type !== "tool-result") continue
        if (open.has(part.toolCallId)) open.delete(part.toolCallId)
        else violations.push(`result ${part.toolCallId} in ${entry.id} does not follow its call`)
      }
      continue
    }
    closeTurn(entry.id)
    if (message.role === "assistant" && typeof message.content !== "string") {
      caller = entry.id
      for (const part of message.content) if (part.type === "tool-call") open.set(part.toolCallId, part.toolName)
    }
  }
  closeTurn("the end")
  return violations
}

describe("Claude Code importer", () => {
  const result = Import.importTextSync(lines.join("\n"))
  const entries = result.transcript.entries
  const byId = new Map(entries.map((entry) => [entry.id, entry]))

  it("detects the format and keeps uuids and parentUuids (a merged record's uuid resolves to its entry)", () => {
    expect(result.format).toBe("claude-code")
    expect(result.sessions.map((session) => session.sessionId)).toEqual(["s1"])
    expect(byId.get("u2")!.parentId).toBe("u1")
    expect(byId.has("u3")).toBe(false)
    // u4's parentUuid is u3, merged into u2
    expect(byId.get("u4")!.parentId).toBe("u2")
    expect(byId.get("u2")!.meta).toMatchObject({
      requestId: "req_1",
      messageId: "msg_1",
      model: "claude-sonnet-4-20250514",
      mergedUuids: ["u3"]
    })
  })

  it("merges the records of one API message: thinking signatures, redacted thinking and the tool call, in order", () => {
    const u2 = byId.get("u2")!
    expect(u2.kind === "message" && u2.message).toEqual({
      role: "assistant",
      content: [
        { type: "reasoning", text: "plan", providerOptions: { anthropic: { signature: "sig" } } },
        { type: "reasoning", text: "", providerOptions: { anthropic: { redactedData: "opaque" } } },
        { type: "tool-call", toolCallId: "t1", toolName: "Bash", input: { command: "ls" } }
      ]
    })
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
    expect(messages.map((entry) => entry.id)).toEqual(["u1", "u2", "u4", "u4:user"])
    expect(adjacencyViolations(messages)).toEqual([])
    expect(ToolPairing.analyze(messages.map((e) => ({ entryId: e.id, message: e.message }))).problems).toEqual([])
  })

  it("keeps a sidechain (subagent) record as an event, not a message; summary and system records as events, unknown types as reported events", () => {
    const a1 = byId.get("a1")!
    expect(a1.kind).toBe("event")
    expect(a1.kind === "event" && a1.event).toEqual({
      name: "claude-code.sidechain",
      data: {
        type: "user",
        uuid: "a1",
        parentUuid: null,
        sidechainRootUuid: "a1",
        agentId: "agent-1",
        message: { role: "user", content: "sub task" },
        messages: [{ role: "user", content: "sub task" }]
      }
    })
    expect(a1.meta).toMatchObject({ isSidechain: true, agentId: "agent-1" })
    const events = entries.filter((entry): entry is Entry.EventEntry => entry.kind === "event")
    expect(events.map((entry) => entry.event.name)).toEqual([
      "claude-code.summary",
      "claude-code.sidechain",
      "claude-code.system",
      "claude-code.unknown"
    ])
    // written after the assistant message that was being assembled when it was read, before the next one
    expect(entries.map((entry) => entry.id).indexOf("a1")).toBe(entries.map((entry) => entry.id).indexOf("u2") + 1)
    expect(result.issues).toEqual([
      { line: 8, action: "kept-as-event", reason: 'unknown Claude Code record type "file-history-snapshot"' }
    ])
  })
})

describe("Claude Code: parallel tool calls and a subagent run inline", () => {
  const assistant = (uuid: string, parentUuid: string, id: string, block: unknown, usage: unknown) =>
    record({ type: "assistant", uuid, parentUuid, message: { id, role: "assistant", content: [block], usage } })
  const result = (uuid: string, parentUuid: string, toolUseId: string, text: string) =>
    record({
      type: "user",
      uuid,
      parentUuid,
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: toolUseId, content: text }] }
    })
  const side = (fields: Record<string, unknown>) => record({ isSidechain: true, ...fields })
  const prompt = "List the files"
  const text = [
    record({ type: "user", uuid: "m0", parentUuid: null, message: { role: "user", content: "go" } }),
    assistant("m1", "m0", "msg_A", { type: "text", text: "Two things at once." }, { output_tokens: 1 }),
    assistant(
      "m2",
      "m1",
      "msg_A",
      { type: "tool_use", id: "tA", name: "Task", input: { prompt } },
      { output_tokens: 1 }
    ),
    assistant(
      "m3",
      "m2",
      "msg_A",
      { type: "tool_use", id: "tB", name: "Read", input: { path: "x" } },
      { output_tokens: 9 }
    ),
    side({ type: "user", uuid: "s0", parentUuid: null, message: { role: "user", content: prompt } }),
    side({
      type: "assistant",
      uuid: "s1",
      parentUuid: "s0",
      message: { id: "msg_S", role: "assistant", content: [{ type: "tool_use", id: "tS", name: "Bash", input: {} }] }
    }),
    result("m4", "m3", "tB", "x contents"),
    side({
      type: "user",
      uuid: "s2",
      parentUuid: "s1",
      message: { role: "user", content: [{ type: "tool_result", tool_use_id: "tS", content: "a b" }] }
    }),
    result("m5", "m4", "tA", "a, b"),
    assistant("m6", "m5", "msg_B", { type: "text", text: "Done." }, { output_tokens: 2 })
  ].join("\n")
  const imported = Import.importTextSync(text)
  const entries = imported.transcript.entries
  const messages = entries.filter(Entry.isMessageEntry)

  it("one assistant message holds both calls, one tool message both results, then the next assistant message", () => {
    expect(messages.map((entry) => [entry.id, entry.message.role])).toEqual([
      ["m0", "user"],
      ["m1", "assistant"],
      ["m4", "tool"],
      ["m6", "assistant"]
    ])
    const [, call, results, next] = messages
    expect(call!.message.content).toEqual([
      { type: "text", text: "Two things at once." },
      { type: "tool-call", toolCallId: "tA", toolName: "Task", input: { prompt } },
      { type: "tool-call", toolCallId: "tB", toolName: "Read", input: { path: "x" } }
    ])
    expect(call!.meta).toMatchObject({ messageId: "msg_A", mergedUuids: ["m2", "m3"], usage: { output_tokens: 9 } })
    expect(
      (results!.message.content as ReadonlyArray<{ toolCallId: string; toolName: string }>).map((part) => [
        part.toolCallId,
        part.toolName
      ])
    ).toEqual([
      ["tB", "Read"],
      ["tA", "Task"]
    ])
    expect(results!.meta).toMatchObject({ mergedUuids: ["m5"] })
    expect(results!.parentId).toBe("m1")
    expect(next!.parentId).toBe("m4")
    expect(adjacencyViolations(messages)).toEqual([])
  })

  it("keeps every sidechain record as an event tied to the Task call whose prompt started it, each after its parent", () => {
    const events = entries.filter(
      (entry): entry is Entry.EventEntry => entry.kind === "event" && entry.event.name === "claude-code.sidechain"
    )
    expect(events.map((entry) => entry.id)).toEqual(["s0", "s1", "s2"])
    for (const event of events)
      expect(event.event.data).toMatchObject({ sidechainRootUuid: "s0", taskToolCallId: "tA" })
    expect((events[2]!.event.data as { message: unknown }).message).toEqual({
      role: "user",
      content: [{ type: "tool_result", tool_use_id: "tS", content: "a b" }]
    })
    // …and as core messages, the shape `SubAgentWork` reads the sub-agent's calls in: the call, then its named result
    expect(events.slice(1).map((event) => (event.event.data as { messages: unknown }).messages)).toEqual([
      [{ role: "assistant", content: [{ type: "tool-call", toolCallId: "tS", toolName: "Bash", input: {} }] }],
      [
        {
          role: "tool",
          content: [{ type: "tool-result", toolCallId: "tS", toolName: "Bash", output: { type: "text", value: "a b" } }]
        }
      ]
    ])
    expect(
      SubAgentWork.byMessage(entries)
        .get("m1")
        ?.map((message) => message.role)
    ).toEqual(["assistant", "tool"])
    const position = new Map(entries.map((entry, index) => [entry.id, index]))
    for (const entry of entries)
      if (entry.parentId !== null) expect(position.get(entry.parentId)!).toBeLessThan(position.get(entry.id)!)
    // the sidechain's calls are not in the main conversation
    expect(ToolPairing.analyze(messages.map((e) => ({ entryId: e.id, message: e.message }))).toolCalls).toBe(2)
  })

  it("detects a violation: the same records with the sidechain kept inline would not be adjacent", () => {
    const inline = messages.flatMap((entry) =>
      entry.id === "m4" ? [{ ...entry, id: "s0", message: { role: "user" as const, content: prompt } }, entry] : [entry]
    )
    expect(adjacencyViolations(inline)).toEqual([
      "call tA of m1 has no result before s0",
      "call tB of m1 has no result before s0",
      "result tB in m4 does not follow its call",
      "result tA in m4 does not follow its call"
    ])
  })

  it("a subagent's own file (its first record a sidechain record) imports as messages", () => {
    const sub = Import.importTextSync(text.split("\n").slice(4, 6).join("\n"))
    expect(sub.transcript.entries.filter(Entry.isMessageEntry).map((entry) => entry.id)).toEqual(["s0", "s1"])
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
