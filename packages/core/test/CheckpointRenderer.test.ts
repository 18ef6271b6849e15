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

describe("CheckpointRenderer identifiersShown", () => {
  const content = {
    ...Checkpoint.emptyContent(),
    goal: "Fix src/quoted.ts",
    identifiers: {
      ...Checkpoint.emptyContent().identifiers,
      paths: ["src/quoted.ts", "src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"],
      hashes: ["abc1234"]
    }
  } as Checkpoint.CheckpointContent

  it("shows the first identifiers of a line and counts the rest after it, outside the code spans", () => {
    const text = CheckpointRenderer.renderContent(content, { identifiersShown: 2 })
    // src/quoted.ts is quoted by the Goal: neither listed nor counted.
    expect(text).toContain("- Paths: `src/a.ts`, `src/b.ts`, … 2 more")
    expect(text).toMatch(/^- Hashes: `abc1234`$/m)
  })

  it("shows every identifier by default", () => {
    expect(CheckpointRenderer.renderContent(content)).toContain(
      "- Paths: `src/a.ts`, `src/b.ts`, `src/c.ts`, `src/d.ts`"
    )
  })
})
