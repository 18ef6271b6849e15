import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PassThrough } from "node:stream"
import { Budget, Measurement, PolicyRegistry } from "@context-engine/core"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import * as Inspect from "../src/commands/inspect.ts"
import * as ExitCodes from "../src/ExitCodes.ts"
import { InspectReport } from "../src/InspectReport.ts"

import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const decode = Schema.decodeUnknownSync(InspectReport)
const inspectJson = async (file: string, options: Inspect.InspectOptions = {}) => {
  const { output, exitCode } = await Inspect.run(file, { ...options, json: true }, quiet)
  expect(exitCode).toBe(0)
  return decode(JSON.parse(output))
}
const sumInput = (byCategory: Measurement.CategoryCounts) =>
  Measurement.categories.filter((c) => c !== "reservedOutput").reduce((sum, c) => sum + byCategory[c], 0)

const pi = transcript("pi/before-compaction.jsonl")
let piReport: Promise<InspectReport> | undefined
/** The default-options report of the pi session, computed once for the tests that only read it. */
const piDefault = () => {
  piReport ??= inspectJson(pi)
  return piReport
}

// Generous per-test timeouts: the machine is shared and a cold `node bin.ts` loads every package; nothing here asserts a duration.
describe("context-engine inspect", { timeout: 60_000 }, () => {
  it("--json emits an object the InspectReport schema decodes, with the SOURCES.md counts", async () => {
    const report = await piDefault()
    expect(report.format).toBe("pi")
    expect(report.entries.messages).toBe(990)
    expect(report.entries.toolCalls).toBe(454)
    expect(report.model).toMatchObject({ id: "claude-opus-4-5", source: "transcript", known: true })
    expect(report.compactions.map((c) => c.tokensBefore)).toEqual([175_004, 185_014])
    expect(report.compactions.every((c) => c.firstKeptEntryId !== null && c.summaryTokens > 0)).toBe(true)
  })

  it("the category table adds up to the total, and the budget share is total / budget", async () => {
    const report = await piDefault()
    for (const totals of [report.fullHistory, report.activeContext!]) {
      expect(sumInput(totals.byCategory)).toBe(totals.inputTokens)
      expect(totals.budgetShare).toBeCloseTo(totals.inputTokens / report.model.budgetTokens, 10)
    }
    expect(report.activeContext!.byCategory.checkpoint).toBeGreaterThan(0)
    expect(report.activeContext!.inputTokens).toBeLessThan(report.fullHistory.inputTokens)
  })

  it("lists the 10 largest entries, largest first", async () => {
    const report = await piDefault()
    expect(report.largest).toHaveLength(10)
    const tokens = report.largest.map((entry) => entry.tokens)
    expect(tokens).toEqual([...tokens].sort((a, b) => b - a))
  })

  it("previews a tool result by its output's text, not the output's JSON wrapper", async () => {
    // QA session 6: the largest-entries list showed 'Bash → {"type":"text","value":"claude-dev-log-diary/…'.
    const dir = mkdtempSync(join(tmpdir(), "ce-inspect-"))
    const file = join(dir, "messages.json")
    const listing = `${"src/module.ts ".repeat(400)}`
    writeFileSync(
      file,
      JSON.stringify([
        { role: "user", content: "list the files" },
        {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "ls" } }]
        },
        {
          role: "tool",
          content: [
            { type: "tool-result", toolCallId: "c1", toolName: "bash", output: { type: "text", value: listing } }
          ]
        }
      ])
    )
    const report = await inspectJson(file)
    const result = report.largest.find((entry) => entry.role === "tool")!
    // 79 characters and an ellipsis: "bash → " (7) + 5 × "src/module.ts " (70) + "sr"
    expect(result.preview).toBe(`bash → ${"src/module.ts ".repeat(5)}sr…`)
  })

  it("reports the calls the pi session left unanswered, with entry ids", async () => {
    const raw = readFileSync(pi, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((line) => JSON.parse(line))
    const answered = new Set(raw.filter((r) => r.message?.role === "toolResult").map((r) => r.message.toolCallId))
    const calls = raw.flatMap((r) =>
      r.message?.role === "assistant" ? r.message.content.filter((b: { type: string }) => b.type === "toolCall") : []
    )
    const unanswered = calls.filter((b: { id: string }) => !answered.has(b.id)).map((b: { id: string }) => b.id)
    const report = await piDefault()
    expect(report.pairing.callsWithoutResult).toBe(unanswered.length)
    expect(report.pairing.problems.map((p) => p.toolCallId).sort()).toEqual([...unanswered].sort())
    expect(report.pairing.problems.every((p) => p.entryIds.length === 1)).toBe(true)
  })

  it("--model switches window and tokenizer (exact o200k_base for gpt-4o), from the policy registry", async () => {
    const report = await inspectJson(pi, { model: "gpt-4o" })
    expect(report.counting).toMatchObject({ method: "exact", tokenizer: "o200k_base" })
    const policy = PolicyRegistry.lookupSync("gpt-4o")
    expect(report.model.budgetTokens).toBe(
      Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 }).inputBudgetTokens
    )
    const unknown = await inspectJson(pi, { model: "no-such-model-1", allowUnknownModel: true })
    expect(unknown.model.known).toBe(false)
  }, 60_000)

  it("prints every section as text", async () => {
    const { output, exitCode } = await Inspect.run(pi, {}, quiet)
    expect(exitCode).toBe(0)
    for (const heading of [
      "Full history",
      "Active context after the last compaction",
      "Largest 10 entries",
      "Tool pairing: 0 orphan result(s), 0 result(s) not next to their call, 6 call(s) without result",
      "Recorded compaction points",
      "counting: estimate"
    ])
      expect(output).toContain(heading)
  })

  it("is lenient by default (skips and lists a malformed line) and fails with the line number under --strict", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ce-inspect-"))
    const file = join(dir, "session.log")
    const lines = readFileSync(pi, "utf8").split("\n").slice(0, 6)
    lines.splice(3, 0, '{"type":"message", oops')
    writeFileSync(file, lines.join("\n"))
    const report = await inspectJson(file)
    expect(report.import.skipped).toBe(1)
    expect(report.import.issues[0]!.line).toBe(4)
    const strict = await Inspect.run(file, { strict: true }, quiet)
    expect(strict.exitCode).toBe(1)
    expect(strict.output).toMatch(/line 4/)
    const empty = join(dir, "empty.jsonl")
    writeFileSync(empty, "")
    expect((await Inspect.run(empty, {}, quiet)).exitCode).toBe(1)
    expect((await Inspect.run(join(dir, "missing.jsonl"), {}, quiet)).exitCode).toBe(1)
  })

  it("says 'not found' / 'is a directory' for a path that is not a file, with exit code 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ce-inspect-"))
    const missing = await Inspect.run(join(dir, "missing.jsonl"), {}, quiet)
    expect(missing.exitCode).toBe(1)
    expect(missing.output).toBe(`context-engine inspect: Transcript file ${join(dir, "missing.jsonl")} not found`)
    const directory = await Inspect.run(dir, { json: true }, quiet)
    expect(directory.exitCode).toBe(1)
    expect(JSON.parse(directory.output).error).toEqual({
      tag: "TranscriptUnreadable",
      message: `${dir} is a directory, not a transcript file`
    })
  })

  it("a forced --format the file is not in fails with the usage code, naming its markers and what detection finds", async () => {
    const traj = transcript("swe-agent/pydicom__pydicom-1458.traj")
    const { output, exitCode } = await Inspect.run(traj, { format: "pi" }, quiet)
    expect(exitCode).toBe(ExitCodes.USAGE)
    expect(output).toMatch(
      /does not look like pi: it has none of pi's markers \(.*`session` header.*\); auto-detection says it looks like swe-agent\. Pass --format swe-agent/
    )
  })

  it("reports framing as its own category: no assistant message means no assistant text", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ce-inspect-"))
    const file = join(dir, "no-assistant.json")
    const messages = [
      { role: "system", content: "You are terse." },
      { role: "user", content: "hello" }
    ]
    writeFileSync(file, JSON.stringify({ messages }))
    // gpt-4o counts exactly with o200k_base. OpenAI cookbook "How to count tokens with tiktoken":
    // 3 tokens frame each message and 3 prime the reply: 3 + 3 + 3 = 9. "You are terse." is 4
    // o200k_base tokens (3575, 553, 28410, 13), "hello" 1 (24912).
    const report = await inspectJson(file, { model: "gpt-4o" })
    expect(report.fullHistory.byCategory).toMatchObject({ assistantText: 0, framing: 9, system: 4, userText: 1 })
    expect(report.fullHistory.inputTokens).toBe(14)
    const { output } = await Inspect.run(file, { model: "gpt-4o" }, quiet)
    expect(output).toMatch(/message framing\s+9\s/)
    expect(output).not.toMatch(/assistant text/)
  })

  it("numbers a one-line broken JSON file's error on line 1", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ce-inspect-"))
    const file = join(dir, "broken.json")
    writeFileSync(file, '{"messages": [{"role": "user", "content": "hi"}\n')
    const { output, exitCode } = await Inspect.run(file, {}, quiet)
    expect(exitCode).toBe(1)
    expect(output).toMatch(/line 1 is corrupt/)
    expect(output).not.toMatch(/line 2/)
  })

  it("reports a Claude Code session's sub-agent records as events, outside the main conversation", async () => {
    const file = transcript("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    const sidechain = readFileSync(file, "utf8")
      .split("\n")
      .filter(Boolean)
      .filter((line) => JSON.parse(line).isSidechain === true).length
    const report = await inspectJson(file)
    expect(report.entries.subAgentRecords).toBe(sidechain)
    expect(report.pairing.resultsNotAdjacent).toBe(0)
    expect(report.pairing.problems).toEqual([])
    const { output } = await Inspect.run(file, {}, quiet)
    expect(output).toContain(
      `  ${sidechain} sub-agent (sidechain) records kept as events, outside the main conversation`
    )
    expect((await piDefault()).entries.subAgentRecords).toBe(0)
  })

  it("runs from the command line (bin.ts) and rejects an unknown --format", () => {
    const bin = join(repoRoot, "packages/cli/src/bin.ts")
    const ok = spawnSync(
      process.execPath,
      [bin, "inspect", transcript("swe-agent/pydicom__pydicom-1458.traj"), "--json"],
      {
        encoding: "utf8"
      }
    )
    expect(ok.status).toBe(0)
    expect(decode(JSON.parse(ok.stdout)).format).toBe("swe-agent")
    const bad = spawnSync(process.execPath, [bin, "inspect", pi, "--format", "nope"], { encoding: "utf8" })
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toMatch(/Allowed choices are auto, pi/)
  }, 60_000)
})

