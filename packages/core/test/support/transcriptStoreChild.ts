/**
 * Child process for the transcript store crash and race tests. Run as
 * `node transcriptStoreChild.ts <jsonl|sqlite> <location> <sessionId> <mode> [name] [seed]`.
 *
 * - `crash`: appends message batches (some large, so a SIGKILL can land
 *   inside a write) and installs a checkpoint every few appends, forever.
 *   Prints `ack <id>…` after each acknowledged append, `begin-cp <gen> <id>`
 *   before and `ack-cp <gen> <id>` after each checkpoint install.
 * - `race`: reads commands from stdin: `install <generation>` installs a
 *   checkpoint `cp-<generation>-<name>` and prints `installed <id>` or
 *   `conflict <winnerCheckpointId>`.
 *
 * - `commit-kill`: commits the compaction of `compactionFixture.ts` onto the
 *   session (prepared by the parent) and SIGKILLs itself right after its
 *   `name`-th write (file write/datasync/truncate, SQLite statement or
 *   `exec`); big file writes are cut into 512-byte pieces so a kill lands
 *   inside the batch record. Prints `writes <n>` and `done` when it finished
 *   before the `name`-th write.
 *
 * Every line is in the stdout pipe before the child goes on (`say`), so the
 * parent, which reads the pipe to its end after the kill, sees every line the
 * child printed: an `ack` after the append was acknowledged, a `begin-cp`
 * before the install began. (`process.stdout.write` queues a line inside the
 * process when the pipe is full, and a SIGKILL drops the queue: on a loaded
 * machine the parent then missed checkpoints the child had installed.)
 */
import { writeSync } from "node:fs"
import { open } from "node:fs/promises"
import { createRequire } from "node:module"
import { createInterface } from "node:readline"
import type * as NodeSqlite from "node:sqlite"
import type { CheckpointEntry, MessageEntry } from "../../src/Entry.ts"
import * as JsonlTranscriptStore from "../../src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../../src/SqliteTranscriptStore.ts"
import type { AsyncTranscriptStore } from "../../src/TranscriptStore.ts"
import { compaction, conversation } from "./compactionFixture.ts"

const [kind, location, sessionId, mode, name = "child", seedText = "1"] = process.argv.slice(2)
if (!kind || !location || !sessionId || !mode) throw new Error("usage: <kind> <location> <sessionId> <mode>")

let seed = Number(seedText) >>> 0 || 1
const random = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 2 ** 32
}

const store: AsyncTranscriptStore =
  kind === "jsonl"
    ? JsonlTranscriptStore.open({ directory: location })
    : SqliteTranscriptStore.open({ filename: location })

const pause = new Int32Array(new SharedArrayBuffer(4))
/** Writes `line` to stdout with blocking writes, waiting 1 ms while the pipe is full (the parent reads it). */
const say = (line: string) => {
  const bytes = Buffer.from(`${line}\n`)
  let written = 0
  while (written < bytes.length) {
    try {
      written += writeSync(1, bytes, written)
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EAGAIN") throw error
      Atomics.wait(pause, 0, 0, 1)
    }
  }
}
const timestamp = "2026-01-01T00:00:00.000Z"

const message = (id: string, parentId: string | null, text: string): MessageEntry => ({
  id,
  parentId,
  timestamp,
  schemaVersion: 1,
  kind: "message",
  message: { role: random() < 0.5 ? "user" : "assistant", content: text }
})

export const checkpoint = (
  id: string,
  parentId: string,
  generation: number,
  toEntryId: string,
  firstKeptEntryId: string | null
): CheckpointEntry => ({
  id,
  parentId,
  timestamp,
  schemaVersion: 1,
  kind: "checkpoint",
  checkpoint: {
    id,
    generation,
    coveredRange: { fromEntryId: null, toEntryId },
    firstKeptEntryId,
    tokensBefore: 1000,
    tokensAfter: 100,
    summarizer: { kind: "extractive", promptVersion: "test" },
    text: `summary of everything through ${toEntryId}`,
    createdAt: timestamp
  }
})

