import { spawnSync } from "node:child_process"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import * as Agent from "../src/Agent.ts"
import * as Replay from "../src/Replay.ts"

const transcript = fileURLToPath(new URL("../../../../shared/transcripts/pi/large-session.jsonl", import.meta.url))

describe("ai-sdk-agent example", () => {
  it("replays 220 tool-heavy steps under a 32K window: never over the window, never a broken tool pair", async () => {
    const script = await Replay.load(transcript)
    expect(script.length).toBeGreaterThan(200)
    const report = await Agent.run({ script, steps: 220 })
    expect(report.steps).toHaveLength(220)
    expect(report.finalText).toBe("Replayed 219 tool calls.")
    for (const step of report.steps) {
      expect(step.rejected).toBe(false)
      expect(step.pairingIntact).toBe(true)
      expect(step.promptTokens + report.maxOutputTokens).toBeLessThanOrEqual(report.windowTokens)
    }
    // The uncompacted history would be far over the window; compaction did the work, in few, large steps:
    // each threshold compaction lands at the low-water mark instead of just under the threshold, so it
    // buys many steps per prompt-cache rewrite (no compaction that frees a trivial amount).
    expect(report.compactions.length).toBeGreaterThan(0)
    expect(report.compactions.length).toBeLessThan(220 / 10)
    for (const compaction of report.compactions)
      expect(compaction.tokensBefore - compaction.tokensAfter).toBeGreaterThan(report.windowTokens / 8)
    expect(report.steps.at(-1)!.messages).toBeLessThan(2 + 2 * 219)
  }, 180_000)

  it("the real-provider variant skips cleanly without an API key", () => {
    const env = { ...process.env }
    delete env.ANTHROPIC_API_KEY
    delete env.OPENAI_API_KEY
    const result = spawnSync(process.execPath, [fileURLToPath(new URL("../src/real.ts", import.meta.url))], {
      env,
      encoding: "utf8"
    })
    expect(result.status).toBe(0)
    expect(result.stdout).toContain("skipping the real-provider variant")
  }, 60_000) // spawns a Node process that loads every package: seconds on a loaded 2-core machine
})
