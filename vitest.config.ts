import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    projects: ["packages/*", "examples/*"],
    // Per-project options (timeouts, quiet when green) are in vitest.shared.ts: vitest does
    // not pass these down to projects.
    silent: "passed-only"
  }
})
