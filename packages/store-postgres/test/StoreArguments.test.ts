/**
 * #12 req 5 on PostgreSQL: the store-argument contract of core's stores
 * (`InvalidInput` naming the path, nothing written).
 */
import { describe, it } from "vitest"
import { checkStoreArguments } from "../../core/test/support/storeArguments.ts"
import * as PostgresTranscriptStore from "../src/PostgresTranscriptStore.ts"
import { databaseUrl, requireDatabaseInCi, testSchema, unavailable } from "./support/database.ts"

const schema = testSchema("arguments")

describe.skipIf(databaseUrl === undefined)(`PostgresTranscriptStore arguments${unavailable}`, () => {
  it("postgres: typed InvalidInput with the path, nothing written", async () => {
    const store = await PostgresTranscriptStore.open({ url: databaseUrl!, schema })
    try {
      await checkStoreArguments(store, "s")
    } finally {
      await store.close()
    }
  })
})

describe("PostgreSQL availability", () => requireDatabaseInCi())
