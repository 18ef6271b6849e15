/**
 * The multi-process probe at a small count (2 processes × 25 iterations × 1
 * seed per store); the full probe (2 × 250 × 3) is
 * `node packages/store-postgres/test/support/probe.ts` (README, "Store tests").
 * Two OS processes append, commit compactions, roll back and resume on one
 * session; zero violations and zero unexpected errors are expected, and the
 * run must have exercised every operation.
 */
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { buildChild } from "../../core/test/support/childProcess.ts"
import { databaseUrl, requireDatabaseInCi, unavailable } from "./support/database.ts"
import { runProbe, worker } from "./support/probe.ts"

requireDatabaseInCi()
const directory = mkdtempSync(join(tmpdir(), "probe-test-"))
let workerScript = worker
beforeAll(async () => {
  workerScript = await buildChild(directory, worker)
})
afterAll(() => rmSync(directory, { recursive: true, force: true }))

const check = async (kind: "sqlite" | "postgres") => {
  const result = await runProbe({
    kind,
    processes: 2,
    iterations: 25,
    seed: 7,
    workerScript,
    ...(databaseUrl ? { databaseUrl } : {})
  })
  expect(result.errors).toEqual([])
  expect(result.violations).toEqual([])
  expect(result.acknowledgedEntries).toBeGreaterThan(10)
  expect(result.commits).toBeGreaterThan(0)
}

describe("multi-process probe, small count", () => {
  it("sqlite: two processes on one session, no violation", () => check("sqlite"), 300_000)
})

describe.skipIf(databaseUrl === undefined)(`multi-process probe, small count${unavailable}`, () => {
  it("postgres: two processes on one session, no violation", () => check("postgres"), 300_000)
})
