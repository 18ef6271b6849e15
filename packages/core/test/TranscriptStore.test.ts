import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Effect, Stream } from "effect"
import * as fc from "fast-check"
import { afterAll, describe, expect, it } from "vitest"
import * as CheckpointRenderer from "../src/CheckpointRenderer.ts"
import type { CheckpointEntry, EditEntry, Entry, MemoryEntry, MessageEntry } from "../src/Entry.ts"
import * as InMemoryTranscriptStore from "../src/InMemoryTranscriptStore.ts"
import * as JsonlTranscriptStore from "../src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../src/SqliteTranscriptStore.ts"
import type { AsyncTranscriptStore } from "../src/TranscriptStore.ts"
import * as TranscriptStore from "../src/TranscriptStore.ts"
import { piEntries } from "./support/piEntries.ts"
import { transcript } from "./support/shared.ts"

const root = mkdtempSync(join(tmpdir(), "transcript-store-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let counter = 0
const fresh = (name: string) => join(root, `${name}-${++counter}`)

const timestamp = "2026-01-01T00:00:00.000Z"
const message = (
  id: string,
  parentId: string | null,
  content: string,
  role: "user" | "assistant" | "system" = "user"
): MessageEntry => ({
  id,
  parentId,
  timestamp,
  schemaVersion: 1,
  kind: "message",
  message: { role, content }
})
const checkpoint = (
  id: string,
  parentId: string,
  generation: number,
  toEntryId: string,
  firstKeptEntryId: string | null,
  text = `summary ${id}`
): CheckpointEntry => ({
  id,
  parentId,
  timestamp,
  schemaVersion: 1,
  kind: "checkpoint",
  checkpoint: {
    id: `k-${id}`,
    generation,
    coveredRange: { fromEntryId: null, toEntryId },
    firstKeptEntryId,
    tokensBefore: 100,
    tokensAfter: 10,
    summarizer: { kind: "extractive", promptVersion: "1" },
    text,
    createdAt: timestamp
  }
})
const memory = (id: string, parentId: string, text: string): MemoryEntry => ({
  id,
  parentId,
  timestamp,
  schemaVersion: 1,
  kind: "memory",
  memory: { text, sourceEntryIds: [parentId] }
})
const replaceEdit = (id: string, parentId: string, entryId: string, content: string): EditEntry => ({
  id,
  parentId,
  timestamp,
  schemaVersion: 1,
  kind: "edit",
  edit: { op: "replace", entryId, message: { role: "user", content }, strategy: "toolTrim", reason: "test" }
})

interface Kind {
  readonly name: string
  /** Opens a store; the same `location` reopens the same data (a restart). */
  readonly open: (location: string) => AsyncTranscriptStore
  readonly durable: boolean
}

const memoryData = new Map<string, InMemoryTranscriptStore.Records>()
const kinds: ReadonlyArray<Kind> = [
  {
    name: "memory",
    durable: false,
    open: (location) => {
      const records = memoryData.get(location) ?? new Map()
      memoryData.set(location, records)
      return InMemoryTranscriptStore.open(records)
    }
  },
  { name: "jsonl", durable: true, open: (location) => JsonlTranscriptStore.open({ directory: location }) },
  {
    name: "sqlite",
    durable: true,
    open: (location) => SqliteTranscriptStore.open({ filename: join(location, "store.db") })
  }
]

const rejection = async (promise: Promise<unknown>) => {
  try {
    await promise
  } catch (error) {
    return error as { _tag: string; path?: string; line?: number } & Record<string, unknown>
  }
  throw new Error("expected a rejection")
}

const ids = (view: { view: { items: ReadonlyArray<{ entryId: string }> } }) =>
  view.view.items.map((item) => item.entryId)

describe.each(kinds)("$name transcript store", (kind) => {
  it("appends, streams back in order, and treats an identical retry as a no-op", async () => {
    const store = kind.open(fresh(kind.name))
    const entries = [message("a", null, "hi"), message("b", "a", "hello", "assistant")]
    expect(await store.append("s", entries)).toEqual({ appended: 2, skipped: 0 })
    expect(await store.append("s", [entries[1]!, message("c", "b", "more")])).toEqual({ appended: 1, skipped: 1 })
    const read: Array<Entry> = []
    for await (const entry of store.read("s")) read.push(entry)
    expect(read.map((entry) => entry.id)).toEqual(["a", "b", "c"])
    expect(read[1]).toEqual(entries[1])
    await store.close()
  })

  it("rejects a reused id with other content, a dangling parent, a schema error and a checkpoint via append", async () => {
    const store = kind.open(fresh(kind.name))
    await store.append("s", [message("a", null, "hi")])
    expect(await rejection(store.append("s", [message("a", null, "changed")]))).toMatchObject({
      _tag: "InvalidInput",
      path: "[0].id"
    })
    expect(await rejection(store.append("s", [message("b", "nowhere", "x")]))).toMatchObject({
      _tag: "InvalidInput",
      path: "[0].parentId"
    })
    const broken = { ...message("c", "a", "x"), message: { role: "user", content: 42 } } as unknown as Entry
    expect(await rejection(store.append("s", [broken]))).toMatchObject({ _tag: "InvalidInput" })
    expect(await rejection(store.append("s", [checkpoint("k", "a", 1, "a", null)]))).toMatchObject({
      _tag: "InvalidInput",
      path: "[0].kind"
    })
    expect((await store.load("s")).entries.map((entry) => entry.id)).toEqual(["a"])
    await store.close()
  })

  it("installs checkpoints with compare-and-set on the generation", async () => {
    const store = kind.open(fresh(kind.name))
    await store.append("s", [message("a", null, "one"), message("b", "a", "two")])
    await store.installCheckpoint("s", checkpoint("k1", "b", 1, "a", "b"))
    // Retrying the very same install is a no-op.
    await store.installCheckpoint("s", checkpoint("k1", "b", 1, "a", "b"))
    const lost = await rejection(store.installCheckpoint("s", checkpoint("k1-other", "b", 1, "a", "b")))
    expect(lost).toMatchObject({
      _tag: "CheckpointConflict",
      attemptedGeneration: 1,
      installedGeneration: 1,
      winnerCheckpointId: "k1"
    })
    expect(await rejection(store.installCheckpoint("s", checkpoint("k3", "b", 3, "a", "b")))).toMatchObject({
      _tag: "CheckpointConflict",
      installedGeneration: 1
    })
    expect(await rejection(store.installCheckpoint("s", checkpoint("k2", "b", 2, "a", "missing")))).toMatchObject({
      _tag: "InvalidInput",
      path: "checkpoint.firstKeptEntryId"
    })
    const entries = (await store.load("s")).entries
    expect(entries.filter((entry) => entry.kind === "checkpoint").map((entry) => entry.id)).toEqual(["k1"])
    expect((await store.latestCheckpoint("s"))?.id).toBe("k1")
    await store.close()
  })

  it("reconstructs system + memory + checkpoint + kept tail, replays messages after the checkpoint and applies edits", async () => {
    const location = fresh(kind.name)
    const store = kind.open(location)
    await store.append("s", [
      message("sys", null, "You are helpful.", "system"),
      message("u1", "sys", "first task"),
      message("a1", "u1", "done", "assistant"),
      memory("mem", "a1", "user prefers tabs"),
      message("u2", "mem", "second task"),
      message("a2", "u2", "working", "assistant")
    ])
    await store.installCheckpoint("s", checkpoint("cp", "a2", 1, "a1", "u2", "FIRST TASK SUMMARY"))
    // The process "died" before compacting again: these come after the checkpoint.
    await store.append("s", [
      message("u3", "cp", "third task"),
      replaceEdit("e1", "u3", "a2", "working (trimmed)"),
      replaceEdit("e2", "e1", "u1", "edit of a covered entry is ignored")
    ])
    await store.close()

    const restarted = kind.open(location)
    const active = await restarted.activeView("s")
    expect(ids(active)).toEqual(["sys", "mem", "cp", "u2", "a2", "u3"])
    expect(active.view.items.map((item) => item.source)).toEqual([
      "transcript",
      "memory",
      "checkpoint",
      "transcript",
      "transcript",
      "transcript"
    ])
    // The one renderer (CheckpointRenderer): reference-only framing, then the checkpoint's text.
    const rendered = JSON.stringify(active.view.items[2]!.message.content)
    expect(active.view.items[2]!.message.role).toBe("user")
    expect(rendered).toContain("reference only, not a new request")
    expect(rendered).toContain("FIRST TASK SUMMARY")
    expect(active.view.items[4]!.message.content).toBe("working (trimmed)")
    expect(active.view.items[4]!.editedBy).toEqual(["toolTrim"])
    expect(active.nextGeneration).toBe(2)
    await restarted.close()
  })

  it("navigates to the view before a checkpoint and rolls back without reusing generations", async () => {
    const store = kind.open(fresh(kind.name))
    await store.append("s", [message("u1", null, "a"), message("a1", "u1", "b", "assistant"), message("u2", "a1", "c")])
    await store.installCheckpoint("s", checkpoint("cp1", "u2", 1, "a1", "u2"))
    await store.append("s", [message("a2", "cp1", "d", "assistant"), message("u3", "a2", "e")])
    await store.installCheckpoint("s", checkpoint("cp2", "u3", 2, "a2", "u3"))
    expect(ids(await store.activeView("s"))).toEqual(["cp2", "u3"])
    expect(ids(await store.activeView("s", { beforeCheckpointId: "cp2" }))).toEqual(["cp1", "u2", "a2", "u3"])
    expect(ids(await store.activeView("s", { beforeCheckpointId: "cp1" }))).toEqual(["u1", "a1", "u2"])

    await store.rollback("s", "cp2")
    const rolledBack = await store.activeView("s")
    expect(ids(rolledBack).filter((id) => !id.startsWith("rollback-"))).toEqual(["cp1", "u2", "a2", "u3"])
    expect(rolledBack.checkpoint?.id).toBe("cp1")
    expect(rolledBack.nextGeneration).toBe(3)
    const rollbackId = (await store.load("s")).entries.at(-1)!.id
    await store.installCheckpoint("s", checkpoint("cp3", rollbackId, 3, "a2", "u3"))
    expect((await store.latestCheckpoint("s"))?.id).toBe("cp3")
    expect(await rejection(store.rollback("s", "u3"))).toMatchObject({ _tag: "InvalidInput" })
    await store.close()
  })

  it("persists binary content in JSON-safe forms", async () => {
    const store = kind.open(fresh(kind.name))
    const entry: MessageEntry = {
      id: "img",
      parentId: null,
      timestamp,
      schemaVersion: 1,
      kind: "message",
      message: {
        role: "user",
        content: [
          { type: "image", image: new Uint8Array([1, 2, 3, 250]), mediaType: "image/png" },
          { type: "file", data: new URL("https://example.com/a.pdf"), mediaType: "application/pdf" },
          {
            type: "file",
            data: { type: "url", url: new URL("https://example.com/b.pdf") },
            mediaType: "application/pdf"
          }
        ]
      }
    }
    await store.append("s", [entry])
    const [read] = (await store.load("s", { strict: true })).entries
    const content = (read as MessageEntry).message.content as ReadonlyArray<Record<string, unknown>>
    expect(content[0]!.image).toBe(Buffer.from([1, 2, 3, 250]).toString("base64"))
    expect(content[1]!.data).toBe("https://example.com/a.pdf")
    expect((content[2]!.data as { url: unknown }).url).toEqual(new URL("https://example.com/b.pdf"))
    // A retry of the same entry (with bytes again) is recognised as identical.
    expect(await store.append("s", [entry])).toEqual({ appended: 0, skipped: 1 })
    await store.close()
  })

  it("lists sessions, including ids that are not file-name safe", async () => {
    const store = kind.open(fresh(kind.name))
    await store.append("alpha", [message("a", null, "x")])
    await store.append("team/beta ../x", [message("a", null, "x")])
    const sessions = (await store.listSessions()).map((session) => session.sessionId).sort()
    expect(sessions).toEqual(["alpha", "team/beta ../x"])
    expect((await store.load("team/beta ../x")).entries).toHaveLength(1)
    expect((await store.load("unknown")).entries).toEqual([])
    await store.close()
  })

  // Only the durable stores write the transcript through a file or a database.
  if (kind.durable)
    it("round-trips the real 2.4 MB pi transcript", async () => {
      const entries = piEntries(transcript("pi/before-compaction.jsonl"))
      const location = fresh(kind.name)
      const store = kind.open(location)
      await store.append("pi", entries)
      await store.close()
      const reopened = kind.open(location)
      const loaded = await reopened.load("pi", { strict: true })
      expect(loaded.issues).toEqual([])
      expect(loaded.entries).toEqual(entries)
      const active = await reopened.activeView("pi")
      expect(active.view.items).toHaveLength(entries.filter((entry) => entry.kind === "message").length)
      await reopened.close()
    })

  it("keeps every message in the view or under the active checkpoint, the latest user message always (property)", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.constant("message" as const), fc.constant("checkpoint" as const)), {
          minLength: 1,
          maxLength: 25
        }),
        fc.array(fc.nat(), { minLength: 25, maxLength: 25 }),
        async (steps, picks) => {
          const store = kind.open(fresh(kind.name))
          const written: Array<string> = []
          let generation = 1
          for (const [index, step] of steps.entries()) {
            const last = written.at(-1) ?? null
            if (step === "checkpoint" && last !== null) {
              const kept = written[picks[index]! % written.length]!
              await store.installCheckpoint("p", checkpoint(`cp${index}`, last, generation++, last, kept))
              written.push(`cp${index}`)
            } else {
              await store.append("p", [message(`m${index}`, last, `text ${index}`)])
              written.push(`m${index}`)
            }
          }
          const { view, checkpoint: active } = await store.activeView("p")
          const shown = new Set(view.items.map((item) => item.entryId))
          const keptAt = active?.checkpoint.firstKeptEntryId ? written.indexOf(active.checkpoint.firstKeptEntryId) : 0
          // Every message is user-role here: the latest one is pinned verbatim even when covered.
          const latestUser = written.findLast((id) => id.startsWith("m"))
          for (const [position, id] of written.entries()) {
            if (!id.startsWith("m")) continue
            expect(shown.has(id)).toBe(position >= keptAt || id === latestUser)
          }
          expect(active?.checkpoint.generation ?? 0).toBe(generation - 1)
          await store.close()
        }
      ),
      { numRuns: kind.name === "memory" ? 60 : 15 }
    )
  })
})

