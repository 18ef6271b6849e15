import { type Checkpoint, CheckpointRenderer, CheckpointValidation, IdentifierExtraction } from "@context-engine/core"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { assistant, calls, checkpointOf, conversation, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)

const session = withIds([
  user("Fix the failing test in src/parser.ts. Don't touch the public API."),
  calls({ id: "c1", name: "read", input: { path: "src/parser.ts" } }),
  results({ id: "c1", name: "read", text: "export const parse = () => {}" }),
  calls({ id: "c2", name: "bash", input: { command: "pnpm vitest run test/parser.test.ts" } }),
  results({
    id: "c2",
    name: "bash",
    text: "FAIL test/parser.test.ts\nTypeError: Cannot read properties of undefined (reading 'tokens')",
    error: true
  }),
  calls({ id: "c3", name: "edit", input: { path: "src/parser.ts", oldText: "a", newText: "b" } }),
  results({ id: "c3", name: "edit", text: "ok" }),
  assistant("Fixed the null check in parse; the server on localhost:5173 can stay up."),
  user("Now also update docs/parser.md with the new behaviour, see https://example.com/spec/42")
])

describe("ExtractiveSummarizer", () => {
  const content = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 4000, countTokens: count })

  it("classifies files read and modified from tool calls, in the cumulative ledger", () => {
    expect(content.filesModified).toEqual(["src/parser.ts"])
    expect(content.artifacts).toContainEqual({
      kind: "file",
      value: "src/parser.ts",
      status: "modified",
      entryIds: ["e1", "e5"]
    })
  })

  it("done holds side effects with outcomes; a failed command is a failed approach, never done", () => {
    expect(content.progress.done.some((item) => item.includes("edited `src/parser.ts`"))).toBe(true)
    expect(content.progress.done.join("\n")).not.toContain("pnpm vitest run")
    expect(content.failedApproaches?.join("\n")).toContain("pnpm vitest run test/parser.test.ts")
    expect(content.constraints.join("\n")).toContain("Don't touch the public API.")
  })

  it("keeps the latest unresolved ask as pending", () => {
    expect(content.pendingUserAsks.join("\n")).toContain("update docs/parser.md")
  })

  it("keeps the critical identifiers: the user's paths and URL, the modified file", () => {
    const text = CheckpointRenderer.renderContent(content)
    for (const expected of ["src/parser.ts", "docs/parser.md", "https://example.com/spec/42"])
      expect(text).toContain(expected)
  })

  it("passes the deterministic validator", () => {
    const rendered = CheckpointRenderer.renderContent(content)
    const report = CheckpointValidation.validate({
      checkpoint: checkpointOf(content),
      covered: session.map((item) => item.message),
      checkpointTokens: count(rendered),
      replacedTokens: 100_000
    })
    expect(report.checks.filter((check) => !check.ok)).toEqual([])
    expect(report.identifierRetention).toBe(1)
  })

  it("is deterministic", () => {
    const again = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 4000, countTokens: count })
    expect(again).toEqual(content)
  })

  it("an iterative update: newer goal wins and carries the earlier goal as the overall goal while open, files accumulate", () => {
    const later = withIds(
      [
        user("Then rename parse to parseSource everywhere in the package"),
        calls({ id: "d1", name: "write", input: { path: "src/source.ts", content: "x" } }),
        results({ id: "d1", name: "write", text: "written" })
      ],
      "f"
    )
    const next = ExtractiveSummarizer.summarizeSync({
      previous: checkpointOf(content),
      covered: later,
      maxTokens: 4000,
      countTokens: count
    })
    expect(next.goal.split("\n")[0]).toContain("rename parse to parseSource")
    expect(next.goal.split("\n")[1]).toBe(
      `Overall goal (from earlier checkpoints; still open): ${content.goal.replace(/\s*\n[\s\S]*$/, "")}`
    )
    // One more update: the overall goal stays the first one, not the goal of the update in between.
    const third = ExtractiveSummarizer.summarizeSync({
      previous: checkpointOf(next),
      covered: withIds([user("Finally bump the package version and write the changelog entry")], "g"),
      maxTokens: 4000,
      countTokens: count
    })
    expect(third.goal.split("\n")).toEqual([
      expect.stringContaining("bump the package version"),
      next.goal.split("\n")[1]
    ])
    expect(next.filesModified).toEqual(["src/parser.ts", "src/source.ts"])
    expect(next.progress.done.some((item) => item.includes("edited `src/parser.ts`"))).toBe(true)
    expect(next.pendingUserAsks.join("\n")).toContain("rename parse to parseSource")
  })

  it("carries an imported Markdown summary forward", () => {
    const imported: Checkpoint.Checkpoint = {
      ...checkpointOf(content),
      content: undefined as never,
      summarizer: { kind: "imported", promptVersion: "pi" },
      text: "## Goal\nShip the parser\n\n## Next Steps\n1. Write docs\n"
    }
    const { content: _drop, ...withoutContent } = imported
    const next = ExtractiveSummarizer.summarizeSync({
      previous: withoutContent as Checkpoint.Checkpoint,
      covered: withIds([user("go on")], "g"),
      maxTokens: 4000,
      countTokens: count
    })
    expect(next.goal).toBe("Ship the parser")
    expect(next.nextSteps).toContain("Write docs")
  })

  it("fits the token cap while keeping goal and pending ask", () => {
    const tiny = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 150, countTokens: count })
    const full = CheckpointRenderer.renderContent(content)
    const small = CheckpointRenderer.renderContent(tiny)
    expect(count(small)).toBeLessThan(count(full))
    expect(tiny.goal).toBe(content.goal)
    expect(tiny.pendingUserAsks).toEqual(content.pendingUserAsks)
  })

  /** A chat without tool calls (like an aider history) naming many files. */
  const pathHeavy = withIds(
    Array.from({ length: 60 }, (_, index) =>
      index % 2 === 0
        ? user(`Please look at pkg/area_${index}/module_${index}.py and pkg/area_${index}/helper_${index}.py`)
        : assistant(`Looked at pkg/area_${index - 1}/module_${index - 1}.py; see https://example.com/issue/${index}`)
    )
  )
  const failedChecks = (summary: Checkpoint.CheckpointContent, covered = pathHeavy) =>
    CheckpointValidation.failedChecks(
      CheckpointValidation.validate({
        checkpoint: checkpointOf(summary),
        covered: covered.map((item) => item.message),
        checkpointTokens: 1,
        replacedTokens: 2
      })
    )

  it("the default budget is 2,000 tokens, filled newest first, and says what it left out", () => {
    const many = withIds(
      Array.from({ length: 200 }, (_, index) =>
        index % 2 === 0
          ? user(`Step ${index}: never touch vendor/lib_${index}.c and keep the ABI stable for release ${index}`)
          : assistant(`Fixed the overflow in src/unit_${index}.c by widening the counter.`)
      )
    )
    const summary = ExtractiveSummarizer.summarizeSync({ covered: many, maxTokens: 100_000, countTokens: count })
    expect(count(CheckpointRenderer.renderContent(summary))).toBeLessThanOrEqual(
      ExtractiveSummarizer.DEFAULT_CHECKPOINT_TOKENS
    )
    // The newest request is the goal, quoted there; its rule is not quoted again among the constraints.
    expect(summary.goal).toContain("release 198")
    expect(summary.constraints.join("\n")).not.toContain("release 198")
    expect(summary.constraints.join("\n")).toContain("release 196")
    expect(summary.constraints.join("\n")).not.toContain("release 0 ")
    expect(summary.dropped?.join("\n")).toMatch(/left out to fit 1800 tokens: \d+ constraints/)
  })

  it("property: under any token cap the summary keeps every content check of the validator", () => {
    fc.assert(
      fc.property(conversation, fc.integer({ min: 1, max: 600 }), (items, maxTokens) => {
        const summary = ExtractiveSummarizer.summarizeSync({ covered: items, maxTokens, countTokens: count })
        expect(failedChecks(summary, items)).toEqual([])
      }),
      { numRuns: 60 }
    )
  })

  it("a repair request restores the named identifiers", async () => {
    const stripped = { ...content, identifiers: IdentifierExtraction.empty() }
    const repaired = await Effect.runPromise(
      ExtractiveSummarizer.make().summarize({
        covered: session,
        maxTokens: 4000,
        countTokens: count,
        repair: { attempt: stripped, failedChecks: ["identifier-retention"], missing: ["identifier:localhost:5173"] }
      })
    )
    expect(repaired.content.identifiers.ports).toContain("localhost:5173")
    expect(repaired.summarizer.kind).toBe("extractive")
  })

  it("property: never lists a file that is not in the transcript, always names the latest ask", () => {
    fc.assert(
      fc.property(conversation, (items) => {
        const summary = ExtractiveSummarizer.summarizeSync({ covered: items, maxTokens: 100_000, countTokens: count })
        const report = CheckpointValidation.validate({
          checkpoint: checkpointOf(summary),
          covered: items.map((item) => item.message),
          checkpointTokens: 1,
          replacedTokens: 2
        })
        const failed = report.checks.filter((check) => !check.ok).map((check) => check.name)
        expect(failed).toEqual([])
      }),
      { numRuns: 60 }
    )
  })
})
