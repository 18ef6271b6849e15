/**
 * Issue #13 req 6: rolling (windowed) compaction of line-format files
 * (`RollingCompact.ts`). (a) With a window larger than the file the rolling
 * path writes the in-memory path's `--out` (minus timings and the `rolling`
 * field) on every shared line-format transcript. (b) With small windows that
 * force several rounds: appending `entriesToAppend` to the original
 * transcript reconstructs `messages`; the request fits; tool calls and
 * results stay paired; the checkpoint passes validation; `tokens.before`, the
 * decision and the repairs are the in-memory path's; the file is unchanged.
 */
import { createHash } from "node:crypto"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { ActiveView, type Entry, type Message, ToolPairing } from "@context-engine/core"
import { LINE_FORMAT_TRANSCRIPTS, loadCase, transcript } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const dir = mkdtempSync(join(tmpdir(), "rolling-compact-"))

interface Out {
  readonly messages: Array<Message.Message>
  readonly checkpoint: { readonly validation?: { readonly ok: boolean } } | null
  readonly entriesToAppend: Array<Entry.Entry>
  readonly report: Compact.CompactReport
}

/** `--out` without wall-clock timings (`*Ms` keys) and, when asked, without the report's `rolling` field. */
const comparable = (value: unknown, dropRolling: boolean): unknown =>
  Array.isArray(value)
    ? value.map((item) => comparable(item, dropRolling))
    : value !== null && typeof value === "object"
      ? Object.fromEntries(
          Object.entries(value)
            .filter(([key]) => !key.endsWith("Ms") && !(dropRolling && key === "rolling"))
            .map(([key, item]) => [key, comparable(item, dropRolling)])
        )
      : value

const compact = async (
  file: string,
  name: string,
  options: Compact.CompactOptions
): Promise<Out & { readonly output: string }> => {
  const out = join(dir, `${name}.json`)
  const { exitCode, output } = await Compact.run(file, { ...options, out }, quiet)
  expect(exitCode, output).toBe(0)
  return { ...(JSON.parse(readFileSync(out, "utf8")) as Out), output }
}

interface C21 {
  readonly blobs: Record<string, Cases.Blob>
  readonly sourceRecords: { readonly pi: ReadonlyArray<unknown>; readonly claudeCode: ReadonlyArray<unknown> }
}

/** The shared cases' line-format sessions (C21's pi and Claude Code source records, one JSONL line each, blobs expanded). */
const caseSessions = (): Array<{ readonly name: string; readonly file: string }> => {
  const c21 = loadCase<C21>("C21")
  return (["pi", "claudeCode"] as const).map((format) => {
    const file = join(dir, `C21-${format}.jsonl`)
    const records = Cases.expandBlobs(c21.sourceRecords[format], c21.blobs) as ReadonlyArray<unknown>
    writeFileSync(file, `${records.map((record) => JSON.stringify(record)).join("\n")}\n`)
    return { name: `C21 ${format} session`, file }
  })
}

describe("rolling compaction, window larger than the file", { timeout: 300_000 }, () => {
  const sessions = [...LINE_FORMAT_TRANSCRIPTS.map((name) => ({ name, file: transcript(name) })), ...caseSessions()]
  for (const { name, file } of sessions) {
    it(`writes the in-memory path's --out: ${name}`, async () => {
      const key = name.replace(/\W/g, "-")
      const inMemory = await compact(file, `${key}-memory`, { windowMib: 0 })
      const rolling = await compact(file, `${key}-rolling`, { windowMib: 1024 })
      expect(inMemory.report.rolling).toBeNull()
      expect(rolling.report.rolling).toEqual({ windowBytes: 1024 * 1024 * 1024, rounds: 1 })
      const { output: _rollingText, ...rollingOut } = rolling
      const { output: _memoryText, ...memoryOut } = inMemory
      expect(comparable(rollingOut, true)).toEqual(comparable(memoryOut, true))
    })
  }
})

const sha = (file: string) => createHash("sha256").update(readFileSync(file)).digest("hex")