describe("bad input in a hand-edited JSONL transcript", () => {
  const good = (id: string, parentId: string | null) => JSON.stringify(message(id, parentId, `text ${id}`))
  const lines = [
    good("a", null),
    "{ this is not json",
    JSON.stringify({ ...message("x", "a", "?"), kind: "reaction" }),
    good("a", null),
    good("b", "ghost"),
    JSON.stringify({ ...checkpoint("future", "a", 1, "a", "a"), schemaVersion: 2 }),
    JSON.stringify({ ...message("bad", "a", "?"), message: { role: "wizard", content: "?" } }),
    good("c", "b")
  ]

  const setup = () => {
    const directory = fresh("hand-edited")
    const store = JsonlTranscriptStore.open({ directory })
    writeFileSync(JsonlTranscriptStore.sessionPath(directory, "s"), `${lines.join("\n")}\n`)
    return { store, directory }
  }

  it("reports each bad line with its number and reason and keeps reading (lenient)", async () => {
    const { store } = setup()
    const loaded = await store.load("s")
    expect(loaded.entries.map((entry) => entry.id)).toEqual(["a", "b", "c"])
    expect(loaded.issues.map((issue) => [issue.line, issue.kind])).toEqual([
      [2, "invalid-json"],
      [3, "unknown-kind"],
      [4, "duplicate-id"],
      [5, "dangling-parent"],
      [6, "unsupported-schema-version"],
      [7, "invalid-entry"]
    ])
    expect(loaded.issues[1]!.reason).toContain('"reaction"')
    expect(loaded.issues[3]!.reason).toContain("ghost")
    expect(loaded.issues[5]!.reason).toContain("role")
    // Checkpoint state of another schema version is "no state", not a crash.
    const active = await store.activeView("s")
    expect(active.checkpoint).toBeUndefined()
    expect(ids(active)).toEqual(["a", "b", "c"])
  })

  it("fails a strict read with TranscriptCorrupt naming the first bad line", async () => {
    const { store } = setup()
    expect(await rejection(store.load("s", { strict: true }))).toMatchObject({ _tag: "TranscriptCorrupt", line: 2 })
    const streamed: Array<string> = []
    const error = await rejection(
      (async () => {
        for await (const entry of store.read("s", { strict: true })) streamed.push(entry.id)
      })()
    )
    expect(error).toMatchObject({ _tag: "TranscriptCorrupt", line: 2 })
    expect(streamed).toEqual(["a"])
  })

  it("ignores a checkpoint whose firstKeptEntryId points nowhere and falls back to the previous one", async () => {
    const directory = fresh("bad-checkpoint")
    const store = JsonlTranscriptStore.open({ directory })
    await store.append("s", [message("a", null, "x"), message("b", "a", "y")])
    await store.installCheckpoint("s", checkpoint("cp1", "b", 1, "a", "b"))
    appendFileSync(
      JsonlTranscriptStore.sessionPath(directory, "s"),
      `${JSON.stringify(checkpoint("cp2", "cp1", 2, "b", "nowhere"))}\n`
    )
    const active = await store.activeView("s")
    expect(active.checkpoint?.id).toBe("cp1")
    expect(active.skippedCheckpoints).toEqual([{ entryId: "cp2", reason: expect.stringContaining("nowhere") }])
  })
})

