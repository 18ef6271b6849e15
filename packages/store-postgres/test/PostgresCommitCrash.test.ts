/**
 * Atomic compaction commit on PostgreSQL under SIGKILL (issue #16
 * requirement 1): a child process commits a compaction and is killed before
 * each statement of the commit in turn; every time, the session shows
 * exactly the view before or exactly the view after, and an append made
 * afterwards is visible.
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import type { TranscriptStore } from "@context-engine/core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildChild } from "../../core/test/support/childProcess.ts"
import { compaction, conversation } from "../../core/test/support/compactionFixture.ts"
import * as PostgresTranscriptStore from "../src/PostgresTranscriptStore.ts"
import { databaseUrl, requireDatabaseInCi, testSchema, unavailable } from "./support/database.ts"

requireDatabaseInCi()
const schema = testSchema("crash")
const source = join(dirname(fileURLToPath(import.meta.url)), "support", "commitKillChild.ts")
const directory = mkdtempSync(join(tmpdir(), "postgres-crash-"))
let child = source
const stores: Array<TranscriptStore.AsyncTranscriptStore> = []
// Bundled once, the child starts in a fraction of the time `effect` takes to load from source.
beforeAll(async () => {
  child = await buildChild(directory, source)
})
afterAll(async () => {
  for (const store of stores) await store.close().catch(() => undefined)
  rmSync(directory, { recursive: true, force: true })
})

const run = (args: ReadonlyArray<string>) =>
  new Promise<{ lines: Array<string>; signal: NodeJS.Signals | null }>((resolve) => {
    const process_ = spawn(process.execPath, [child, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    process_.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    process_.on("close", (_code, signal) => resolve({ lines: stdout.split("\n"), signal }))
  })

const snapshot = async (store: TranscriptStore.AsyncTranscriptStore, sessionId: string) => {
  const active = await store.activeView(sessionId)
  return JSON.stringify({ view: active.view, checkpoint: active.checkpoint?.id ?? null })
}

describe.skipIf(databaseUrl === undefined)(
  `a compaction killed between its statements (postgres)${unavailable}`,
  () => {
    it("leaves exactly the old view or exactly the new one, and later appends stay visible", async () => {
      const store = await PostgresTranscriptStore.open({ url: databaseUrl!, schema })
      stores.push(store)
      const messages = conversation(6)
      await store.append("reference", messages)
      const oldView = await snapshot(store, "reference")
      await store.commitCompaction("reference", compaction(messages, 1, "c", 1500))
      const newView = await snapshot(store, "reference")
      const outcomes: Array<"old" | "new"> = []
      for (let killAt = 1; killAt < 40; killAt++) {
        const sessionId = `kill-${killAt}`
        await store.append(sessionId, messages)
        const { lines, signal } = await run([databaseUrl!, schema, sessionId, String(killAt), "6"])
        const finished = lines.includes("done")
        if (!finished) expect(signal).toBe("SIGKILL")
        const view = await snapshot(store, sessionId)
        expect([oldView, newView]).toContain(view)
        outcomes.push(view === oldView ? "old" : "new")
        // The dead writer's transaction is rolled back by the server; the next writer gets the row lock.
        const later = conversation(1, "later").map((entry) => ({ ...entry, parentId: "m6" }))
        await store.append(sessionId, later)
        expect((await store.load(sessionId)).entries.map((entry) => entry.id)).toContain("later1")
        if (finished) break
      }
      expect(outcomes.filter((outcome) => outcome === "old").length).toBeGreaterThan(3)
      expect(outcomes.at(-1)).toBe("new")
      console.log(`postgres: ${outcomes.length} kill points: ${outcomes.join(" ")}`)
    }, 300_000)
  }
)
