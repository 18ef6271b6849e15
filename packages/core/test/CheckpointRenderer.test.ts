import { describe, expect, it } from "vitest"
import * as Checkpoint from "../src/Checkpoint.ts"
import * as CheckpointRenderer from "../src/CheckpointRenderer.ts"

describe("CheckpointRenderer ledger", () => {
  it("renders modified files mixing absolute and relative paths (no common directory), each named in full", () => {
    const artifact = (value: string) => ({ kind: "file", value, status: "modified", entryIds: ["e1"] }) as const
    const content = {
      ...Checkpoint.emptyContent(),
      goal: "Fix the parser",
      artifacts: [artifact("/repo/src/a.ts"), artifact("src/b.ts"), artifact("/repo/src/c.ts")]
    } as Checkpoint.CheckpointContent
    const text = CheckpointRenderer.renderContent(content)
    for (const name of ["a.ts", "src/b.ts", "c.ts"]) expect(text).toContain(name)
  })
})