describe("torn final line in a JSONL transcript", () => {
  it("is ignored with a warning by readers (strict too) and cut off by the next writer", async () => {
    const directory = fresh("torn")
    const store = JsonlTranscriptStore.open({ directory })
    await store.append("s", [message("a", null, "x"), message("b", "a", "y")])
    const file = JsonlTranscriptStore.sessionPath(directory, "s")
    const whole = JSON.stringify(message("c", "b", "never acknowledged"))
    appendFileSync(file, whole.slice(0, 30))

    const lenient = await store.load("s")
    expect(lenient.entries.map((entry) => entry.id)).toEqual(["a", "b"])
    expect(lenient.issues).toEqual([expect.objectContaining({ kind: "torn-line", line: 3 })])
    expect((await store.load("s", { strict: true })).entries).toHaveLength(2)

    const restarted = JsonlTranscriptStore.open({ directory })
    await restarted.append("s", [message("c", "b", "acknowledged")])
    const text = readFileSync(file, "utf8")
    expect(text.endsWith("\n")).toBe(true)
    expect(text.split("\n").filter(Boolean)).toHaveLength(3)
    const after = await restarted.load("s", { strict: true })
    expect(after.issues).toEqual([])
    expect(after.entries.map((entry) => entry.id)).toEqual(["a", "b", "c"])
  })
})

