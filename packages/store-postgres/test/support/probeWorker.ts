/**
 * One OS process of the multi-process store probe (`probe.ts`): runs
 * `iterations` jittered operations on one shared session and prints what it
 * did, one line each, for the parent to verify:
 *
 * - `ack <id>…` an acknowledged append (sometimes a tool call with its result);
 * - `commit <generation> <checkpointId> <editId> <memoryId>` an acknowledged
 *   compaction commit, `conflict <generation>` a lost compare-and-set;
 * - `rollback <checkpointId>` an acknowledged rollback;
 * - `violation <what>` an invariant broken in a view read on resume (a fresh
 *   store instance): an orphan tool result, a compaction visible in part, or
 *   an entry this process had acknowledged missing;
 * - `error <message>` an unexpected failure; `done` at the end.
 *
 * Run as `node probeWorker.ts <sqlite|postgres> <location> <sessionId> <name> <seed> <iterations>`;
 * for postgres `location` is `<url>#<schema>`.
 */
import type { Entry, TranscriptStore } from "@context-engine/core"
// The module itself, not the `core/node` index: a bundle of this worker must not pull in tiktoken.
import * as SqliteTranscriptStore from "../../../core/src/SqliteTranscriptStore.ts"
import * as PostgresTranscriptStore from "../../src/PostgresTranscriptStore.ts"

const [kind, location, sessionId, name, seedText, iterationsText] = process.argv.slice(2)
if (!kind || !location || !sessionId || !name || !seedText || !iterationsText) throw new Error("usage: see header")

let seed = (Number(seedText) * 2654435761) >>> 0 || 1
const random = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0
  return seed / 2 ** 32
}
const say = (line: string) => process.stdout.write(`${line}\n`)
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))
const timestamp = "2026-01-01T00:00:00.000Z"

const open = async (): Promise<TranscriptStore.AsyncTranscriptStore> => {
  if (kind === "sqlite") return SqliteTranscriptStore.open({ filename: location })
  const [url, schema] = location.split("#")
  return PostgresTranscriptStore.open({ url: url!, schema: schema!, maxConnections: 2 })
}

let counter = 0
const nextId = (label: string) => `${name}-${label}-${++counter}`
const acknowledged: Array<string> = []
let last = "root"

const header = (id: string, parentId: string) => ({ id, parentId, timestamp, schemaVersion: 1 as const })

const appendSome = async (store: TranscriptStore.AsyncTranscriptStore) => {
  const entries: Array<Entry.Entry> = []
  if (random() < 0.4) {
    const call = nextId("call")
    const result = nextId("result")
    const toolCallId = `${call}-tc`
    entries.push({
      ...header(call, last),
      kind: "message",
      message: {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId, toolName: "read", input: { n: counter } }]
      }
    })
    entries.push({
      ...header(result, call),
      kind: "message",
      message: {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId, toolName: "read", output: { type: "text", value: `out ${counter}` } }
        ]
      }
    })
  } else {
    const id = nextId("user")
    entries.push({ ...header(id, last), kind: "message", message: { role: "user", content: `ask ${id}` } })
  }
  await store.append(sessionId, entries)
  acknowledged.push(...entries.map((entry) => entry.id))
  last = entries.at(-1)!.id
  say(`ack ${entries.map((entry) => entry.id).join(" ")}`)
}

/** A compaction cut at the newest user text message (never between a tool call and its result). */
const compact = async (store: TranscriptStore.AsyncTranscriptStore) => {
  const { entries } = await store.load(sessionId)
  const view = await store.activeView(sessionId)
  const cut = entries.findLastIndex((entry) => entry.kind === "message" && entry.message.role === "user")
  if (cut < 1) return
  const generation = view.nextGeneration
  const [editId, memoryId, checkpointId] = [nextId("edit"), nextId("memory"), nextId("checkpoint")]
  const tail = entries.at(-1)!.id
  const batch: Array<Entry.Entry> = [
    {
      ...header(editId, tail),
      kind: "edit",
      edit: { op: "drop", entryId: entries[cut - 1]!.id, strategy: "probe", reason: "probe" }
    } as Entry.Entry,
    { ...header(memoryId, editId), kind: "memory", memory: { text: `memory of ${name}`, sourceEntryIds: [tail] } },
    {
      ...header(checkpointId, memoryId),
      kind: "checkpoint",
      checkpoint: {
        id: checkpointId,
        generation,
        coveredRange: { fromEntryId: null, toEntryId: entries[cut - 1]!.id },
        firstKeptEntryId: entries[cut]!.id,
        tokensBefore: 1000,
        tokensAfter: 100,
        summarizer: { kind: "extractive", promptVersion: "probe" },
        text: `summary by ${name} at generation ${generation}`,
        createdAt: timestamp
      }
    }
  ]
  try {
    await store.commitCompaction(sessionId, batch)
    say(`commit ${generation} ${checkpointId} ${editId} ${memoryId}`)
  } catch (error) {
    if ((error as { _tag?: string })._tag !== "CheckpointConflict") throw error
    say(`conflict ${generation}`)
  }
}

const rollback = async (store: TranscriptStore.AsyncTranscriptStore) => {
  const view = await store.activeView(sessionId)
  if (view.checkpoint === undefined) return
  await store.rollback(sessionId, view.checkpoint.id)
  say(`rollback ${view.checkpoint.id}`)
}

/** Reads the session from a fresh store instance and checks what a resuming process relies on. */
const resume = async () => {
  const fresh = await open()
  try {
    const { entries } = await fresh.load(sessionId)
    const view = await fresh.activeView(sessionId)
    const ids = new Set(entries.map((entry) => entry.id))
    for (const id of acknowledged) if (!ids.has(id)) say(`violation acknowledged entry ${id} missing on resume`)
    for (const entry of entries) {
      if (entry.kind !== "checkpoint" || !entry.id.includes("-checkpoint-")) continue
      const mates = [entry.parentId!, entries.find((other) => other.id === entry.parentId)?.parentId ?? "?"]
      for (const mate of mates) if (!ids.has(mate)) say(`violation compaction ${entry.id} visible without ${mate}`)
    }
    const calls = new Set<string>()
    for (const item of view.view.items) {
      const content = item.message.content
      if (typeof content === "string") continue
      for (const part of content as ReadonlyArray<{ type: string; toolCallId?: string }>) {
        if (part.type === "tool-call") calls.add(part.toolCallId!)
        if (part.type === "tool-result" && !calls.has(part.toolCallId!)) {
          say(`violation orphan tool result ${part.toolCallId} in the view`)
        }
      }
    }
    if (entries.length > 0) last = entries.at(-1)!.id
  } finally {
    await fresh.close()
  }
}

const store = await open()
for (let iteration = 0; iteration < Number(iterationsText); iteration++) {
  await sleep(Math.floor(random() * 4))
  const roll = random()
  try {
    if (roll < 0.5) await appendSome(store)
    else if (roll < 0.7) await compact(store)
    else if (roll < 0.8) await rollback(store)
    else await resume()
  } catch (error) {
    say(`error ${error instanceof Error ? error.message.split("\n")[0] : String(error)}`)
  }
}
await store.close()
say("done")
