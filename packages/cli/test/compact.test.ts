import { mkdtempSync, readFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointValidation, Decode, Message, PolicyRegistry } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { TieredSummaryEngine } from "@context-engine/engines"
import { Import } from "@context-engine/provider-adapters"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const pi = transcript("pi/before-compaction.jsonl")
const decodeMessage = Decode.decodeUnknownSync(Message.Message, "message")

const textOf = (message: Message.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part ? part.text : "")).join("")

// Generous timeouts: the pi session is 2.4 MB and the machine is shared; nothing asserts a duration.
describe("context-engine compact", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "compact-"))
  const out = join(dir, "compacted.json")
  const first = Compact.run(pi, { out }, quiet)

  it("compacts the real pi session offline with a validated checkpoint that fits", async () => {
    const { exitCode, report } = await first
    expect(exitCode).toBe(0)
    expect(report!.decision.reasons).toContain("threshold")
    expect(report!.fits).toBe(true)
    expect(report!.tokens.after.input).toBeLessThan(report!.tokens.before.input)
    expect(report!.tokens.after.input).toBeLessThanOrEqual(report!.policy.inputBudgetTokens)
    expect(report!.checkpoint?.validation?.ok).toBe(true)
    expect(report!.checkpoint?.summarizer.kind).toBe("extractive")
    // the imported pi compactions are the previous checkpoints: this one is the third generation
    expect(report!.checkpoint?.generation).toBe(3)
    expect(report!.stages.map((stage) => stage.stage)).toContain("checkpoint")
  })

  it("prints a report a person reads: categories, stages, cut point, validation, the checkpoint", async () => {
    const { output } = await first
    for (const heading of [
      "Tokens per category",
      "Stages",
      "Cut point:",
      "Validation: passed",
      "## Goal",
      "## Next Steps"
    ])
      expect(output).toContain(heading)
  })

  it("--out writes ModelMessage[] with the checkpoint before the latest user message, plus checkpoint and report", async () => {
    await first
    const written = JSON.parse(readFileSync(out, "utf8")) as {
      messages: Array<unknown>
      checkpoint: { id: string; content: unknown }
      report: Compact.CompactReport
      entriesToAppend: Array<{ kind: string }>
    }
    const messages = written.messages.map((message) => decodeMessage(message))
    const checkpointAt = messages.findIndex((message) => textOf(message).includes("[Context checkpoint"))
    const lastUserAt = messages.map((message) => message.role).lastIndexOf("user")
    expect(checkpointAt).toBeGreaterThanOrEqual(0)
    expect(checkpointAt).toBeLessThan(lastUserAt)
    expect(written.checkpoint.id).toBe(written.report.checkpoint?.id)
    expect(written.entriesToAppend.filter((entry) => entry.kind === "checkpoint")).toHaveLength(1)
    const text = CheckpointValidation.checkpointText(written.checkpoint as never)
    expect(text.length).toBeGreaterThan(0)
  })

  it("--json prints the report as JSON", async () => {
    const { output, exitCode } = await Compact.run(pi, { json: true, engine: "sliding-window" }, quiet)
    expect(exitCode).toBe(0)
    const report = JSON.parse(output) as Compact.CompactReport
    expect(report.engine).not.toBe("tiered-summary")
    expect(report.checkpoint).toBeNull()
    expect(report.tokens.after.input).toBeLessThanOrEqual(report.policy.inputBudgetTokens)
  })

  it("--summarizer MODEL without an API key fails at once with a clear typed message", async () => {
    const saved = { ...process.env }
    for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AI_GATEWAY_API_KEY", "VERCEL_OIDC_TOKEN"])
      delete process.env[key]
    try {
      const { output, exitCode } = await Compact.run(
        pi,
        { summarizer: "anthropic:claude-haiku-4-5", json: true },
        quiet
      )
      expect(exitCode).toBe(2)
      const error = (JSON.parse(output) as { error: { tag: string; message: string } }).error
      expect(error.tag).toBe("SummarizerFailed")
      expect(error.message).toContain("ANTHROPIC_API_KEY")
    } finally {
      Object.assign(process.env, saved)
    }
  })

  it("a missing file fails with exit code 1", async () => {
    const { exitCode, output } = await Compact.run(join(dir, "nope.jsonl"), {}, quiet)
    expect(exitCode).toBe(1)
    expect(output).toContain("context-engine compact:")
  })
})

describe("trigger replay on the real pi session (Pi-equivalent policy)", { timeout: 120_000 }, () => {
  it("the usage-anchored trigger first fires in the second segment exactly where pi recorded its compaction", async () => {
    const entries = (await Import.importFilePromise(pi)).transcript.entries
    const policy = {
      ...PolicyRegistry.lookupSync("claude-opus-4-5"),
      contextWindowTokens: 200_000,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
      toolLoopReserveTokens: 0,
      safetyMarginTokens: 0
    }
    const compactions = entries.filter((entry) => entry.kind === "checkpoint")
    const second = entries.indexOf(compactions[1]!)
    const first = entries.indexOf(compactions[0]!)
    const engine = TieredSummaryEngine.makeAsync()
    let previousMessageId: string | undefined
    let firedAt: string | undefined
    for (let index = first + 1; index < second && firedAt === undefined; index++) {
      const entry = entries[index]!
      const usage = (entry.meta as { usage?: { input: number; cacheRead: number; cacheWrite: number } } | undefined)
        ?.usage
      if (entry.kind === "message" && entry.message.role === "assistant" && usage && previousMessageId) {
        const input = { entries: entries.slice(0, index + 1), policy }
        await engine.recordOutcome(input, {
          inputTokens: usage.input + usage.cacheRead + usage.cacheWrite,
          lastEntryId: previousMessageId
        })
        if ((await engine.shouldCompact(input)).reasons.includes("threshold")) firedAt = entry.id
      }
      if (entry.kind === "message") previousMessageId = entry.id
    }
    // pi wrote its compaction right after the last assistant message before it
    const piPoint = entries.slice(0, second).findLast((entry) => entry.kind === "message")!.id
    expect(firedAt).toBe(piPoint)
  })
})
