import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "engines", include: ["test/**/*.test.ts"] }
})
