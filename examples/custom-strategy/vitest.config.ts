import { defineProject } from "vitest/config"

export default defineProject({
  test: { name: "example-custom-strategy", include: ["test/**/*.test.ts"] }
})
