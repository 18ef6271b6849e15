import { mkdtempSync, rmSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Budget, PolicyRegistry, Tokenizers } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { afterAll, describe, expect, it } from "vitest"
import * as ReplayCommand from "../src/commands/replay.ts"
import * as ReportCommand from "../src/commands/report.ts"
import * as Progress from "../src/Progress.ts"
import type * as Replay from "../src/Replay.ts"

const quiet = Progress.make({ enabled: false })

/** Every compaction's step sent what the compaction reported, and no step went over its budget. */
const expectSentAsReported = (
  report: Replay.ReplayResult,
  compacted: ReadonlyArray<Replay.ReplayResult["compactions"][number]>
) => {
  for (const compaction of compacted) {
    const sent = report.steps.find((step) => step.step === compaction.step)!
    expect({ step: compaction.step, sent: sent.inputTokens }).toEqual({
      step: compaction.step,
      sent: compaction.tokensAfter
    })
  }
  for (const step of report.steps) expect(step.inputTokens).toBeLessThanOrEqual(step.budgetTokens)
}
const swe = transcript("swe-agent/pydicom__pydicom-1458.traj")

describe("context-engine replay", { timeout: 180_000 }, () => {
  it("reports each checkpoint's own size, apart from the size of the request it sits in", async () => {
    // gpt-4o: o200k_base is exact, so the checkpoint's size is its rendered text's tokens
    // plus the 3 tokens framing a message (OpenAI cookbook "How to count tokens with tiktoken").
    const { report } = await ReplayCommand.buildWithLargest(swe, { model: "gpt-4o", contextWindow: 16_000 }, quiet)
    const o200k = Tokenizers.get("o200k_base")
    const withCheckpoint = report.compactions.filter((compaction) => compaction.checkpoint !== null)
    expect(withCheckpoint.length).toBeGreaterThan(0)
    for (const compaction of withCheckpoint) {
      const checkpoint = compaction.checkpoint!
      expect(checkpoint.tokens).toBe(o200k.count(checkpoint.text) + 3)
      // The request after compaction also holds the kept tail and the system prompt.
      expect(checkpoint.tokens).toBeLessThan(compaction.tokensAfter)
    }
    const text = ReplayCommand.render(report)
    const first = withCheckpoint[0]!
    const fmt = (value: number) => value.toLocaleString("en-US")
    expect(text).toContain(`request ${fmt(first.tokensBefore)} → ${fmt(first.tokensAfter)} tokens`)
    expect(text).toContain(
      `checkpoint gen ${first.checkpoint!.generation}: ${fmt(first.checkpoint!.tokens)} tokens of the request`
    )
  })

  it("says the peak request and the count of requests over budget against the input budget even when every request fits", async () => {
    // QA session 6: 'Peak request sent: 12,781 tokens at step 327' with no budget, and no over-budget line at all when
    // it was 0, so a reader could not tell from the output whether the replay stayed within the budget.
    const { report } = await ReplayCommand.buildWithLargest(swe, { model: "gpt-4o", contextWindow: 16_000 }, quiet)
    // The budget from the library, as the README says the flag resolves: 16,000 − reserve (half the window) − margins.
    const budget = Budget.make(PolicyRegistry.resolveSync({ model: "gpt-4o", contextWindowTokens: 16_000 }), {
      systemTokens: 0,
      toolSchemaTokens: 0
    }).inputBudgetTokens
    for (const step of report.steps) expect(step.inputTokens).toBeLessThanOrEqual(budget)
    const fmt = (value: number) => value.toLocaleString("en-US")
    const text = ReplayCommand.render(report)
    expect(text).toContain(
      `Peak request sent: ${fmt(report.peak.inputTokens)} tokens at step ${report.peak.step} — within the input budget of ${fmt(budget)} (window 16,000)`
    )
    expect(text).toContain(`Requests over the input budget: 0 of ${report.steps.length}`)
    // the header names the reserve and budget as compact's does (it named the window only)
    expect(text).toContain(`· window 16,000 · reserve 8,000 · input budget ${fmt(budget)} ·`)
  })

  it("names entries with the transcript's ids, as inspect and compact do: checkpoints, their first kept entry and what they cover", async () => {
    // The replay's session numbered the messages itself (default:N): checkpoints said 'covering entries (start) …
    // default:13', and coveredEntries fell back to the step's own index because default:14 was no transcript id.
    const { report } = await ReplayCommand.buildWithLargest(swe, { contextWindow: 16_000 }, quiet)
    const entries = (await Import.importFilePromise(swe)).transcript.entries
    const messageIds = entries.flatMap((entry) => (entry.kind === "message" ? [entry.id] : []))
    const withCheckpoint = report.compactions.filter((compaction) => compaction.checkpoint !== null)
    expect(withCheckpoint.length).toBeGreaterThan(0)
    for (const compaction of withCheckpoint) {
      const checkpoint = compaction.checkpoint!
      expect(messageIds).toContain(checkpoint.firstKeptEntryId)
      expect(checkpoint.coveredEntries).toBe(messageIds.indexOf(checkpoint.firstKeptEntryId!))
      expect(compaction.coveredUntilIndex).toBe(checkpoint.coveredEntries)
      const stepIndex = messageIds.indexOf(report.steps[compaction.step]!.entryId)
      expect(compaction.coveredUntilIndex).toBeLessThan(stepIndex)
      expect(checkpoint.text).not.toMatch(/default:\d/)
      const named = [...checkpoint.text.matchAll(/\bswe:\d+/g)].map((match) => match[0])
      expect(named.length).toBeGreaterThan(0)
      for (const id of named) expect(messageIds).toContain(id)
    }
  })

  it("the SWE-agent trajectory through the middleware at 8k: every request fits, every compaction writes a checkpoint", async () => {
    // steps 5 and 9 failed with BudgetExceeded (3,563 of 3,440): system, pinned task, checkpoint and the newest
    // observation (protected by the trim stages) were all that was left. Later the reduction's clamp.fit cut that
    // one, after no summary had fitted: the kept tail's room did not count the pinned task, so the reduction
    // dropped the turns with no summary. With the task counted, a checkpoint fits beside it at every step.
    const { report } = await ReplayCommand.buildWithLargest(swe, { model: "gpt-4o", contextWindow: 8_000 }, quiet)
    expect(report.failures).toEqual([])
    expect(report.overBudgetSteps).toBe(0)
    expect(report.compactions.length).toBeGreaterThan(0)
    for (const compaction of report.compactions) expect(compaction.tier).toBe("checkpoint")
  })

  it("the SWE-agent trajectory at 8k with the default model's estimate tokenizer: no compaction fails, none is skipped, every request sent is what its compaction measured and within budget", async () => {
    // claude-sonnet-4-5 (estimate:anthropic): steps 6–8 failed 15–23 tokens over the 3,200 budget (clamp.fit stopped
    // at the 256-token part floor), the circuit opened and steps 9–11 went out at up to 8,065 tokens.
    // Steps 4 and 5 reported 2,538 and 2,740 tokens but sent 3,670 and 3,544: the engine read a clamped traceback
    // observation as the user's words (the edited text), the request rebuilt from the entries pinned the task.
    const { report } = await ReplayCommand.buildWithLargest(
      swe,
      { model: "claude-sonnet-4-5", contextWindow: 8_000 },
      quiet
    )
    expect(report.failures).toEqual([])
    const compacted = report.compactions.filter((compaction) => !compaction.shadow)
    const compactedSteps = new Set(compacted.map((compaction) => compaction.step))
    // Step 4 fits without compacting since the memory flush stopped repeating the pinned task's sentences.
    for (const step of [5, 6, 7, 8, 9, 10]) expect(compactedSteps.has(step)).toBe(true)
    expectSentAsReported(report, compacted)
  })

  // A new user's replay of a transcript whose compactions failed said "No compaction was needed." and a bare
  // peak of 64,882 tokens in an 8,000-token window: the controller's compaction-failed / compaction-skipped
  // events were dropped. Every user message here is ~15K tokens and the latest user message is always sent
  // verbatim (DESIGN.md), so no compaction can make a request fit an 8K window.
  const dir = mkdtempSync(join(tmpdir(), "replay-failures-"))
  afterAll(() => rmSync(dir, { recursive: true, force: true }))
  it("a synthetic SWE-agent-like session (a task, then user-role observations) at 8k: every request sent is what its compaction measured, within budget", async () => {
    // A long traceback observation is clamped (clamp.fit); the engine must not read the clamped text as the
    // user's words while the request rebuilt from the entries pins the task (Turns.isUserWordsItem).
    const task = [
      "We're currently solving the following issue within our repository. Here's the issue text:",
      ...Array.from(
        { length: 30 },
        (_, line) =>
          `The pixel data handler should not require the optional attribute number ${line} when the data is float, and reading it must keep working for the integer case as well.`
      )
    ].join("\n")
    const traceback = (step: number) =>
      [
        "Traceback (most recent call last):",
        ...Array.from(
          { length: step === 3 ? 120 : 8 },
          (_, frame) =>
            `  File "/repo/package/module_${step}_${frame}.py", line ${100 + frame}, in function_${frame}\n    result = handler_${frame}.convert(dataset.pixel_data, representation=${frame})`
        ),
        `AttributeError: 'Dataset' object has no attribute 'PixelRepresentation' (step ${step})`
      ].join("\n")
    const messages = [
      { role: "user", content: task },
      ...Array.from({ length: 12 }, (_, step) => [
        { role: "assistant", content: `Let me run the reproduction script again (attempt ${step}).` },
        { role: "user", content: traceback(step) }
      ]).flat()
    ]
    const file = join(dir, "swe-like.json")
    writeFileSync(file, JSON.stringify(messages))
    const { report } = await ReplayCommand.buildWithLargest(file, { contextWindow: 8_000 }, quiet)
    expect(report.failures).toEqual([])
    const compacted = report.compactions.filter((compaction) => !compaction.shadow)
    expect(compacted.length).toBeGreaterThan(0)
    expectSentAsReported(report, compacted)
  })

  it("lists compactions that failed or were skipped, and the requests sent over the budget", async () => {
    const messages = Array.from({ length: 5 }, (_, turn) => [
      {
        role: "user",
        content: `review log ${turn}: ${Array.from({ length: 6000 }, (_, k) => `w${(k * 7 + turn) % 997}`).join(" ")}`
      },
      { role: "assistant", content: `ok ${turn}` }
    ]).flat()
    const file = join(dir, "huge-users.json")
    writeFileSync(file, JSON.stringify(messages))
    const { report } = await ReplayCommand.buildWithLargest(file, { contextWindow: 8_000 }, quiet)
    expect(report.steps).toHaveLength(5)
    // Each log alone (≈ 13K tokens) is over the 3,200-token budget and is never clamped (the user's words). Step 0
    // has nothing to drop: it fails and goes out as it is. From step 1 the engine's best reduction (the older logs
    // dropped) goes out, over the budget and reported so — before, the raw request went out, the breaker opened
    // after three failures and the requests grew by a log per step.
    expect(report.failures.map((failure) => [failure.step, failure.kind])).toEqual([
      [0, "failed"],
      [1, "over-budget"],
      [2, "over-budget"],
      [3, "over-budget"],
      [4, "over-budget"]
    ])
    expect(report.failures[0]!.reason).toMatch(/exceeds the budget of 3200 tokens/)
    expect(report.compactions.map((compaction) => compaction.step)).toEqual([1, 2, 3, 4])
    const first = report.steps[0]!.inputTokens
    for (const step of report.steps) expect(step.inputTokens).toBeLessThanOrEqual(first + 10)
    for (const compaction of report.compactions)
      expect(compaction.tokensAfter).toBeLessThan(compaction.tokensBefore / 1.5)
    expect(report.overBudgetSteps).toBe(5)
    const peakStep = report.steps.find((step) => step.step === report.peak.step)!
    expect(report.peak.budgetTokens).toBe(peakStep.budgetTokens)
    expect(report.peak.inputTokens).toBeGreaterThan(8_000)
    const text = ReplayCommand.render(report)
    expect(text).not.toContain("No compaction was needed.")
    expect(text).toContain("Compactions short of the budget: 4 (the best reduction went out, over the input budget)")
    expect(text).toContain("Failed compactions: 1 (the request went out uncompacted)")
    expect(text).toContain(`  step 0: ${report.failures[0]!.reason}`)
    const fmt = (value: number) => value.toLocaleString("en-US")
    expect(text).toContain(
      `over the input budget of ${fmt(peakStep.budgetTokens)} by ${fmt(report.peak.inputTokens - peakStep.budgetTokens)} (window 8,000)`
    )
    expect(text).toContain("Requests over the input budget: 5 of 5")
    // `report` says so in its one-line summary too (the page has the rows)
    const written = await ReportCommand.run(file, { contextWindow: 8_000, out: join(dir, "report.html") })
    expect(written.exitCode).toBe(0)
    expect(written.output).toContain(
      "4 compactions (0 shadow), 1 failed compaction, 5 of 5 requests over the budget, peak"
    )
  })

  it("in advisory mode a withheld checkpoint names the tokens actually sent, not only what the checkpoint would have sent", async () => {
    // QA session 4: '(shadow: not applied) … request 13,011 → 4,612 tokens' in advisory mode, where the deterministic
    // stages were applied and 8,017 tokens went out (gemini-cli-console at 32k).
    const marshmallow = transcript("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj")
    const { report } = await ReplayCommand.buildWithLargest(
      marshmallow,
      { contextWindow: 16_000, mode: "advisory" },
      quiet
    )
    const withheld = report.compactions.filter((compaction) => compaction.shadow)
    expect(withheld.length).toBeGreaterThan(0)
    const text = ReplayCommand.render(report)
    expect(text).not.toContain("(shadow: not applied)")
    for (const compaction of withheld) {
      const sent = report.steps.find((step) => step.step === compaction.step)!.inputTokens
      // what went out is not the request before (the deterministic stages ran), nor what the checkpoint would have left
      expect(sent).toBeLessThan(compaction.tokensBefore)
      expect(sent).not.toBe(compaction.tokensAfter)
      expect(text).toContain(
        `  step ${compaction.step} (advisory: checkpoint not applied, deterministic stages applied, ${sent.toLocaleString("en-US")} tokens sent)`
      )
    }
  })

  it("says why a compaction wrote no checkpoint when a deterministic pass resolved it instead", async () => {
    // New-user trial: "step 100: … resolved by reduce:slidingWindow" gave no reason. Here the first turn (21 tokens)
    // is all there is to summarize beside a long pasted ask, and no summary is smaller than it: the engine reduces.
    const pasted = Array.from(
      { length: 149 },
      (_, line) =>
        `Line ${line}: the pixel data handler must keep reading the integer case while the float case skips attribute ${line}.`
    ).join("\n")
    const messages = [
      { role: "user", content: "hi, please help me with the handler" },
      { role: "assistant", content: "Sure, what do you need?" },
      { role: "user", content: pasted },
      { role: "assistant", content: "Understood." },
      { role: "user", content: "go on" },
      { role: "assistant", content: "Done." }
    ]
    const file = join(dir, "no-checkpoint.json")
    writeFileSync(file, JSON.stringify(messages))
    const { report } = await ReplayCommand.buildWithLargest(file, { model: "gpt-4o", contextWindow: 8_000 }, quiet)
    const skipped = report.compactions.filter((compaction) =>
      compaction.stages.some((stage) => stage.stage === "checkpoint" && stage.status === "skipped")
    )
    expect(skipped.length).toBeGreaterThan(0)
    const text = ReplayCommand.render(report)
    expect(skipped.some((compaction) => compaction.tier.startsWith("reduce:"))).toBe(true)
    for (const compaction of skipped) {
      expect(compaction.checkpointSkipped).toMatch(/does not shrink what it replaces|nothing older/)
      expect(text).toContain(`resolved by ${compaction.tier} (no checkpoint: ${compaction.checkpointSkipped})`)
    }
    for (const compaction of report.compactions.filter((c) => !skipped.includes(c)))
      expect(compaction.checkpointSkipped).toBeUndefined()
  })
})
