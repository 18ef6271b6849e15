import { defineProject } from "vitest/config"
import { sharedTest } from "../../vitest.shared.ts"

export default defineProject({
  test: { ...sharedTest, name: "store-postgres", include: ["test/**/*.test.ts"] }
})
