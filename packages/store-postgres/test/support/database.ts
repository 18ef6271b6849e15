/**
 * The PostgreSQL server the store tests run against: `DATABASE_URL`
 * (`.ci/run` starts a throwaway cluster and exports it; locally run
 * `.ci/postgres.sh start <dir>` and export the URL it prints). Each test file
 * works in its own schema, dropped afterwards.
 *
 * Without `DATABASE_URL` the tests are skipped with the reason in their name
 * — outside CI only: under `CI=true` the guard test fails, so a CI run can
 * never pass without having run them.
 */

import { afterAll, expect, it } from "vitest"
import * as PostgresTranscriptStore from "../../src/PostgresTranscriptStore.ts"

export const databaseUrl: string | undefined = process.env.DATABASE_URL || undefined

/** The suffix of every Postgres describe block: says why it is skipped when it is. */
export const unavailable = databaseUrl === undefined ? " (skipped: DATABASE_URL is not set; see README)" : ""

/** Registers the test that fails a CI run without a database. */
export const requireDatabaseInCi = (): void => {
  it("runs against a real PostgreSQL server under CI (DATABASE_URL set)", () => {
    if (process.env.CI === "true") {
      expect(databaseUrl, "CI must export DATABASE_URL (.ci/run starts PostgreSQL)").toBeDefined()
    } else if (databaseUrl === undefined) {
      console.log("PostgreSQL store tests skipped: DATABASE_URL is not set (see README, 'Store tests')")
    }
  })
}

/** A fresh schema name for one test file, dropped with everything in it after the file's tests. */
export const testSchema = (name: string): string => {
  const schema = `ce_test_${name}_${process.pid}_${Math.floor(Math.random() * 1e6)}`
  afterAll(async () => {
    if (databaseUrl === undefined) return
    await PostgresTranscriptStore.dropSchema(databaseUrl, schema)
  })
  return schema
}
