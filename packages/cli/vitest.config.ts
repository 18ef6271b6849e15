import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "cli", testTimeout: 60_000, hookTimeout: 60_000, include: ["test/**/*.test.ts"] }
})