const crash = async () => {
  const loaded = await store.load(sessionId)
  const view = await store.activeView(sessionId)
  let last = loaded.entries.at(-1)?.id ?? null
  let counter = loaded.entries.length
  let generation = view.nextGeneration
  const unique = `${process.pid}-${Date.now().toString(36)}`
  say("ready")
  for (;;) {
    if (last !== null && random() < 0.25) {
      const id = `cp-${generation}-${unique}`
      say(`begin-cp ${generation} ${id}`)
      await store.installCheckpoint(sessionId, checkpoint(id, last, generation, last, last))
      say(`ack-cp ${generation} ${id}`)
      generation++
      last = id
      continue
    }
    const batch: Array<MessageEntry> = []
    const size = 1 + Math.floor(random() * 3)
    for (let index = 0; index < size; index++) {
      const id = `m-${++counter}-${unique}`
      const roll = random()
      // Mostly small messages, some large tool outputs, rarely a huge one (a kill can land inside its write).
      const length =
        kind === "jsonl" && roll < 0.03
          ? 1_000_000
          : roll < (kind === "jsonl" ? 0.25 : 0.1)
            ? 16_000 + Math.floor(random() * 48_000)
            : 10 + Math.floor(random() * 500)
      batch.push(message(id, last, `${id} ${"x".repeat(length)}`))
      last = id
    }
    await store.append(sessionId, batch)
    say(`ack ${batch.map((entry) => entry.id).join(" ")}`)
  }
}

const race = async () => {
  say("ready")
  for await (const line of createInterface({ input: process.stdin })) {
    const [command, argument] = line.split(" ")
    if (command !== "install") continue
    const generation = Number(argument)
    const loaded = await store.load(sessionId)
    const last = loaded.entries.at(-1)!.id
    const id = `cp-${generation}-${name}`
    try {
      await store.installCheckpoint(sessionId, checkpoint(id, last, generation, last, last))
      say(`installed ${id}`)
    } catch (error) {
      const tagged = error as { _tag?: string; winnerCheckpointId?: string; message?: string }
      say(tagged._tag === "CheckpointConflict" ? `conflict ${tagged.winnerCheckpointId}` : `error ${tagged.message}`)
    }
  }
  await store.close()
}

/** Wraps `target[method]` so that every call counts as one write; the `killAt`-th one SIGKILLs the process after it. */
const countWrites = (target: object, methods: ReadonlyArray<string>, tick: () => void, chunkBytes?: number) => {
  for (const method of methods) {
    const original = (target as Record<string, (...args: Array<unknown>) => unknown>)[method]!
    ;(target as Record<string, unknown>)[method] = function (this: unknown, ...args: Array<unknown>) {
      if (chunkBytes !== undefined && method === "write" && Buffer.isBuffer(args[0])) {
        // A short write is legal; the store loops until every byte is written.
        args[2] = Math.min(Number(args[2] ?? (args[0] as Buffer).length), chunkBytes)
      }
      const result = original.apply(this, args)
      if (result instanceof Promise) {
        return result.then((value) => {
          tick()
          return value
        })
      }
      tick()
      return result
    }
  }
}

const commitKill = async () => {
  const killAt = Number(name)
  let writes = 0
  let armed = false
  const tick = () => {
    if (!armed) return
    writes++
    if (writes === killAt) process.kill(process.pid, "SIGKILL")
  }
  if (kind === "jsonl") {
    const probe = await open(`${location}/.probe-${process.pid}`, "w")
    countWrites(Object.getPrototypeOf(probe), ["write", "datasync", "truncate"], tick, 512)
    await probe.close()
  } else {
    const sqlite = createRequire(import.meta.url)("node:sqlite") as typeof NodeSqlite
    countWrites(sqlite.StatementSync.prototype, ["run"], tick)
    countWrites(sqlite.DatabaseSync.prototype, ["exec"], tick)
  }
  await store.load(sessionId)
  armed = true
  await store.commitCompaction(sessionId, compaction(conversation(Number(seedText)), 1, "c", 1500))
  armed = false
  say(`writes ${writes}`)
  say("done")
  await store.close()
}

if (mode === "commit-kill") await commitKill()
else if (mode === "crash") {
  // Never outlive the test: the parent holds our stdin open until it is gone.
  process.stdin.on("end", () => process.exit(1))
  process.stdin.resume()
}
if (mode === "crash" || mode === "race") await (mode === "crash" ? crash() : race())
