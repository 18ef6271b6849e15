import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "transcripts", testTimeout: 60_000, hookTimeout: 60_000, include: ["test/**/*.test.ts"] }
})
