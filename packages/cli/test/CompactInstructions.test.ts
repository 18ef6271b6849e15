/**
 * `compact --instructions <text>` is `/compact <instructions>` (issue #11
 * requirement 6, shared case C18): a manual compaction whose instructions
 * reach the summarizer as instructions and never become the goal, a pending
 * ask or a next step of the checkpoint, nor a user message of the request.
 */
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { CheckpointValidation, type Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { ExtractiveSummarizer, type Summarizer } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Progress from "../src/Progress.ts"

interface C18 {
  readonly messages: Array<Message.Message>
  readonly compactInstructions: { readonly handoff: string; readonly focus: string }
  readonly policy: { readonly contextWindow: number; readonly keepRecentTokens: number }
}

const c18 = loadCase<C18>("C18")
const quiet = Progress.make({ enabled: false })
const dir = mkdtempSync(join(tmpdir(), "compact-instructions-"))
const file = join(dir, "c18.json")
writeFileSync(file, JSON.stringify({ messages: c18.messages }))

/** The offline summarizer, recording each request it gets. */
const recording = () => {
  const requests: Array<Summarizer.SummarizeRequest> = []
  const inner = ExtractiveSummarizer.make()
  const summarizer: Summarizer.Summarizer = {
    name: "recording-extractive",
    summarize: (request) => {
      requests.push(request)
      return inner.summarize(request)
    }
  }
  return { summarizer, requests }
}

const carries = (text: string, instruction: string) => CheckpointValidation.askOverlap(instruction, text) >= 0.8

describe("compact --instructions", () => {
  it.each([
    ["handoff", c18.compactInstructions.handoff],
    ["focus", c18.compactInstructions.focus]
  ])(
    "%s instructions feed the summarizer and are never a task of the checkpoint or a user message",
    async (_, text) => {
      const { summarizer, requests } = recording()
      const out = join(dir, `out-${text.length}.json`)
      const { exitCode, report } = await Compact.run(
        file,
        {
          model: "gpt-4o",
          contextWindow: c18.policy.contextWindow,
          keepRecent: c18.policy.keepRecentTokens,
          summarizer,
          instructions: text,
          out
        },
        quiet
      )
      expect(exitCode).toBe(0)
      // A manual compaction (like /compact): a checkpoint is written though the request may already fit.
      expect(report!.decision.reasons).toContain("manual")
      expect(requests.length).toBeGreaterThan(0)
      for (const request of requests) expect(request.instructions).toBe(text)
      expect(report!.instructions).toBe(text)
      const written = JSON.parse(readFileSync(out, "utf8")) as {
        messages: Array<Message.Message>
        checkpoint: { content: { goal: string; pendingUserAsks: Array<string>; nextSteps: Array<string> } } | null
      }
      const content = written.checkpoint!.content
      expect(carries([content.goal, ...content.pendingUserAsks, ...content.nextSteps].join("\n"), text)).toBe(false)
      const userTexts = written.messages
        .filter((message) => message.role === "user")
        .map((message) => CheckpointValidation.messageText(message))
      expect(userTexts.some((said) => said.includes(text))).toBe(false)
    }
  )

  // New-user trial 2: with the default summarizer the checkpoint was identical to --force's, and nothing said so.
  it("with the offline extractive summarizer, a warning says the instructions steer only a model summarizer", async () => {
    const { exitCode, report } = await Compact.run(
      file,
      {
        model: "gpt-4o",
        contextWindow: c18.policy.contextWindow,
        keepRecent: c18.policy.keepRecentTokens,
        instructions: c18.compactInstructions.focus
      },
      quiet
    )
    expect(exitCode).toBe(0)
    expect(report!.warnings.some((warning) => warning.startsWith("--instructions go to a model summarizer"))).toBe(true)
    // A summarizer that takes them: no warning.
    const given = await Compact.run(
      file,
      {
        model: "gpt-4o",
        contextWindow: c18.policy.contextWindow,
        keepRecent: c18.policy.keepRecentTokens,
        summarizer: recording().summarizer,
        instructions: c18.compactInstructions.focus
      },
      quiet
    )
    expect(given.report!.warnings.some((warning) => warning.includes("--instructions"))).toBe(false)
  })

  // New-user trial 2: `compact … --force` printed "Decision: compact (manual)", then wrote no checkpoint, with no hint.
  it("--force with nothing before the kept recent window says so and how to get a checkpoint", async () => {
    const small = join(dir, "small.json")
    writeFileSync(
      small,
      JSON.stringify({
        messages: [
          { role: "user", content: "Rename the retry helper in src/net.ts." },
          { role: "assistant", content: "Renamed it to retryOnce in src/net.ts." }
        ]
      })
    )
    const { exitCode, report } = await Compact.run(small, { model: "gpt-4o", force: true }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.checkpoint).toBeNull()
    expect(report!.warnings).toContainEqual(
      expect.stringMatching(
        /^no checkpoint written: nothing lies before the kept recent window \(--keep-recent \d+ tokens\); pass a smaller --keep-recent/
      )
    )
    const unforced = await Compact.run(small, { model: "gpt-4o" }, quiet)
    expect(unforced.report!.warnings.some((warning) => warning.startsWith("no checkpoint written"))).toBe(false)
  })

  it("without --instructions the summarizer gets none and the compaction is not manual unless forced", async () => {
    const { summarizer, requests } = recording()
    const { exitCode, report } = await Compact.run(
      file,
      { model: "gpt-4o", contextWindow: c18.policy.contextWindow, keepRecent: c18.policy.keepRecentTokens, summarizer },
      quiet
    )
    expect(exitCode).toBe(0)
    expect(report!.decision.reasons).not.toContain("manual")
    expect(report!.instructions).toBeNull()
    for (const request of requests) expect(request.instructions).toBeUndefined()
  })
})
