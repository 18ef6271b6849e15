import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "provider-adapters", include: ["test/**/*.test.ts"] }
})
