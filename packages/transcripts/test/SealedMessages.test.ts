/**
 * Imported messages are sealed (`MessageSeal`, issue #13 req 6): an entry's
 * message, its content array and its parts are frozen, so the measurer keeps
 * no per-message shape to re-check them — and an importer-built message can
 * never be edited in place. A document the caller passes (`importValue`) is
 * not modified: the sealed messages are copies.
 */
import { readFileSync } from "node:fs"
import { type Entry, MessageSeal } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"

const messagesOf = (entries: ReadonlyArray<Entry.Entry>) =>
  entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))

describe("imported messages are sealed", () => {
  it("every message of a pi session is sealed and throws on an in-place edit", async () => {
    const file = transcript("pi/before-compaction.jsonl")
    const messages = messagesOf((await Import.importFilePromise(file)).transcript.entries)
    const lines = readFileSync(file, "utf8")
      .split("\n")
      .filter((line) => line.includes('"type":"message"'))
    expect(messages.length).toBeGreaterThan(lines.length / 2)
    expect(messages.filter((message) => !MessageSeal.isSealed(message))).toEqual([])
    const withParts = messages.find((message) => Array.isArray((message as { content: unknown }).content))!
    expect(() => {
      ;(withParts as { role: string }).role = "system"
    }).toThrow(TypeError)
  })

  it("a document given as a value is left as it was; its messages are imported sealed", () => {
    const document = {
      messages: [
        { role: "user", content: [{ type: "text", text: "hello" }] },
        { role: "assistant", content: "hi" }
      ]
    }
    const before = structuredClone(document)
    const messages = messagesOf(Import.importValueSync(document).transcript.entries)
    expect(messages).toEqual(before.messages)
    expect(messages.every((message) => MessageSeal.isSealed(message))).toBe(true)
    expect(document).toEqual(before)
    expect(Object.isFrozen(document.messages[0])).toBe(false)
    expect(Object.isFrozen(document.messages[0]!.content[0])).toBe(false)
  })
})