describe("rolling compaction, windows that force several rounds", { timeout: 300_000 }, () => {
  const cases = [
    { name: "pi/large-session.jsonl", windowMib: 0.0625, contextWindow: 32_000, rounds: 3 },
    { name: "pi/large-session.jsonl", windowMib: 0.25, contextWindow: 32_000, rounds: 3 },
    // the last window fits after earlier rounds compacted, and its view holds an empty assistant message and a
    // duplicate tool result: the request's repairs must be among the appended entries
    { name: "pi/large-session.jsonl", windowMib: 0.0625, contextWindow: 64_000, rounds: 3 },
    // its view after the file's own compaction is 5.9K tokens: a small window and budget make a round compact. Its
    // main branch holds 11 messages (the Task sub-agents' records are off it) and a round never ends between a Task
    // call and its result, so before the end only one window (at 6K, not 8K) is over the budget
    {
      name: "claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
      windowMib: 0.0625,
      contextWindow: 6_000,
      rounds: 2
    },
    // the session with 150 of its lines (from 30 % on) appended again: 110 tool-call ids reused 600 lines
    // later, in another segment of the meter and another window — the whole view renames each (`~2`)
    { name: "pi/large-session.jsonl", reused: true, windowMib: 0.0625, contextWindow: 32_000, rounds: 3 }
  ]
  const fileOf = (name: string, reused: boolean): string => {
    if (!reused) return transcript(name)
    const lines = readFileSync(transcript(name), "utf8").trimEnd().split("\n")
    const from = Math.floor(lines.length * 0.3)
    const file = join(dir, "reused-tool-call-ids.jsonl")
    writeFileSync(file, `${[...lines, ...lines.slice(from, from + 150)].join("\n")}\n`)
    return file
  }
  for (const { name, reused = false, windowMib, contextWindow, rounds } of cases) {
    it(`${name}${reused ? " with reused tool-call ids" : ""}, ${windowMib * 1024} KiB window, ${contextWindow / 1000}K context: the appended entries reproduce the request, which fits and is paired`, async () => {
      const file = fileOf(name, reused)
      const hash = sha(file)
      const key = `${name.replace(/\W/g, "-")}-${reused}-${windowMib}-${contextWindow}`
      const inMemory = await compact(file, `${key}-memory`, { windowMib: 0, contextWindow })
      const rolling = await compact(file, `${key}-rolling`, { windowMib, contextWindow })
      expect(sha(file)).toBe(hash)
      expect(rolling.report.rolling?.rounds).toBeGreaterThanOrEqual(rounds)
      expect(rolling.output).toContain(`rolling compaction: ${rolling.report.rolling?.rounds} rounds over windows of`)
      expect(inMemory.output).not.toContain("rolling compaction")
      // the stages' figures are the last round's, not the whole transcript's tokens before
      expect(rolling.output).toContain(
        `Stages of the last of ${rolling.report.rolling?.rounds} rounds (its window's request; least destructive first; re-measured after each)`
      )
      expect(inMemory.output).toContain("Stages (least destructive first; re-measured after each)")
      // the whole transcript, as the in-memory path saw it
      expect(rolling.report.tokens.before).toEqual(inMemory.report.tokens.before)
      expect(rolling.report.decision).toEqual(inMemory.report.decision)
      expect(rolling.report.repairs).toEqual(inMemory.report.repairs)
      expect(rolling.report.entries).toBe(inMemory.report.entries)
      // no tool call's pairing was split between the meter's segments: its sums are exact
      expect(rolling.report.warnings).toEqual(inMemory.report.warnings)
      expect(rolling.report.handoff.transcriptMessages).toBe(inMemory.report.handoff.transcriptMessages)
      // what to append to the original file reproduces the request
      const original = await Import.importFilePromise(file, { metaKeys: ["model"] })
      const view = ActiveView.reconstruct([...original.transcript.entries, ...rolling.entriesToAppend]).view
      expect(view.items.map((item) => item.message)).toEqual(rolling.messages)
      expect(rolling.entriesToAppend.filter((entry) => entry.kind === "checkpoint")).toHaveLength(1)
      // the request fits, is paired, and its checkpoint passed validation
      expect(rolling.report.fits).toBe(true)
      expect(rolling.report.tokens.after.input).toBeLessThanOrEqual(rolling.report.policy.inputBudgetTokens)
      const items = rolling.messages.map((message, index) => ({ entryId: String(index), message }))
      expect(ToolPairing.analyze(items).problems).toEqual([])
      expect(rolling.checkpoint?.validation?.ok).toBe(true)
      expect(rolling.report.checkpoint?.generation).toBeGreaterThan(1)
    })
  }
})

describe("rolling compaction, --force and --instructions", { timeout: 300_000 }, () => {
  it("apply to every round: with a budget nothing exceeds, each window is still compacted", async () => {
    const file = transcript("pi/large-session.jsonl")
    const contextWindow = 400_000
    const plain = await compact(file, "every-round-plain", { windowMib: 0.25, contextWindow })
    const forced = await compact(file, "every-round-force", { windowMib: 0.25, contextWindow, force: true })
    const instructed = await compact(file, "every-round-instructions", {
      windowMib: 0.25,
      contextWindow,
      instructions: "keep the test names"
    })
    // 974 KB in 256 KiB windows: three rounds before the end, then the last window
    expect(plain.report.rolling?.rounds).toBe(1)
    expect(forced.report.rolling?.rounds).toBe(4)
    expect(instructed.report.rolling?.rounds).toBe(4)
    expect(instructed.report.instructions).toBe("keep the test names")
    const original = await Import.importFilePromise(file, { metaKeys: ["model"] })
    for (const out of [forced, instructed]) {
      expect(out.report.decision.reasons).toEqual(["manual"])
      expect(out.checkpoint).not.toBeNull()
      const view = ActiveView.reconstruct([...original.transcript.entries, ...out.entriesToAppend]).view
      expect(view.items.map((item) => item.message)).toEqual(out.messages)
    }
  })
})

