import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "transcripts", include: ["test/**/*.test.ts"] }
})
