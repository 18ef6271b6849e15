/**
 * Atomic compaction commit (issue #16 requirement 1): a compaction's edit,
 * memory entry and checkpoint are installed as one unit in every store (one
 * checksummed batch record in a JSONL file, one transaction in SQLite), with
 * compare-and-set on the checkpoint generation. A child process commits a
 * compaction and is SIGKILLed after each of its writes in turn; every time,
 * a fresh store sees exactly the view before the commit or exactly the view
 * after it, and a later append is visible (a cut-off record never hides
 * later entries).
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as InMemoryTranscriptStore from "../src/InMemoryTranscriptStore.ts"
import * as JsonlTranscriptStore from "../src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../src/SqliteTranscriptStore.ts"
import * as TranscriptLog from "../src/TranscriptLog.ts"
import type { AsyncTranscriptStore } from "../src/TranscriptStore.ts"
import { buildChild, killAll, spawnChild } from "./support/childProcess.ts"
import { compaction, conversation } from "./support/compactionFixture.ts"

const root = mkdtempSync(join(tmpdir(), "transcript-commit-"))
let script: string
beforeAll(async () => {
  script = await buildChild(root)
})
afterAll(() => {
  killAll()
  rmSync(root, { recursive: true, force: true })
})

interface Kind {
  readonly name: "memory" | "jsonl" | "sqlite"
  readonly location: string
  readonly open: () => AsyncTranscriptStore
}

const memoryRecords: InMemoryTranscriptStore.Records = new Map()
const kinds = (): ReadonlyArray<Kind> => [
  { name: "memory", location: "", open: () => InMemoryTranscriptStore.open(memoryRecords) },
  {
    name: "jsonl",
    location: join(root, "jsonl"),
    open: () => JsonlTranscriptStore.open({ directory: join(root, "jsonl") })
  },
  {
    name: "sqlite",
    location: join(root, "sqlite", "store.db"),
    open: () => SqliteTranscriptStore.open({ filename: join(root, "sqlite", "store.db") })
  }
]

const MESSAGES = 6
/** The comparable part of a view: its messages and the checkpoint it is built on. */
const snapshot = async (store: AsyncTranscriptStore, sessionId: string) => {
  const active = await store.activeView(sessionId)
  return JSON.stringify({ view: active.view, checkpoint: active.checkpoint?.id ?? null })
}

describe.each(kinds().map((kind) => [kind.name, kind] as const))("commitCompaction (%s)", (_name, kind) => {
  it("installs the edit, memory entry and checkpoint together and changes the view in one step", async () => {
    const store = kind.open()
    const messages = conversation(MESSAGES)
    await store.append("one-unit", messages)
    const batch = compaction(messages, 1)
    expect(await store.commitCompaction("one-unit", batch)).toEqual({ appended: 3, skipped: 0 })
    const active = await store.activeView("one-unit")
    expect(active.checkpoint?.id).toBe("c-checkpoint-1")
    expect(active.view.items.map((item) => item.message.content)).toContain("Memory: remember generation 1 ")
    expect(active.view.items.map((item) => item.message.content)).toContain("shortened ")
    // A retry of the acknowledged commit is a no-op.
    expect(await store.commitCompaction("one-unit", batch)).toEqual({ appended: 0, skipped: 3 })
    expect((await store.load("one-unit")).entries).toHaveLength(MESSAGES + 3)
    await store.close()
  })

  it("writes nothing of a commit that loses the generation compare-and-set", async () => {
    const store = kind.open()
    const messages = conversation(MESSAGES)
    await store.append("cas", messages)
    await store.commitCompaction("cas", compaction(messages, 1, "winner"))
    await expect(store.commitCompaction("cas", compaction(messages, 1, "loser"))).rejects.toMatchObject({
      _tag: "CheckpointConflict",
      attemptedGeneration: 1,
      installedGeneration: 1,
      winnerCheckpointId: "winner-checkpoint-1"
    })
    const ids = (await store.load("cas")).entries.map((entry) => entry.id)
    expect(ids.filter((id) => id.startsWith("loser"))).toEqual([])
    await store.close()
  })

  it("rejects two checkpoints in one commit and references to entries that are not stored", async () => {
    const store = kind.open()
    const messages = conversation(MESSAGES)
    await store.append("bad", messages)
    const [edit, memory, checkpoint] = compaction(messages, 1)
    const second = { ...checkpoint!, id: "second" } as typeof checkpoint
    await expect(store.commitCompaction("bad", [edit!, memory!, checkpoint!, second!])).rejects.toMatchObject({
      _tag: "InvalidInput",
      detail: "2 checkpoints; at most one per commit"
    })
    await expect(store.commitCompaction("bad", [memory!, checkpoint!])).rejects.toMatchObject({
      _tag: "InvalidInput",
      path: "[0].parentId"
    })
    expect((await store.load("bad")).entries).toHaveLength(MESSAGES)
    await store.close()
  })
})

