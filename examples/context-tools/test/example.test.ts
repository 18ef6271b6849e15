import { type Entry, TranscriptSearch } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Run from "../src/Run.ts"
import * as Workspace from "../src/Workspace.ts"

describe("context-tools example", () => {
  it("rewinds finished tasks, answers the detail with search + restore, and sends fewer tokens than the tiered engine alone", async () => {
    const tools = await Run.run("tools")
    const tiered = await Run.run("tiered")
    expect(tools.answers.at(-1)).toBe(Workspace.expectedDetail)
    expect(tiered.answers.at(-1)).toBe(Workspace.expectedDetail)

    const actions = tools.steps.map((step) => step.action.split(" ")[0])
    expect(actions.filter((action) => action === "context_rewind")).toHaveLength(3)
    const last = tools.steps.filter((step) => step.task === 3).map((step) => step.action.split(" ")[0])
    expect(last).toEqual(["context_rewind", "context_search", "context_restore", "answer:"])
    // The tiered run has to re-read the file for the detail; the tools run never re-reads.
    expect(tiered.steps.filter((step) => step.task === 3).map((step) => step.action.split(" ")[0])).toContain(
      "read_file"
    )
    expect(tools.steps.filter((step) => step.action.startsWith("read_file"))).toHaveLength(3)
    expect(tools.totalInputTokens).toBeLessThan(tiered.totalInputTokens)

    // Nothing is lost: every file the tools run read is in its transcript, byte for byte.
    const results = tools.transcript.filter(
      (entry): entry is Entry.MessageEntry => entry.kind === "message" && entry.message.role === "tool"
    )
    for (const [path, text] of Workspace.files)
      expect(
        results.some((entry) => TranscriptSearch.entryText(entry) === text),
        path
      ).toBe(true)
    expect(
      tools.transcript.filter((entry) => entry.kind === "edit" && entry.edit.strategy === "context_rewind").length
    ).toBeGreaterThan(3)
  }, 120_000)
})
