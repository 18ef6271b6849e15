import { join } from "node:path"
import { readmeSamples } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"

// Type-checked, not run: it writes to the `context_engine` schema of whatever DATABASE_URL names.
describe("packages/store-postgres/README.md", () => {
  it("holds the type-checked file test/support/ReadmePostgres.ts, verbatim", () => {
    const [sample] = readmeSamples("packages/store-postgres/README.md", [
      join(import.meta.dirname, "support/ReadmePostgres.ts")
    ])
    expect(sample!.block).toBe(sample!.file)
  })
})
