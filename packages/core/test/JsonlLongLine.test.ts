/**
 * #12 req 1: a 40 MiB single-line JSONL transcript reads in time
 * proportional to its size. Asserted structurally (no timing): the bytes the
 * store copies while reading stay within twice the file's size (the reader
 * used to re-copy the unfinished line on every 64 KiB chunk: about n² / 128 KiB
 * bytes, 13 GB for 40 MiB). `pnpm bench` prints the time ratio against a
 * 4 MiB line.
 */
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it, vi } from "vitest"
import * as JsonlTranscriptStore from "../src/JsonlTranscriptStore.ts"

const directory = mkdtempSync(join(tmpdir(), "jsonl-long-line-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const line = (id: string, textBytes: number): string =>
  JSON.stringify({
    id,
    parentId: null,
    timestamp: "2026-01-01T00:00:00.000Z",
    schemaVersion: 1,
    kind: "message",
    message: { role: "user", content: [{ type: "text", text: "a".repeat(textBytes) }] }
  })

describe("JSONL store, one 40 MiB line", () => {
  it("reads it whole, copying at most twice the file's bytes (linear)", async () => {
    writeFileSync(join(directory, "long.jsonl"), `${line("e1", 40 * 1024 * 1024)}\n${line("e2", 10)}\n`)
    const fileBytes = statSync(join(directory, "long.jsonl")).size
    const store = JsonlTranscriptStore.open({ directory })
    const concat = vi.spyOn(Buffer, "concat")
    try {
      const { entries } = await store.load("long", { strict: true })
      expect(entries.map((entry) => entry.id)).toEqual(["e1", "e2"])
      const first = entries[0]!
      expect(first.kind === "message" && JSON.stringify(first.message).length).toBeGreaterThan(40 * 1024 * 1024)
      const copied = concat.mock.results.reduce((sum, result) => sum + (result.value as Buffer).length, 0)
      expect(copied).toBeLessThanOrEqual(2 * fileBytes)
    } finally {
      concat.mockRestore()
    }
  }, 120_000)
})
