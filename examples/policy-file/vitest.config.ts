import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-policy-file", include: ["test/**/*.test.ts"] }
})
