/**
 * The context tools on the shared transcripts: after a checkpoint covered
 * the early work, `context_search` finds a detail that only a covered tool
 * result holds, and `context_restore` returns the original characters —
 * with the in-process index (in-memory store) and with SQLite FTS5.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Entry, InMemoryTranscriptStore } from "@context-engine/core"
import { SqliteTranscriptStore } from "@context-engine/core/node"
import { transcript } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { Import } from "@context-engine/transcripts"
import type { ToolExecutionOptions } from "ai"
import { afterAll, describe, expect, expectTypeOf, it } from "vitest"
import { type ContextToolsOptions, contextTools } from "../src/ContextTools.ts"
import * as Session from "../src/Session.ts"

const directory = mkdtempSync(join(tmpdir(), "context-tools-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const call = { toolCallId: "t", messages: [] } as unknown as ToolExecutionOptions<never>
const run = async (
  tools: ReturnType<typeof contextTools>,
  name: string,
  input: Record<string, unknown>
  // biome-ignore lint/suspicious/noExplicitAny: tool outputs are plain JSON records
): Promise<any> => tools[name]!.execute!(input, call)

/** Text of a tool message's results, read straight from the parts (not through the code under test). */
const resultText = (entry: Entry.Entry): string | undefined => {
  if (entry.kind !== "message" || entry.message.role !== "tool" || typeof entry.message.content === "string")
    return undefined
  const texts = entry.message.content.flatMap((part) =>
    part.type === "tool-result" && (part.output.type === "text" || part.output.type === "error-text")
      ? [part.output.value]
      : []
  )
  return texts.length === 1 ? texts[0] : undefined
}

/** A word that occurs in exactly one entry of the transcript: in a tool result the checkpoint covered. */
const uniqueDetail = (entries: ReadonlyArray<Entry.Entry>, covered: ReadonlyArray<Entry.Entry>) => {
  const all = entries.map((entry) => JSON.stringify(entry).toLowerCase())
  for (const entry of covered) {
    const text = resultText(entry)
    if (text === undefined) continue
    for (const match of text.matchAll(/\b[A-Za-z][A-Za-z0-9]{9,}\b/g)) {
      const word = match[0].toLowerCase()
      if (all.filter((serialized) => serialized.includes(word)).length === 1)
        return { entry, word: match[0], offset: match.index, text }
    }
  }
  throw new Error("no unique word in the covered tool results")
}

const cases = [
  { file: "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj", store: "memory" },
  { file: "pi/large-session.jsonl", store: "sqlite" }
] as const

describe("contextTools options", () => {
  it("types store as the session's store, with search optional: a wrong store does not compile (s6 trial: it was unknown)", () => {
    type Store = NonNullable<ContextToolsOptions["store"]>
    expectTypeOf<ReturnType<typeof InMemoryTranscriptStore.open>>().toExtend<Store>()
    expectTypeOf<ReturnType<typeof SqliteTranscriptStore.open>>().toExtend<Store>()
    expectTypeOf<Store>().toExtend<Session.SessionStore>()
    expectTypeOf<{ readonly search: string }>().not.toExtend<Store>()
    expectTypeOf<Session.Session>().not.toExtend<Store>()
    expectTypeOf<string>().not.toExtend<Store>()
  })
})

describe("context tools on the shared transcripts", () => {
  for (const { file, store: kind } of cases) {
    it(`${file} (${kind}): search finds a detail a checkpoint covered; restore returns the original characters`, async () => {
      const imported = await Import.importFilePromise(transcript(file))
      // Messages only, re-linked in order (the store checks parent ids).
      const entries = imported.transcript.entries
        .filter((entry) => entry.kind === "message")
        .map((entry, index, list) => ({ ...entry, parentId: index === 0 ? null : list[index - 1]!.id }))
      const store =
        kind === "sqlite"
          ? SqliteTranscriptStore.open({ filename: join(directory, "tools.sqlite") })
          : InMemoryTranscriptStore.open()
      try {
        await store.append("s", entries)
        const session = await Session.make("s", store)
        const policy = Cases.policySync(
          { contextWindow: 32_000, maxOutputTokens: 2_000, keepRecentTokens: 1_500 },
          "test"
        )
        const result = await TieredSummaryEngine.makeAsync().compact({
          entries: session.entries(),
          policy,
          manual: true
        })
        expect(result.checkpoint, JSON.stringify(result.stages)).toBeDefined()
        await session.append(result.entriesToAppend)
        const firstKept = entries.findIndex((entry) => entry.id === result.checkpoint!.firstKeptEntryId)
        const detail = uniqueDetail(entries, entries.slice(0, firstKept))

        const tools = contextTools({ session, store })
        const found = await run(tools, "context_search", { text: detail.word })
        const hit = found.hits.find((candidate: { entry: string }) => candidate.entry === detail.entry.id)
        expect(hit, `${detail.word} in ${detail.entry.id}`).toBeDefined()
        expect(found.hits[0].entry).toBe(detail.entry.id)
        expect(hit.placement).toBe("covered-by-checkpoint")
        expect(hit.snippet.toLowerCase()).toContain(detail.word.toLowerCase())

        const piece = await run(tools, "context_restore", {
          entry: detail.entry.id,
          offset: detail.offset,
          length: 500
        })
        expect(piece.text).toBe(detail.text.slice(detail.offset, detail.offset + 500))
        expect(piece.totalChars).toBe(detail.text.length)
        // The hit's ready restore call reads a window that holds the detail.
        const ready = await run(tools, "context_restore", hit.restore)
        expect(ready.text).toContain(detail.word)
      } finally {
        await store.close()
      }
    }, 60_000)
  }
})
