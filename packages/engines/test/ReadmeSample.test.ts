import { join } from "node:path"
import { readmeSamples } from "@context-engine/core/test-support"
import { describe, expect, it, vi } from "vitest"

describe("packages/engines/README.md", () => {
  it("holds the type-checked file test/support/ReadmeCompact.ts, verbatim", () => {
    const [sample] = readmeSamples("packages/engines/README.md", [
      join(import.meta.dirname, "support/ReadmeCompact.ts")
    ])
    expect(sample!.block).toBe(sample!.file)
  })

  it("its example compacts the 40-message session to fit the 16K window, offline", async () => {
    const log = vi.spyOn(console, "log").mockImplementation(() => {})
    try {
      await import("./support/ReadmeCompact.ts")
      const [before, arrow, after, , fits] = log.mock.calls[0] as [number, string, number, string, boolean]
      expect([arrow, fits]).toEqual(["→", true])
      expect(before).toBeGreaterThan(16_000)
      expect(after).toBeLessThan(16_000)
    } finally {
      log.mockRestore()
    }
  })
})
