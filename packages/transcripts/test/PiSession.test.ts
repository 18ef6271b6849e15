import { readFileSync } from "node:fs"
import { Decode, Entry, type Message } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"

const file = transcript("pi/before-compaction.jsonl")
/** The file parsed line by line, independently of the importer. */
const raw = readFileSync(file, "utf8")
  .split("\n")
  .filter((line) => line.length > 0)
  // biome-ignore lint/suspicious/noExplicitAny: raw JSON read independently of the importer
  .map((line) => JSON.parse(line) as Record<string, any>)

describe("pi session importer (before-compaction.jsonl)", async () => {
  const result = await Import.importFilePromise(file)
  const entries = result.transcript.entries
  const messages = entries.filter(Entry.isMessageEntry)

  it("detects the format by content and keeps one entry per line", () => {
    expect(result.format).toBe("pi")
    expect(entries).toHaveLength(raw.length)
    expect(result.issues).toEqual([])
  })

  it("imports the 990 messages of SOURCES.md (55 user + 3 bashExecution as user, 484 assistant, 448 tool)", () => {
    expect(messages).toHaveLength(990)
    const roles = (role: string) => messages.filter((entry) => entry.message.role === role).length
    expect(roles("assistant")).toBe(484)
    expect(roles("tool")).toBe(448)
    expect(roles("user")).toBe(55 + 3)
    expect(messages.filter((entry) => entry.meta?.role === "bashExecution")).toHaveLength(3)
  })

  it("keeps the 454 tool calls and 49 thinking blocks with their signatures", () => {
    const parts = messages.flatMap((entry) => Array.from(entry.message.content as ReadonlyArray<Message.ContentPart>))
    expect(parts.filter((part) => part.type === "tool-call")).toHaveLength(454)
    const reasoning = parts.filter((part): part is Message.ReasoningPart => part.type === "reasoning")
    expect(reasoning).toHaveLength(49)
    const signed = raw
      .flatMap((record) =>
        record.type === "message" && Array.isArray(record.message.content) ? record.message.content : []
      )
      .filter(
        (block: { type: string; thinkingSignature?: string }) => block.type === "thinking" && block.thinkingSignature
      )
      .map((block: { thinkingSignature: string }) => block.thinkingSignature)
    expect(reasoning.flatMap((part) => part.providerOptions?.anthropic?.signature ?? [])).toEqual(signed)
  })

  it("keeps both compaction entries as checkpoints with firstKeptEntryId and tokensBefore", () => {
    const checkpoints = entries.filter(Entry.isCheckpointEntry)
    expect(checkpoints.map((entry) => entry.checkpoint.tokensBefore)).toEqual([175_004, 185_014])
    const compactions = raw.filter((record) => record.type === "compaction")
    checkpoints.forEach((entry, index) => {
      const source = compactions[index]!
      expect(entry.checkpoint.summarizer.kind).toBe("imported")
      expect(entry.checkpoint.text).toBe(source.summary)
      expect(entry.checkpoint.generation).toBe(index + 1)
      // firstKeptEntryIndex indexes the file's entries (header included), as pi's v1→v2 migration reads it
      const keptIndex = entries.findIndex((candidate) => candidate.id === entry.checkpoint.firstKeptEntryId)
      expect(keptIndex).toBe(source.firstKeptEntryIndex)
      const kept = entries[keptIndex]!
      expect(kept.kind === "message" && kept.message.role).toBe(raw[source.firstKeptEntryIndex]!.message.role)
    })
    expect(checkpoints[1]!.checkpoint.coveredRange.fromEntryId).toBe(checkpoints[0]!.checkpoint.firstKeptEntryId)
  })

  it("keeps model and thinking-level changes as events", () => {
    const events = entries.filter((entry): entry is Entry.EventEntry => entry.kind === "event")
    expect(events.filter((entry) => entry.event.name === "model.change")).toHaveLength(5)
    expect(events.filter((entry) => entry.event.name === "thinking-level.change")).toHaveLength(5)
    expect(events.filter((entry) => entry.event.name === "session.start")).toHaveLength(1)
  })

  it("gives unique, stable ids and a parent chain in file order", async () => {
    const ids = entries.map((entry) => entry.id)
    expect(new Set(ids).size).toBe(ids.length)
    expect(entries.map((entry) => entry.parentId)).toEqual([null, ...ids.slice(0, -1)])
    const again = await Import.importFilePromise(file)
    expect(again.transcript.entries.map((entry) => entry.id)).toEqual(ids)
  })

  it("decodes every entry with the core Entry schema", () => {
    const decode = Decode.decodeUnknownSync(Entry.Entry, "entry")
    for (const entry of entries) expect(() => decode(entry)).not.toThrow()
  })
})