describe("commitCompaction in a JSONL file", () => {
  const directory = join(root, "jsonl-frame")
  const open = () => JsonlTranscriptStore.open({ directory })

  it("is one checksummed batch record; a damaged one is skipped whole and reported", async () => {
    const store = open()
    const messages = conversation(MESSAGES)
    await store.append("framed", messages)
    await store.commitCompaction("framed", compaction(messages, 1))
    const path = JsonlTranscriptStore.sessionPath(directory, "framed")
    const lines = readFileSync(path, "utf8").trimEnd().split("\n")
    expect(lines).toHaveLength(MESSAGES + 1)
    const frame = JSON.parse(lines.at(-1)!) as { frame: string; count: number; entries: Array<{ id: string }> }
    expect(frame.frame).toBe(TranscriptLog.BATCH_FRAME)
    expect(frame.entries.map((entry) => entry.id)).toEqual(["c-edit-1", "c-memory-1", "c-checkpoint-1"])
    // Damage one character inside the batch: the checksum no longer matches.
    writeFileSync(path, `${lines.slice(0, -1).join("\n")}\n${lines.at(-1)!.replace("remember", "REMEMBER")}\n`)
    const loaded = await store.load("framed")
    expect(loaded.entries.map((entry) => entry.id)).toEqual(messages.map((entry) => entry.id))
    expect(loaded.issues).toMatchObject([{ kind: "invalid-batch", line: MESSAGES + 1 }])
    await expect(store.load("framed", { strict: true })).rejects.toMatchObject({ _tag: "TranscriptCorrupt" })
    expect((await store.activeView("framed")).checkpoint).toBeUndefined()
    await store.close()
  })

  it("a batch record cut off by a crash hides nothing written after it", async () => {
    const store = open()
    const messages = conversation(MESSAGES)
    await store.append("cut", messages)
    const before = await snapshot(store, "cut")
    const texts = compaction(messages, 1).map((entry) => TranscriptLog.encodeEntry(entry))
    const record = TranscriptLog.encodeBatch(texts)
    appendFileSync(JsonlTranscriptStore.sessionPath(directory, "cut"), record.slice(0, record.length / 2))
    expect(await snapshot(store, "cut")).toBe(before)
    const later = conversation(1, "later").map((entry) => ({ ...entry, parentId: messages.at(-1)!.id }))
    await store.append("cut", later)
    const ids = (await store.load("cut")).entries.map((entry) => entry.id)
    expect(ids).toEqual([...messages.map((entry) => entry.id), "later1"])
    // The commit's retry then succeeds whole.
    expect(await store.commitCompaction("cut", compaction(messages, 1))).toEqual({ appended: 3, skipped: 0 })
    expect((await store.activeView("cut")).checkpoint?.id).toBe("c-checkpoint-1")
    await store.close()
  })
})

describe.each(
  kinds()
    .filter((kind) => kind.name !== "memory")
    .map((kind) => [kind.name, kind] as const)
)("a compaction killed between any two of its writes (%s)", (_name, kind) => {
  it("leaves exactly the old view or exactly the new one, and later appends stay visible", async () => {
    const store = kind.open()
    const messages = conversation(MESSAGES)
    await store.append("reference", messages)
    const oldView = await snapshot(store, "reference")
    await store.commitCompaction("reference", compaction(messages, 1, "c", 1500))
    const newView = await snapshot(store, "reference")
    expect(newView).not.toBe(oldView)
    const outcomes: Array<"old" | "new"> = []
    for (let killAt = 1; killAt < 200; killAt++) {
      const sessionId = `kill-${killAt}`
      await store.append(sessionId, messages)
      const child = spawnChild(script, [kind.name, kind.location, sessionId, "commit-kill", String(killAt), "6"])
      const exited = await child.exited
      const finished = child.lines.includes("done")
      if (!finished) expect(exited.signal).toBe("SIGKILL")
      const fresh = kind.open()
      const view = await snapshot(fresh, sessionId)
      expect([oldView, newView]).toContain(view)
      outcomes.push(view === oldView ? "old" : "new")
      const later = conversation(1, "later").map((entry) => ({ ...entry, parentId: "m6" }))
      await fresh.append(sessionId, later)
      expect((await fresh.load(sessionId)).entries.map((entry) => entry.id)).toContain("later1")
      await fresh.close()
      if (finished) break
    }
    // Kills landed before the commit point (old view) and after it (new view), and the last run finished.
    expect(outcomes.filter((outcome) => outcome === "old").length).toBeGreaterThan(1)
    expect(outcomes.at(-1)).toBe("new")
    console.log(`${kind.name}: ${outcomes.length} kill points: ${outcomes.join(" ")}`)
    await store.close()
  }, 180_000)
})
