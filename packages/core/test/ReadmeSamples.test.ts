import { join } from "node:path"
import { describe, expect, it, vi } from "vitest"
import { readmeSamples } from "./support/shared.ts"

describe("packages/core/README.md", () => {
  it("holds the type-checked files test/support/ReadmeMeasure.ts and ReadmeJsonlStore.ts, verbatim", () => {
    const samples = readmeSamples("packages/core/README.md", [
      join(import.meta.dirname, "support/ReadmeMeasure.ts"),
      join(import.meta.dirname, "support/ReadmeJsonlStore.ts")
    ])
    for (const { block, file } of samples) expect(block).toBe(file)
  })

  it("its measurement example runs and logs the request's input tokens, headroom and categories", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    try {
      await import("./support/ReadmeMeasure.ts")
      const [inputTokens, headroomTokens, byCategory] = log.mock.calls[0] as [number, number, Record<string, number>]
      expect(inputTokens).toBeGreaterThan(10)
      expect(headroomTokens).toBeGreaterThan(100_000)
      expect(byCategory.system).toBeGreaterThan(0)
      expect(byCategory.userText).toBeGreaterThan(0)
    } finally {
      log.mockRestore()
    }
  })
})