describe("rolling compaction with the sliding-window engine", { timeout: 300_000 }, () => {
  it("a window that ends inside a turn too large to keep verbatim keeps reading instead of failing the run", async () => {
    // pi/large-session at 32K: a round whose window ends inside a long tool loop cannot fit the turn in progress,
    // which the sliding window keeps verbatim (BudgetExceeded); the in-memory path never sees that turn cut
    const file = transcript("pi/large-session.jsonl")
    const options = { contextWindow: 32_000, engine: "sliding-window" } as const
    const inMemory = await compact(file, "sliding-memory", { ...options, windowMib: 0 })
    const rolling = await compact(file, "sliding-rolling", { ...options, windowMib: 0.0625 })
    expect(rolling.report.rolling?.windowBytes).toBe(64 * 1024)
    expect(rolling.report.tokens.before).toEqual(inMemory.report.tokens.before)
    expect(rolling.report.decision).toEqual(inMemory.report.decision)
    expect(rolling.report.repairs).toEqual(inMemory.report.repairs)
    const original = await Import.importFilePromise(file, { metaKeys: ["model"] })
    const view = ActiveView.reconstruct([...original.transcript.entries, ...rolling.entriesToAppend]).view
    expect(view.items.map((item) => item.message)).toEqual(rolling.messages)
    expect(rolling.report.fits).toBe(true)
    const items = rolling.messages.map((message, index) => ({ entryId: String(index), message }))
    expect(ToolPairing.analyze(items).problems).toEqual([])
  })
})

/** Call ids whose result in `messages` is the synthesized `interrupted` one (no result recorded). */
const interruptedCalls = (messages: ReadonlyArray<Message.Message>): Array<string> =>
  messages.flatMap((message) =>
    message.role === "tool" && Array.isArray(message.content)
      ? message.content.flatMap((part) =>
          part.type === "tool-result" && JSON.stringify(part.output).includes(ToolPairing.INTERRUPTED_RESULT_TEXT)
            ? [part.toolCallId]
            : []
        )
      : []
  )

describe("rolling compaction, a window that ends between a tool call and its result", { timeout: 300_000 }, () => {
  // pi/large-session.jsonl's first 300,000 bytes: at a 0.1 MiB window the first round's window ends after the call
  // of pi:127 and before its result (pi:128), which the file records
  it("sends the recorded result, not an interrupted one, and reports no message dropped", async () => {
    const file = join(dir, "large-session-300k.jsonl")
    writeFileSync(file, readFileSync(transcript("pi/large-session.jsonl")).subarray(0, 300_000))
    const inMemory = await compact(file, "split-pair-memory", { windowMib: 0, contextWindow: 32_000 })
    const rolling = await compact(file, "split-pair-rolling", { windowMib: 0.1, contextWindow: 32_000 })
    expect(rolling.report.rolling?.rounds).toBeGreaterThan(1)
    expect(interruptedCalls(rolling.messages)).toEqual(interruptedCalls(inMemory.messages))
    expect(rolling.report.handoff.dropped).toBeNull()
    expect(rolling.report.handoff.keptTail.synthesizedMessages).toBe(
      inMemory.report.handoff.keptTail.synthesizedMessages
    )
  })
})

describe("rolling compaction, --window-mib on a JSON document", { timeout: 300_000 }, () => {
  it("is read whole and the report says the window did not apply", async () => {
    const out = await compact(transcript("swe-agent/pydicom__pydicom-1458.traj"), "window-on-json", { windowMib: 1 })
    expect(out.report.rolling).toBeNull()
    expect(out.report.warnings).toContainEqual(
      "--window-mib 1 does not apply: a swe-agent transcript is one JSON document, read whole (rolling compaction reads line-format files: pi and Claude Code JSONL, console logs, Aider history)"
    )
    expect(out.output).toContain("warning: --window-mib 1 does not apply")
  })
})

describe("rolling compaction's window, given programmatically", () => {
  it("a window that is not a size ≥ 0 is a usage error naming the value, before any work", async () => {
    const file = transcript("pi/before-compaction.jsonl")
    for (const windowMib of [Number.NaN, -1, Number.POSITIVE_INFINITY]) {
      const { exitCode, output } = await Compact.run(file, { windowMib }, quiet)
      expect({ windowMib, exitCode }).toEqual({ windowMib, exitCode: 3 })
      expect(output).toContain(`option '--window-mib': expected a size in MiB ≥ 0 (e.g. 8 or 0.25), got ${windowMib}`)
    }
  })
})
