/**
 * A context window that the transcript's system prompt alone exceeds (wqa5
 * item 1): every command says so with the numbers, never "fits", and exits
 * with the usage code 3 (ExitCodes.ts: raise the window).
 */
import { mkdtempSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Inspect from "../src/commands/inspect.ts"
import * as ReplayCommand from "../src/commands/replay.ts"
import * as ReportCommand from "../src/commands/report.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
// SWE-agent's system prompt is about 1,200 tokens; a 1,000-token window reserves 500 for the reply
// (half the window) and 100 for the safety margin, leaving a 400-token input budget.
const traj = transcript("swe-agent/pydicom__pydicom-1458.traj")
const expectPlainError = (output: string) => {
  expect(output).toMatch(/Fixed overhead of \d+ tokens/)
  expect(output).toContain("exceeds the input budget of 400 tokens (context window 1000 − reserve 500")
  expect(output).toContain("raise the context window or shorten the system prompt")
  expect(output).not.toMatch(/fits/)
}

describe("a window the fixed overhead alone exceeds", { timeout: 120_000 }, () => {
  it("compact exits 3 with the numbers, with and without --force, and --json says the same", async () => {
    for (const options of [{}, { force: true }]) {
      const { output, exitCode } = await Compact.run(traj, { contextWindow: 1_000, ...options }, quiet)
      expect(exitCode).toBe(3)
      expectPlainError(output)
    }
    const json = await Compact.run(traj, { contextWindow: 1_000, json: true }, quiet)
    expect(json.exitCode).toBe(3)
    expect(JSON.parse(json.output).error.tag).toBe("FixedOverheadExceedsBudget")
  })

  it("replay and report exit 3 with the numbers instead of replaying every request over the budget", async () => {
    const replayed = await ReplayCommand.run(traj, { contextWindow: 1_000 })
    expect(replayed.exitCode).toBe(3)
    expectPlainError(replayed.output)
    const out = join(mkdtempSync(join(tmpdir(), "overhead-")), "report.html")
    const reported = await ReportCommand.run(traj, { contextWindow: 1_000, out })
    expect(reported.exitCode).toBe(3)
    expectPlainError(reported.output)
  })

  it("inspect names the system prompt over the budget (a report: exit 0), and says nothing of it when it fits", async () => {
    const small = await Inspect.run(traj, { contextWindow: 1_000 })
    expect(small.exitCode).toBe(0)
    expect(small.output).toMatch(
      /the system prompt and tool schemas alone \(1,2\d\d tokens\) are over the input budget of 400: no compaction can make a request fit; raise the context window/
    )
    const roomy = await Inspect.run(traj, { contextWindow: 16_000 })
    expect(roomy.output).not.toContain("alone (")
  })

  it("a window that leaves room still compacts (exit 0)", async () => {
    const { exitCode } = await Compact.run(traj, { contextWindow: 16_000 }, quiet)
    expect(exitCode).toBe(0)
  })
})