describe("a hand-edited JSONL transcript without a final newline", () => {
  it("reads the complete last line (with a warning) and the next writer terminates it", async () => {
    const directory = fresh("no-final-newline")
    const store = JsonlTranscriptStore.open({ directory })
    const file = JsonlTranscriptStore.sessionPath(directory, "s")
    writeFileSync(file, `${JSON.stringify(message("a", null, "x"))}\n${JSON.stringify(message("b", "a", "y"))}`)
    const before = await store.load("s")
    expect(before.entries.map((entry) => entry.id)).toEqual(["a", "b"])
    expect(before.issues).toEqual([expect.objectContaining({ kind: "torn-line", line: 2 })])
    await store.append("s", [message("c", "b", "z")])
    const loaded = await store.load("s", { strict: true })
    expect(loaded.entries.map((entry) => entry.id)).toEqual(["a", "b", "c"])
    expect(readFileSync(file, "utf8").split("\n")).toHaveLength(4)
  })
})

describe("corrupt rows in a SQLite transcript", () => {
  it("are reported with their row number; strict reads fail", async () => {
    const directory = fresh("sqlite-corrupt")
    const filename = join(directory, "store.db")
    const store = SqliteTranscriptStore.open({ filename })
    await store.append("s", [message("a", null, "x")])
    const { DatabaseSync } = await import("node:sqlite")
    const database = new DatabaseSync(filename)
    database.prepare("INSERT INTO transcript_entries (session_id, json) VALUES (?, ?)").run("s", "{ not json")
    database.close()
    await store.append("s", [message("b", "a", "y")])
    const loaded = await store.load("s")
    expect(loaded.entries.map((entry) => entry.id)).toEqual(["a", "b"])
    expect(loaded.issues).toEqual([expect.objectContaining({ kind: "invalid-json", line: 2 })])
    expect(await rejection(store.load("s", { strict: true }))).toMatchObject({ _tag: "TranscriptCorrupt", line: 2 })
    await store.close()
  })
})

