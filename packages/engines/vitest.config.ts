import { defineProject } from "vitest/config"

export default defineProject({
  // The root config's timeouts do not reach a project: the property and real-transcript tests need more
  // than vitest's 5 s default on a loaded 2-core machine.
  test: { name: "engines", include: ["test/**/*.test.ts"], testTimeout: 60_000 }
})
