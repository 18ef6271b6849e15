import { defineProject } from "vitest/config"
import { sharedTest } from "../../vitest.shared.ts"

export default defineProject({
  test: { ...sharedTest, name: "example-ai-sdk-agent", include: ["test/**/*.test.ts"] }
})
