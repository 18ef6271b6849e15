/**
 * `ImportOptions.metaKeys` (issue #13 req 6): an import that keeps only some
 * `meta` keys holds nothing else of the source's extra fields (pi's
 * tool-result `details`, per-message `usage`), and the rest of every entry is
 * the same as a full import's.
 */
import { readFileSync } from "node:fs"
import { transcript } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"

const file = transcript("pi/before-compaction.jsonl")

describe("ImportOptions.metaKeys", async () => {
  const full = (await Import.importFilePromise(file)).transcript.entries
  const lean = (await Import.importFilePromise(file, { metaKeys: ["model"] })).transcript.entries
  // what the file holds, read independently of the importer
  const raw = readFileSync(file, "utf8")
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => JSON.parse(line) as { message?: { role?: string; details?: unknown; model?: unknown } })

  it("the full import keeps the source's tool-result details (what metaKeys leaves out)", () => {
    const withDetails = raw.filter((record) => record.message?.role === "toolResult" && record.message.details)
    expect(withDetails.length).toBeGreaterThan(0)
    expect(full.filter((entry) => entry.meta?.details !== undefined)).toHaveLength(withDetails.length)
  })

  it("keeps only the listed keys, with their values, and every entry otherwise as the full import has it", () => {
    expect(lean).toHaveLength(full.length)
    const models = raw.filter(
      (record) => record.message?.role === "assistant" && typeof record.message.model === "string"
    )
    expect(lean.filter((entry) => typeof entry.meta?.model === "string")).toHaveLength(models.length)
    lean.forEach((entry, index) => {
      const { meta: fullMeta, ...rest } = full[index]!
      const { meta, ...leanRest } = entry
      expect(leanRest).toEqual(rest)
      expect(Object.keys(meta ?? {})).toEqual(fullMeta?.model === undefined ? [] : ["model"])
      expect(meta?.model).toEqual(fullMeta?.model)
    })
  })
})
