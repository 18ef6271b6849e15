/**
 * `Import.streamFile` (issue #13 req 6): the entries a streamed import hands
 * to its sink, one at a time, are the entries `Import.importFile` returns —
 * same ids, parents, messages, checkpoints and events, in the same order —
 * with the same issues, sessions, lines and bytes, on every shared
 * line-format transcript; whole-JSON documents do not stream.
 */
import { writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import type { Entry } from "@context-engine/core"
import { LINE_FORMAT_TRANSCRIPTS, transcript } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"

describe("Import.streamFile", () => {
  for (const name of LINE_FORMAT_TRANSCRIPTS) {
    it(`streams the entries importFile returns, with the same facts: ${name}`, async () => {
      const path = transcript(name)
      const whole = await Import.importFilePromise(path, { metaKeys: ["model"] })
      const streamed: Array<Entry.Entry> = []
      const result = await Import.streamFile(path, { metaKeys: ["model"] }, (entry) => streamed.push(entry))
      expect(whole.transcript.entries.length).toBeGreaterThan(10)
      expect(streamed).toEqual(whole.transcript.entries)
      expect(result.transcript.entries).toEqual([])
      expect(result.entryCount).toBe(whole.transcript.entries.length)
      const { transcript: _streamedTranscript, entryCount: _count, ...facts } = result
      const { transcript: _wholeTranscript, ...wholeFacts } = whole
      expect(facts).toEqual(wholeFacts)
      expect(result.transcript.sessionId).toBe(whole.transcript.sessionId)
    })
  }

  it("a pi compaction's covered range ends at the entry before its first kept entry", async () => {
    const streamed: Array<Entry.Entry> = []
    await Import.streamFile(transcript("pi/before-compaction.jsonl"), {}, (entry) => streamed.push(entry))
    const checkpoints = streamed.filter((entry) => entry.kind === "checkpoint")
    expect(checkpoints.length).toBe(2)
    for (const entry of checkpoints) {
      if (entry.kind !== "checkpoint") continue
      const kept = streamed.findIndex((candidate) => candidate.id === entry.checkpoint.firstKeptEntryId)
      expect(kept).toBeGreaterThan(0)
      expect(entry.checkpoint.coveredRange.toEntryId).toBe(streamed[kept - 1]!.id)
    }
  })

  it("whole-JSON documents do not stream: detectFile says so and streamFile fails naming importFile", async () => {
    const path = transcript("swe-agent/pydicom__pydicom-1458.traj")
    expect(await Import.detectFile(path)).toMatchObject({ kind: "document" })
    expect((await Import.detectFile(transcript(LINE_FORMAT_TRANSCRIPTS[0]!))).kind).toBe("lines")
    const seen: Array<Entry.Entry> = []
    await expect(Import.streamFile(path, {}, (entry) => seen.push(entry))).rejects.toMatchObject({
      _tag: "TranscriptCorrupt",
      reason: expect.stringContaining("importFile")
    })
    expect(seen).toEqual([])
  })

  it("fails like importFile: a forced format that recognizes nothing is a FormatMismatch", async () => {
    const path = join(tmpdir(), `stream-file-${process.pid}.jsonl`)
    writeFileSync(path, `${JSON.stringify({ type: "session", id: "s", timestamp: "2026-01-01T00:00:00Z" })}\n`)
    await expect(Import.importFilePromise(path, { format: "claude-code" })).rejects.toMatchObject({
      _tag: "FormatMismatch"
    })
    await expect(Import.streamFile(path, { format: "claude-code" }, () => {})).rejects.toMatchObject({
      _tag: "FormatMismatch"
    })
  })
})
