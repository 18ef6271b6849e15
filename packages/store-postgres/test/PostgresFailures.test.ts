/**
 * Failures never acknowledge, on PostgreSQL (issue #16 requirement 4): the
 * server terminates the store's connection in the middle of a commit
 * (`pg_terminate_backend` from a trigger on the entries table, fired once);
 * the commit fails with `TranscriptStoreFailed`, nothing of it is stored, the
 * store does not remember it as stored, and the retry — on a new connection —
 * writes it.
 */
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { compaction, conversation } from "../../core/test/support/compactionFixture.ts"
import * as PostgresTranscriptStore from "../src/PostgresTranscriptStore.ts"
import { databaseUrl, requireDatabaseInCi, testSchema, unavailable } from "./support/database.ts"

requireDatabaseInCi()
const schema = testSchema("failures")
const cleanups: Array<() => Promise<void>> = []
afterAll(async () => {
  for (const cleanup of cleanups) await cleanup().catch(() => undefined)
})

const TERMINATE = "PERFORM pg_terminate_backend(pg_backend_pid()); PERFORM pg_sleep(5);"
const VIOLATE = "RAISE EXCEPTION 'injected constraint violation' USING ERRCODE = 'check_violation';"

/**
 * Arms a trigger that fires once, on the next insert into `sessionId` only:
 * by default it terminates the inserting connection; `VIOLATE` fails the
 * insert with a constraint violation instead.
 */
const armConnectionKill = async (sessionId: string, action = TERMINATE) => {
  const sql = new pg.Client({ connectionString: databaseUrl! })
  await sql.connect()
  cleanups.push(() => sql.end())
  const sequence = `kill_once_${Math.floor(Math.random() * 1e9)}`
  await sql.query(`SET search_path TO ${schema}`)
  await sql.query(`CREATE SEQUENCE ${sequence}`)
  await sql.query(`CREATE OR REPLACE FUNCTION ${sequence}_fire() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      -- nextval is not rolled back with the aborted transaction: the kill fires once.
      IF NEW.session_id = '${sessionId}' AND nextval('${schema}.${sequence}') = 1 THEN
        ${action}
      END IF;
      RETURN NEW;
    END $$`)
  await sql.query(`CREATE TRIGGER ${sequence} BEFORE INSERT ON transcript_entries
    FOR EACH ROW EXECUTE FUNCTION ${sequence}_fire()`)
}

describe.skipIf(databaseUrl === undefined)(`PostgresTranscriptStore failures${unavailable}`, () => {
  it("an append whose connection is killed mid-commit is not acknowledged, and the retry writes", async () => {
    const store = await PostgresTranscriptStore.open({ url: databaseUrl!, schema })
    cleanups.push(store.close)
    const messages = conversation(4)
    await store.append("killed-append", messages.slice(0, 2))
    await armConnectionKill("killed-append")
    await expect(store.append("killed-append", messages.slice(2))).rejects.toMatchObject({
      _tag: "TranscriptStoreFailed",
      reason: expect.stringMatching(/terminat/i)
    })
    expect((await store.load("killed-append")).entries).toHaveLength(2)
    expect(await store.append("killed-append", messages.slice(2))).toEqual({ appended: 2, skipped: 0 })
    const fresh = await PostgresTranscriptStore.open({ url: databaseUrl!, schema })
    cleanups.push(fresh.close)
    expect((await fresh.load("killed-append")).entries.map((entry) => entry.id)).toEqual(["m1", "m2", "m3", "m4"])
  })

  it("a compaction whose connection is killed mid-commit leaves the old view, and the retry installs it", async () => {
    const store = await PostgresTranscriptStore.open({ url: databaseUrl!, schema })
    cleanups.push(store.close)
    const messages = conversation(6)
    await store.append("killed-compaction", messages)
    const before = await store.activeView("killed-compaction")
    await armConnectionKill("killed-compaction")
    const batch = compaction(messages, 1)
    await expect(store.commitCompaction("killed-compaction", batch)).rejects.toMatchObject({
      _tag: "TranscriptStoreFailed"
    })
    const after = await store.activeView("killed-compaction")
    expect(after.view).toEqual(before.view)
    expect(after.checkpoint).toBeUndefined()
    expect(await store.commitCompaction("killed-compaction", batch)).toEqual({ appended: 3, skipped: 0 })
    expect((await store.activeView("killed-compaction")).checkpoint?.id).toBe("c-checkpoint-1")
  })

  it("an append failing a constraint is not acknowledged, and the retry writes", async () => {
    const store = await PostgresTranscriptStore.open({ url: databaseUrl!, schema })
    cleanups.push(store.close)
    const messages = conversation(3)
    await store.append("violated", messages.slice(0, 1))
    await armConnectionKill("violated", VIOLATE)
    await expect(store.append("violated", messages.slice(1))).rejects.toMatchObject({
      _tag: "TranscriptStoreFailed",
      reason: expect.stringMatching(/injected constraint violation/)
    })
    expect((await store.load("violated")).entries).toHaveLength(1)
    expect(await store.append("violated", messages.slice(1))).toEqual({ appended: 2, skipped: 0 })
  })
})