describe("pi session importer (content kinds)", () => {
  it("keeps images as base64 parts and renders bashExecution as the text pi sends the model", () => {
    const lines = [
      { type: "session", id: "s", timestamp: "2025-01-01T00:00:00.000Z" },
      {
        type: "message",
        timestamp: "2025-01-01T00:00:01.000Z",
        message: {
          role: "user",
          content: [
            { type: "text", text: "see" },
            { type: "image", data: "AAAA", mimeType: "image/jpeg" }
          ]
        }
      },
      {
        type: "message",
        timestamp: "2025-01-01T00:00:02.000Z",
        message: {
          role: "assistant",
          content: [{ type: "toolCall", id: "t", name: "read", arguments: { path: "a.png" } }]
        }
      },
      {
        type: "message",
        timestamp: "2025-01-01T00:00:03.000Z",
        message: {
          role: "toolResult",
          toolCallId: "t",
          toolName: "read",
          isError: false,
          content: [
            { type: "text", text: "image:" },
            { type: "image", data: "BBBB", mimeType: "image/png" }
          ]
        }
      },
      {
        type: "message",
        timestamp: "2025-01-01T00:00:04.000Z",
        message: {
          role: "bashExecution",
          command: "false",
          output: "",
          exitCode: 1,
          cancelled: false,
          truncated: false
        }
      }
    ]
    const result = Import.importTextSync(lines.map((line) => JSON.stringify(line)).join("\n"))
    const messages = result.transcript.entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
    expect(messages[0]).toEqual({
      role: "user",
      content: [
        { type: "text", text: "see" },
        { type: "image", image: "AAAA", mediaType: "image/jpeg" }
      ]
    })
    expect(messages[2]).toEqual({
      role: "tool",
      content: [
        {
          type: "tool-result",
          toolCallId: "t",
          toolName: "read",
          output: {
            type: "content",
            value: [
              { type: "text", text: "image:" },
              { type: "image-data", data: "BBBB", mediaType: "image/png" }
            ]
          }
        }
      ]
    })
    expect(messages[3]).toEqual({
      role: "user",
      content: [{ type: "text", text: "Ran `false`\n(no output)\n\nCommand exited with code 1" }]
    })
  })
})

describe("pi session importer (v2 ids)", () => {
  it("uses source ids and parentIds and resolves firstKeptEntryId", () => {
    const lines = [
      { type: "session", version: 2, id: "s1", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/x" },
      {
        type: "message",
        id: "a1",
        parentId: null,
        timestamp: "2025-01-01T00:00:01.000Z",
        message: { role: "user", content: "hi", timestamp: 1 }
      },
      {
        type: "message",
        id: "a2",
        parentId: "a1",
        timestamp: "2025-01-01T00:00:02.000Z",
        message: { role: "assistant", content: [{ type: "text", text: "yo" }] }
      },
      {
        type: "compaction",
        id: "c1",
        parentId: "a2",
        timestamp: "2025-01-01T00:00:03.000Z",
        summary: "S",
        firstKeptEntryId: "a2",
        tokensBefore: 10
      }
    ]
    const result = Import.importTextSync(lines.map((line) => JSON.stringify(line)).join("\n"))
    const ids = result.transcript.entries.map((entry) => [entry.id, entry.parentId])
    expect(ids).toEqual([
      ["session:s1", null],
      ["a1", "session:s1"],
      ["a2", "a1"],
      ["c1", "a2"]
    ])
    const checkpoint = result.transcript.entries[3]!
    expect(checkpoint.kind === "checkpoint" && checkpoint.checkpoint.firstKeptEntryId).toBe("a2")
  })
})