describe("CheckpointRenderer.render", () => {
  it("renders the content sections when there is no text", () => {
    const entry = checkpoint("cp", "a", 1, "a", null)
    const { text: _text, ...withoutText } = entry.checkpoint
    const rendered = CheckpointRenderer.render({
      ...withoutText,
      content: {
        goal: "Ship the store",
        constraints: ["no data loss"],
        progress: { done: ["JSONL"], inProgress: ["SQLite"], blocked: [] },
        decisions: [{ decision: "fsync per append", rationale: "acknowledged means durable" }],
        nextSteps: ["bench"],
        criticalContext: [],
        pendingUserAsks: [],
        identifiers: { paths: [], ids: [], hashes: [], urls: [], ports: [], commands: [], errors: [] },
        filesRead: [],
        filesModified: ["packages/core/src/JsonlTranscriptStore.ts"]
      }
    })
    expect(rendered).toContain("## Goal\nShip the store")
    expect(rendered).toContain("- **fsync per append**: acknowledged means durable")
    expect(rendered).toContain("<modified-files>\npackages/core/src/JsonlTranscriptStore.ts\n</modified-files>")
    expect(rendered).not.toContain("<read-files>")
  })
})

describe("TranscriptStore service and layers", () => {
  it("is provided by a layer and streams entries through Effect", async () => {
    const directory = fresh("layer")
    const program = Effect.gen(function* () {
      const store = yield* TranscriptStore.TranscriptStore
      yield* store.append("s", [message("a", null, "x"), message("b", "a", "y")])
      yield* store.installCheckpoint("s", checkpoint("cp", "b", 1, "a", "b"))
      const streamed = yield* Stream.runCollect(store.read("s"))
      const active = yield* store.activeView("s")
      const conflict = yield* Effect.flip(store.installCheckpoint("s", checkpoint("cp-late", "b", 1, "a", "b")))
      return { ids: streamed.map((entry) => entry.id), view: ids(active), conflict: conflict._tag }
    })
    for (const layer of [
      InMemoryTranscriptStore.layer,
      JsonlTranscriptStore.layer({ directory }),
      SqliteTranscriptStore.layer({ filename: join(directory, "store.db") })
    ]) {
      const result = await Effect.runPromise(program.pipe(Effect.provide(layer)))
      expect(result).toEqual({ ids: ["a", "b", "cp"], view: ["cp", "b"], conflict: "CheckpointConflict" })
    }
  })
})