describe("inspect on every transcript in ../shared/transcripts", { timeout: 120_000 }, () => {
  it("produces a schema-valid report whose category table adds up", async () => {
    const names = [...readFileSync(transcript("SOURCES.md"), "utf8").matchAll(/^### (\S+)$/gm)].map((m) => m[1]!)
    expect(names).toHaveLength(8)
    for (const name of names) {
      const report = await inspectJson(transcript(name))
      expect(report.entries.messages).toBeGreaterThan(0)
      expect(sumInput(report.fullHistory.byCategory)).toBe(report.fullHistory.inputTokens)
      expect(report.largest.length).toBe(Math.min(10, report.entries.messages))
      expect(report.import.skipped).toBe(0)
    }
  })
})

describe("progress bar", () => {
  const fakeTty = () => {
    const stream = Object.assign(new PassThrough(), {
      isTTY: true,
      columns: 80,
      cursorTo: () => true,
      clearLine: () => true,
      moveCursor: () => true
    })
    let written = ""
    stream.on("data", (chunk) => (written += String(chunk)))
    return { stream: stream as unknown as NodeJS.WriteStream, written: () => written }
  }
  it("appears once a phase outlasts the delay, on a terminal only", () => {
    const shown = fakeTty()
    const progress = Progress.make({ stream: shown.stream, delayMs: 0 })
    progress.update("importing", 5, 10)
    progress.stop()
    expect(shown.written()).toMatch(/importing/)
    const hidden = fakeTty()
    const waiting = Progress.make({ stream: hidden.stream, delayMs: Number.POSITIVE_INFINITY })
    waiting.update("importing", 5, 10)
    waiting.stop()
    expect(hidden.written()).toBe("")
  })
})
