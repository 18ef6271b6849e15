/**
 * The PostgreSQL store on a real server (`DATABASE_URL`): the store contract
 * (idempotent appends, streaming reads, views, rollback, exact session ids),
 * versioned migrations, compare-and-set across independent pools, atomic
 * compaction commits, failures that never acknowledge (a connection
 * terminated by the server mid-commit) and full-text search.
 */
import type { Entry } from "@context-engine/core"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { compaction, conversation } from "../../core/test/support/compactionFixture.ts"
import * as PostgresMigrations from "../src/PostgresMigrations.ts"
import * as PostgresTranscriptStore from "../src/PostgresTranscriptStore.ts"
import { databaseUrl, requireDatabaseInCi, testSchema, unavailable } from "./support/database.ts"

requireDatabaseInCi()
const schema = testSchema("store")
const opened: Array<{ close: () => Promise<void> }> = []
const open = async (options: Partial<PostgresTranscriptStore.Options> = {}) => {
  const store = await PostgresTranscriptStore.open({ url: databaseUrl!, schema, ...options })
  opened.push(store)
  return store
}
afterAll(async () => {
  for (const store of opened) await store.close().catch(() => undefined)
})

describe.skipIf(databaseUrl === undefined)(`PostgresTranscriptStore${unavailable}`, () => {
  it("migrates once to a recorded version, also when processes start together", async () => {
    const stores = await Promise.all([open(), open(), open()])
    expect(stores).toHaveLength(3)
    const client = new pg.Client({ connectionString: databaseUrl! })
    await client.connect()
    const { rows } = await client.query(`SELECT version FROM "${schema}".context_engine_migrations ORDER BY version`)
    expect(rows.map((row) => row.version)).toEqual(PostgresMigrations.MIGRATIONS.map((migration) => migration.version))
    // A schema migrated by a newer build is refused, not written with an older layout.
    await client.query(`INSERT INTO "${schema}".context_engine_migrations (version, name) VALUES (999, 'future')`)
    await expect(open()).rejects.toThrow(/at migration 999; this build knows up to 1/)
    await client.query(`DELETE FROM "${schema}".context_engine_migrations WHERE version = 999`)
    await client.end()
  })

  it("appends idempotently, rejects a reused id with different content, and lists ids exactly", async () => {
    const store = await open()
    const messages = conversation(4)
    expect(await store.append("contract", messages)).toEqual({ appended: 4, skipped: 0 })
    expect(await store.append("contract", messages)).toEqual({ appended: 0, skipped: 4 })
    const changed = { ...messages[0]!, message: { role: "user", content: "other" } } as Entry.Entry
    await expect(store.append("contract", [changed])).rejects.toMatchObject({ _tag: "InvalidInput", path: "[0].id" })
    const ids = ["ü/é", "%41", "line\nbreak", "🎉", " "]
    for (const id of ids) await store.append(id, conversation(1))
    const listed = (await store.listSessions()).map((session) => session.sessionId)
    for (const id of [...ids, "contract"]) expect(listed).toContain(id)
    await expect(store.append("nul\u0000id", conversation(1))).rejects.toMatchObject({ _tag: "InvalidInput" })
  })

  it("streams a session longer than one page in order", async () => {
    const store = await open()
    const messages = conversation(PostgresTranscriptStore.PAGE_ROWS + 37)
    await store.append("long", messages)
    const seen: Array<string> = []
    for await (const entry of store.read("long")) seen.push(entry.id)
    expect(seen).toEqual(messages.map((entry) => entry.id))
  })

  it("commits a compaction as one unit; a stale writer in another pool gets CheckpointConflict", async () => {
    const [first, second] = await Promise.all([open(), open()])
    const messages = conversation(6)
    await first!.append("cas", messages)
    const results = await Promise.allSettled([
      first!.commitCompaction("cas", compaction(messages, 1, "a")),
      second!.commitCompaction("cas", compaction(messages, 1, "b"))
    ])
    const won = results.filter((result) => result.status === "fulfilled")
    const lost = results.filter((result) => result.status === "rejected")
    expect(won).toHaveLength(1)
    expect(lost).toHaveLength(1)
    expect((lost[0] as PromiseRejectedResult).reason).toMatchObject({
      _tag: "CheckpointConflict",
      attemptedGeneration: 1,
      installedGeneration: 1
    })
    const entries = (await first!.load("cas")).entries
    const checkpoints = entries.filter((entry) => entry.kind === "checkpoint")
    expect(checkpoints).toHaveLength(1)
    const winner = checkpoints[0]!.id.split("-")[0]!
    // All three entries of the winner, none of the loser.
    expect(entries.filter((entry) => entry.id.startsWith(`${winner}-`))).toHaveLength(3)
    expect(entries.filter((entry) => /^[ab]-/.test(entry.id) && !entry.id.startsWith(`${winner}-`))).toEqual([])
    const view = await second!.activeView("cas")
    expect(view.checkpoint?.id).toBe(`${winner}-checkpoint-1`)
    await second!.rollback("cas", `${winner}-checkpoint-1`)
    expect((await first!.activeView("cas")).checkpoint).toBeUndefined()
    expect((await first!.activeView("cas")).nextGeneration).toBe(2)
  })

  it("searches every stored entry by its words, identifiers included", async () => {
    const store = await open()
    const messages = conversation(3)
    const tool: Entry.Entry = {
      id: "tool-1",
      parentId: "m3",
      timestamp: "2026-01-01T00:00:00.000Z",
      schemaVersion: 1,
      kind: "message",
      message: { role: "user", content: "connect failed: ECONNREFUSED 127.0.0.1:5432 while reading src/db_pool.ts" }
    }
    await store.append("search", [...messages, tool])
    const hits = await store.search("search", "econnrefused")
    expect(hits.map((hit) => hit.entryId)).toEqual(["tool-1"])
    expect(hits[0]!.snippet).toContain("ECONNREFUSED")
    expect(hits[0]!.offset).toBe("connect failed: ".length)
    expect((await store.search("search", "db_pool nothing-like-this")).map((hit) => hit.entryId)).toEqual(["tool-1"])
    expect(await store.search("other-session", "econnrefused")).toEqual([])
    expect(await store.search("search", "  ")).toEqual([])
  })
})
