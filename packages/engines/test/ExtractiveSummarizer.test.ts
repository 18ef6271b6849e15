import { type Checkpoint, CheckpointRenderer, CheckpointValidation, IdentifierExtraction } from "@context-engine/core"
import { Effect } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { assistant, calls, conversation, results, user, withIds } from "./support.ts"

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

const checkpointOf = (content: Checkpoint.CheckpointContent): Checkpoint.Checkpoint => ({
  id: "cp",
  generation: 1,
  coveredRange: { fromEntryId: null, toEntryId: "e8" },
  firstKeptEntryId: null,
  tokensBefore: 0,
  tokensAfter: 0,
  summarizer: { kind: "extractive", promptVersion: ExtractiveSummarizer.PROMPT_VERSION },
  content,
  createdAt: new Date(0).toISOString()
})

describe("ExtractiveSummarizer", () => {
  const content = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 4000, countTokens: count })

  it("classifies files read and modified from tool calls", () => {
    expect(content.filesRead).toContain("src/parser.ts")
    expect(content.filesModified).toEqual(["src/parser.ts"])
  })

  it("records commands with their outcome and the user's constraint", () => {
    expect(
      content.progress.done.some(
        (item) => item.includes("pnpm vitest run test/parser.test.ts") && item.includes("failed")
      )
    ).toBe(true)
    expect(content.constraints).toContain("Don't touch the public API.")
  })

  it("keeps the latest unresolved ask as pending", () => {
    expect(content.pendingUserAsks.join("\n")).toContain("update docs/parser.md")
  })

  it("keeps exact identifiers: paths, URL, port, error string", () => {
    const text = CheckpointRenderer.renderContent(content)
    for (const expected of [
      "src/parser.ts",
      "docs/parser.md",
      "https://example.com/spec/42",
      "localhost:5173",
      "TypeError: Cannot read properties of undefined (reading 'tokens')"
    ])
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

  it("accumulates files across checkpoints and keeps the previous goal", () => {
    const later = withIds(
      [
        user("Then rename parse to parseSource"),
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
    expect(next.goal).toBe(content.goal)
    expect(next.filesModified).toEqual(["src/parser.ts", "src/source.ts"])
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
  })

  it("fits the token cap while keeping goal and pending ask", () => {
    const tiny = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 300, countTokens: count })
    const full = CheckpointRenderer.renderContent(content)
    const small = CheckpointRenderer.renderContent(tiny)
    expect(count(small)).toBeLessThan(count(full))
    expect(tiny.goal).toBe(content.goal)
    expect(tiny.pendingUserAsks).toEqual(content.pendingUserAsks)
  })

  /** A chat without tool calls (like an aider history) naming many files: one `done` item, identifiers far over the cap. */
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

  it("shrinking never empties a required section and keeps identifier retention at the validator's minimum", () => {
    const full = ExtractiveSummarizer.summarizeSync({ covered: pathHeavy, maxTokens: 100_000, countTokens: count })
    expect(full.progress.done).toHaveLength(1)
    const tiny = ExtractiveSummarizer.summarizeSync({ covered: pathHeavy, maxTokens: 50, countTokens: count })
    expect(tiny.progress.done).toEqual(full.progress.done)
    expect(tiny.nextSteps.length).toBeGreaterThan(0)
    expect(failedChecks(tiny)).toEqual([])
    // it did shrink: the prose went, and identifiers down to (not below) the minimum
    expect(count(CheckpointRenderer.renderContent(tiny))).toBeLessThan(count(CheckpointRenderer.renderContent(full)))
    const wanted = IdentifierExtraction.fromMessages(pathHeavy.map((item) => item.message))
    const total = IdentifierExtraction.size(wanted)
    const lost = IdentifierExtraction.size(
      IdentifierExtraction.missingFrom(wanted, CheckpointValidation.contentText(tiny))
    )
    expect(lost).toBeGreaterThan(0)
    expect((total - lost) / total).toBeGreaterThanOrEqual(CheckpointValidation.DEFAULT_MIN_IDENTIFIER_RETENTION)
    // a stricter engine minimum is honoured
    const strict = ExtractiveSummarizer.summarizeSync(
      { covered: pathHeavy, maxTokens: 50, countTokens: count },
      { minIdentifierRetention: 1 }
    )
    expect(
      IdentifierExtraction.size(IdentifierExtraction.missingFrom(wanted, CheckpointValidation.contentText(strict)))
    ).toBe(0)
  })

  it("drops prose before identifiers of the covered range", () => {
    const full = ExtractiveSummarizer.summarizeSync({ covered: pathHeavy, maxTokens: 100_000, countTokens: count })
    const fullTokens = count(CheckpointRenderer.renderContent(full))
    const proseTokens = count(full.criticalContext.join("\n"))
    const trimmed = ExtractiveSummarizer.summarizeSync({
      covered: pathHeavy,
      maxTokens: fullTokens - Math.floor(proseTokens / 4),
      countTokens: count
    })
    expect(trimmed.criticalContext.length).toBeLessThan(full.criticalContext.length)
    const wanted = IdentifierExtraction.fromMessages(pathHeavy.map((item) => item.message))
    expect(IdentifierExtraction.missingFrom(wanted, CheckpointValidation.contentText(trimmed))).toEqual(
      IdentifierExtraction.empty()
    )
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
