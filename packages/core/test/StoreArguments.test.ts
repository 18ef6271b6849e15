/**
 * #12 req 5: store arguments are validated with `InvalidInput` naming the
 * path, in the in-memory, JSONL and SQLite stores (the PostgreSQL store runs
 * the same contract in its package).
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, it } from "vitest"
import * as InMemoryTranscriptStore from "../src/InMemoryTranscriptStore.ts"
import * as JsonlTranscriptStore from "../src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../src/SqliteTranscriptStore.ts"
import { checkStoreArguments } from "./support/storeArguments.ts"

const directory = mkdtempSync(join(tmpdir(), "store-arguments-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describe("store arguments", () => {
  it("memory: typed InvalidInput with the path, nothing written", async () => {
    await checkStoreArguments(InMemoryTranscriptStore.open(), "s")
  })
  it("jsonl: typed InvalidInput with the path, nothing written", async () => {
    const store = JsonlTranscriptStore.open({ directory: join(directory, "jsonl") })
    await checkStoreArguments(store, "s")
    await store.close()
  })
  it("sqlite: typed InvalidInput with the path, nothing written", async () => {
    const store = SqliteTranscriptStore.open({ filename: join(directory, "store.db") })
    await checkStoreArguments(store, "s")
    await store.close()
  })
})
