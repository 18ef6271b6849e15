import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*"],
    // Quiet when green: console output is shown only for failing tests. Tests that expect
    // warnings capture and assert them (e.g. TranscriptStoreCrash.test.ts).
    silent: "passed-only",
    testTimeout: 60_000,
    hookTimeout: 60_000
  }
})
