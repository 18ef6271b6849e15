import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-ai-sdk-agent", include: ["test/**/*.test.ts"] }
})
