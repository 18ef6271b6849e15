import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-context-tools", include: ["test/**/*.test.ts"] }
})
