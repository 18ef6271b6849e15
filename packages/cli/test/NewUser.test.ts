import { spawnSync } from "node:child_process"
import { copyFileSync, linkSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { JsonlTranscriptStore } from "@context-engine/core/node"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { Import } from "@context-engine/transcripts"
import { generateText, type ModelMessage } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Inspect from "../src/commands/inspect.ts"
import * as ExitCodes from "../src/ExitCodes.ts"
import * as Progress from "../src/Progress.ts"

/**
 * What a first-time user ran into (QA session 3): a split-turn handoff that
 * counted the summarized messages twice, numeric flags that took `-1` or
 * `abc` silently, and `--out` paths that failed with a bare EISDIR/ENOENT
 * after all the work was done.
 */
const quiet = Progress.make({ enabled: false })
const bin = join(repoRoot, "packages/cli/src/bin.ts")
// SOURCES.md: 28 history messages, 1 system; the first user message holds the issue.
const marshmallow = transcript("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj")
// in a scratch directory: were a bad flag accepted, `report` would write report.html into the working directory
const scratch = mkdtempSync(join(tmpdir(), "new-user-cwd-"))
const cli = (...args: Array<string>) => spawnSync(process.execPath, [bin, ...args], { encoding: "utf8", cwd: scratch })

describe("what a new user runs into", { timeout: 180_000 }, () => {
  it("a split turn: the messages the checkpoint summarizes are not also called empty messages left out of the tail", async () => {
    // a 16K window cuts inside the issue's one long turn: its user message is kept, the turn's prefix summarized
    const { exitCode, output, report } = await Compact.run(marshmallow, { contextWindow: 16_000 }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.cutPoint!.splitTurn).toBe(true)
    const { keptTail, checkpoint, notSentMessages } = report!.handoff
    expect(checkpoint!.standsInForMessages).toBeGreaterThan(0)
    expect(checkpoint!.standsInForMessages + keptTail.leftOutMessages).toBe(notSentMessages)
    expect(output).not.toContain(`${checkpoint!.standsInForMessages} empty or reasoning-only messages`)
  })

  it("compact counts the transcript's messages as inspect does: the system message is one of them, and it is sent", async () => {
    // s6 new-user trial: compact said "7 of the transcript's 27 messages are sent" where inspect said "messages 28 (system 1, …)"
    const { output, report } = await Compact.run(marshmallow, { contextWindow: 6_000 }, quiet)
    const inspected = await Inspect.run(marshmallow, { json: true }, quiet)
    const { transcriptMessages, notSentMessages, systemPrompt, keptTail, keptUsers } = report!.handoff
    expect(transcriptMessages).toBe(28) // SOURCES.md
    expect(JSON.parse(inspected.output).entries.messages).toBe(transcriptMessages)
    expect(systemPrompt).toMatchObject({ messages: 1 })
    expect(systemPrompt!.tokens).toBe(report!.tokens.after.system + 3) // its row plus its message framing
    // what is sent adds up: the system message, the kept users, the kept tail
    expect(transcriptMessages - notSentMessages).toBe(1 + (keptUsers?.messages ?? 0) + keptTail.messages)
    expect(output).toContain(`(${transcriptMessages - notSentMessages} of the transcript's 28 messages are sent)`)
    expect(output).toContain(`System prompt: the transcript's system message (${systemPrompt!.tokens} tokens)`)
  })

  it.each([
    ["replay", "--damage-window", "-1"],
    ["replay", "--damage-window", "abc"],
    ["report", "--damage-window", "1.5"],
    ["compact", "--checkpoint-lines", "-1"],
    ["compact", "--checkpoint-lines", "five"]
  ])("%s %s %s is a usage error naming the flag, not NaN or a negative count", (command, flag, value) => {
    const result = cli(command, marshmallow, flag, value)
    expect(result.status).toBe(ExitCodes.USAGE)
    expect(result.stderr).toContain(`option '${flag} <`)
    expect(result.stderr).toContain(`a whole number ≥ 0, got "${value}"`)
  })

  it("--out naming a directory or a path in a missing directory fails at once as a usage error that says why", () => {
    const dir = mkdtempSync(join(tmpdir(), "new-user-"))
    const asDirectory = cli("compact", marshmallow, "--context-window", "16k", "--out", dir)
    expect(asDirectory.status).toBe(ExitCodes.USAGE)
    expect(asDirectory.stderr).toContain(`${dir} is a directory`)
    const missing = join(dir, "no", "such", "dir", "out.json")
    const noParent = cli("report", marshmallow, "--out", missing)
    expect(noParent.status).toBe(ExitCodes.USAGE)
    expect(noParent.stderr).toContain(`directory ${join(dir, "no", "such", "dir")} does not exist`)
    // a writable new file is fine
    writeFileSync(join(dir, "existing.html"), "old")
    const ok = cli("report", marshmallow, "--context-window", "16k", "--out", join(dir, "existing.html"))
    expect(ok.status).toBe(0)
  })

  it("--out messages go to generateText as the output says: leading system messages as instructions", async () => {
    // QA session 4: the output said "pass them as `messages` to generateText", and AI SDK 7 threw
    // InvalidPromptError "System messages are not allowed in the prompt or messages fields" (system prompt, memory records).
    const out = join(mkdtempSync(join(tmpdir(), "new-user-out-")), "compacted.json")
    const { exitCode, output } = await Compact.run(marshmallow, { contextWindow: 16_000, out }, quiet)
    expect(exitCode).toBe(0)
    const { messages } = JSON.parse(readFileSync(out, "utf8")) as { messages: Array<ModelMessage> }
    const leading = messages.findIndex((message) => message.role !== "system")
    // the trajectory's system prompt at least; every system message leads
    expect(leading).toBeGreaterThan(0)
    expect(messages.slice(leading).every((message) => message.role !== "system")).toBe(true)
    expect(output).toContain(
      `generateText({ model, instructions: messages.slice(0, ${leading}), messages: messages.slice(${leading}) })`
    )
    const prompts: Array<number> = []
    const model = new MockLanguageModelV4({
      doGenerate: async (options) => {
        prompts.push(options.prompt.length)
        return {
          content: [{ type: "text", text: "ok" }],
          finishReason: { unified: "stop", raw: "stop" },
          usage: {
            inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
            outputTokens: { total: 1, text: 1, reasoning: 0 }
          },
          warnings: []
        }
      }
    })
    await expect(generateText({ model, messages })).rejects.toThrow(/System messages are not allowed/)
    const sent = await generateText({
      model,
      instructions: messages.slice(0, leading) as Array<Extract<ModelMessage, { role: "system" }>>,
      messages: messages.slice(leading)
    })
    expect(sent.text).toBe("ok")
    expect(prompts).toEqual([messages.length])
  })

  it("a request that fits is not compacted: no stage, no checkpoint, every message sent; --force still compacts", async () => {
    // QA session 4: 'Decision: no compaction needed — 5,889 input tokens, budget 6,400' followed by a tool-output
    // trim and a checkpoint, because compact ran a threshold compaction (aimed at the low-water mark) regardless.
    const claudeCode = transcript("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    const { exitCode, output, report } = await Compact.run(claudeCode, { contextWindow: 16_000 }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.decision.compact).toBe(false)
    expect(report!.tokens.before.input).toBeLessThanOrEqual(report!.policy.inputBudgetTokens)
    expect(report!.stages).toEqual([])
    expect(report!.checkpoint).toBeNull()
    expect(report!.handoff.notSentMessages).toBe(0)
    expect(report!.tokens.after.input).toBe(report!.tokens.before.input)
    expect(output).toContain("none run: the request fits its budget")
    expect(output).not.toContain("checkpoint            applied")
    const forced = await Compact.run(claudeCode, { contextWindow: 16_000, force: true }, quiet)
    expect(forced.exitCode).toBe(0)
    expect(forced.report!.checkpoint).not.toBeNull()
  })

  it("the Decision line says how the budget was reached, and no stage name runs into its status", async () => {
    // QA session 12: 'window 128,000 · reserve 16,384' above 'budget 102,656' left 8,960 tokens unexplained (the
    // tool-loop reserve and the safety margin); at a 2K window 'reduce:toolTrim.clearInputsapplied' was one word.
    const claudeCode = transcript("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
    const { exitCode, output, report } = await Compact.run(claudeCode, { contextWindow: 2_000, model: "gpt-4o" }, quiet)
    expect(exitCode).toBe(0)
    const stated =
      /budget ([\d,]+) \(window ([\d,]+) − output reserve ([\d,]+) − tool-loop reserve ([\d,]+) − safety margin ([\d,]+)\)/.exec(
        output
      )
    expect(stated, output).not.toBeNull()
    const [budget, window, output_, toolLoop, margin] = stated!.slice(1).map((text) => Number(text.replace(/,/g, "")))
    expect(window).toBe(2_000)
    expect(budget).toBe(report!.policy.inputBudgetTokens)
    expect(window! - output_! - toolLoop! - margin!).toBe(budget)
    const stageLines = output
      .slice(output.indexOf("Stages ("))
      .split("\n")
      .slice(1, report!.stages.length + 1)
    expect(stageLines.map((line) => line.trim().split(/\s{2,}/)[0])).toEqual(report!.stages.map((stage) => stage.stage))
    expect(report!.stages.some((stage) => stage.stage.length >= 22)).toBe(true)
  })

  it("messages a sliding window drops after a pinned first ask are 'dropped', not empty messages left out by normalize", async () => {
    // QA session 4: '21 empty or reasoning-only messages in that range are left out (normalize)' — they were whole
    // turns the sliding window dropped between the pinned task (swe:2) and the newest turn. The trajectory has no
    // empty or reasoning-only message (SOURCES.md: 26 messages, each with text).
    const pydicom = transcript("swe-agent/pydicom__pydicom-1458.traj")
    const { exitCode, output, report } = await Compact.run(
      pydicom,
      { contextWindow: 8_000, engine: "sliding-window" },
      quiet
    )
    expect(exitCode).toBe(0)
    const { keptTail, notSentMessages, dropped, checkpoint } = report!.handoff
    expect(checkpoint).toBeNull()
    expect(notSentMessages).toBeGreaterThan(1)
    expect(keptTail.leftOutMessages).toBe(0)
    expect(dropped!.messages).toBe(notSentMessages)
    expect(output).not.toContain("empty or reasoning-only")
    expect(output).toContain(`Dropped: ${notSentMessages} messages`)
  })

  it("a SWE-agent run in an 8K window gets a checkpoint beside its long task, not a sliding window with no summary", async () => {
    // New-user trial s7: the pinned task (swe:2, ~1,100 tokens) and the turn in progress left the checkpoint no
    // room; the summary failed next-request-fits twice and the reduction dropped 13 of 14 turns unsummarized.
    const pydicom = transcript("swe-agent/pydicom__pydicom-1458.traj")
    const { exitCode, output, report } = await Compact.run(pydicom, { contextWindow: 8_000 }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.stages.some((stage) => stage.stage.startsWith("reduce:"))).toBe(false)
    const { checkpoint, dropped, keptUsers } = report!.handoff
    expect(checkpoint).not.toBeNull()
    expect(dropped).toBeNull()
    // the task is sent word for word between the checkpoint and the kept tail
    expect(keptUsers).toMatchObject({ messages: 1, firstEntryId: "swe:2" })
    expect(output).not.toContain("no summary stands in for them")
    expect(output).toContain("Validation: passed")
  })

  it("when even the smallest checkpoint does not fit beside the task, turns are dropped as the last resort, and the report says why in numbers", async () => {
    // 6,500 tokens: system (1,229) + task (1,132) + the last message leave ~180 tokens, less than the smallest
    // valid checkpoint of this run (goal, next step, the artifact ledger's paths and URLs)
    const pydicom = transcript("swe-agent/pydicom__pydicom-1458.traj")
    const { exitCode, output, report } = await Compact.run(pydicom, { contextWindow: 6_500 }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.handoff.checkpoint).toBeNull()
    const skipped = report!.stages.find((stage) => stage.stage === "checkpoint")!
    expect(skipped.status).toBe("skipped")
    expect(skipped.note).toMatch(/the last on next-request-fits: next request \d+ of 2600 tokens/)
    expect(report!.stages.some((stage) => stage.stage === "reduce:slidingWindow")).toBe(true)
    expect(output).toContain("no summary stands in for them")
  })

  it("--out entriesToAppend commit to a transcript store as the output says; the store's view is the request written", async () => {
    // QA session 4: the output said "append them to the transcript"; appended to the pi file they were imported as
    // unknown events and the next compact failed with InvalidInput "Duplicate entry id memory:1:pi:967:0".
    const out = join(mkdtempSync(join(tmpdir(), "new-user-store-")), "compacted.json")
    const { exitCode, output } = await Compact.run(marshmallow, { contextWindow: 16_000, out }, quiet)
    expect(exitCode).toBe(0)
    expect(output).toContain("store.commitCompaction(sessionId, entriesToAppend)")
    const written = JSON.parse(readFileSync(out, "utf8")) as {
      messages: Array<ModelMessage>
      checkpoint: { id: string } | null
      entriesToAppend: Array<never>
    }
    expect(written.checkpoint).not.toBeNull()
    const store = JsonlTranscriptStore.open({ directory: mkdtempSync(join(tmpdir(), "new-user-sessions-")) })
    const { transcript: imported } = await Import.importFilePromise(marshmallow)
    await store.append("s", imported.entries)
    await store.commitCompaction("s", written.entriesToAppend)
    const { view, checkpoint, issues } = await store.activeView("s")
    expect(issues).toEqual([])
    expect(checkpoint?.id).toBe(written.checkpoint!.id)
    expect(view.items.map((item) => item.message)).toEqual(written.messages)
  })

  it("the kept tail's count is reconciled with 'N of the transcript's messages are sent': synthesized results are named", async () => {
    // QA session 4: '900 of the transcript's 914 messages are sent' beside 'Kept tail: the newest 903 messages' —
    // 3 of the 903 are results the request adds for interrupted tool calls (pi:33, pi:234 and pi:843 end without results).
    const large = transcript("pi/large-session.jsonl")
    const { exitCode, output, report } = await Compact.run(large, {}, quiet)
    expect(exitCode).toBe(0)
    const { keptTail, transcriptMessages, notSentMessages, checkpoint } = report!.handoff
    expect(checkpoint).toBeNull()
    expect(keptTail.synthesizedMessages).toBe(3)
    expect(keptTail.messages).toBe(transcriptMessages - notSentMessages + keptTail.synthesizedMessages)
    expect(output).toContain("3 of them are results the request adds for interrupted tool calls (normalize)")
  })

  it("--out naming the transcript being read (also through a hard link) is refused; the transcript is not touched", () => {
    // QA session 4: 'compact m.traj --out m.traj' overwrote the SWE-agent trajectory with the JSON output and printed
    // "The input file was not changed."; 'report m.traj --out m.traj' replaced it with HTML.
    const dir = mkdtempSync(join(tmpdir(), "new-user-same-"))
    const input = join(dir, "session.traj")
    copyFileSync(marshmallow, input)
    const link = join(dir, "link.traj")
    linkSync(input, link)
    const original = readFileSync(marshmallow)
    for (const [command, out] of [
      ["compact", input],
      ["compact", link],
      ["report", input]
    ] as const) {
      const result = cli(command, input, "--context-window", "16k", "--out", out)
      expect(result.status).toBe(ExitCodes.USAGE)
      expect(result.stderr).toContain(`option '--out': ${out} is the transcript being read`)
      expect(readFileSync(input).equals(original)).toBe(true)
    }
  })
})
