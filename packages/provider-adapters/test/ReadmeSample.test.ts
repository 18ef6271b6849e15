import { readFileSync } from "node:fs"
import { join } from "node:path"
import { repoRoot } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"

describe("README code sample", () => {
  it("is the type-checked file test/support/ReadmeSample.ts, verbatim", () => {
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    const block = /```ts\n([\s\S]*?)```/.exec(readme)?.[1]
    const sample = readFileSync(join(import.meta.dirname, "support/ReadmeSample.ts"), "utf8")
    expect(block).toBe(sample)
  })
})
