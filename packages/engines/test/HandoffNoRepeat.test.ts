/**
 * Issue #11 requirement 3: nothing the verbatim tail or the pinned message
 * already carries is repeated in the checkpoint. The summarize request names
 * the kept messages (`SummarizeRequest.kept`); the offline summarizer points
 * at the pinned latest user message instead of quoting it, and the validator
 * counts what the kept messages carry (the latest ask, identifiers in the
 * user's words) as kept.
 */
import { Checkpoint, CheckpointRenderer, CheckpointValidation, type Entry, type Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { keptPointer } from "../src/checkpoint/Text.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { mergeContent } from "../src/Summarizer.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, entriesOf, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)

const ASK = "Now port the session loader to src/store/loader.ts and keep the old loader for comparison"

const session = withIds([
  user("Refactor the storage layer so the CLI and the server share one session store."),
  calls({ id: "c1", name: "write", input: { path: "src/store/index.ts", content: "x" } }),
  results({ id: "c1", name: "write", text: "wrote src/store/index.ts" }),
  assistant("Created the shared store module in src/store/index.ts."),
  user(ASK),
  calls({ id: "c2", name: "read", input: { path: "src/loader.ts" } }),
  results({ id: "c2", name: "read", text: "export const load = () => {}" })
])
const pinned = session[4]!

describe("the pinned latest user message is not repeated", () => {
  const withKept = ExtractiveSummarizer.summarizeSync({
    covered: session,
    kept: [pinned],
    maxTokens: 2_000,
    countTokens: count
  })
  const withoutKept = ExtractiveSummarizer.summarizeSync({ covered: session, maxTokens: 2_000, countTokens: count })

  it("without kept messages the checkpoint quotes the latest ask (control)", () => {
    expect(CheckpointRenderer.renderContent(withoutKept)).toContain(ASK)
  })

  it("with the ask kept verbatim after it, the checkpoint points at it by entry id and opening words and quotes the request before it", () => {
    const text = CheckpointRenderer.renderContent(withKept)
    // Only the opening words that locate it among the messages after the checkpoint, never the ask itself.
    expect(text).not.toContain("loader.ts and keep the old loader")
    const pointer = `${pinned.entryId}, kept verbatim after this checkpoint: the user message that begins "Now port the session loader to src/store…"`
    expect(withKept.goal).toContain(`The latest user request this checkpoint covers (${pointer})`)
    expect(withKept.goal).toContain("Refactor the storage layer so the CLI and the server share one session store.")
    expect(withKept.pendingUserAsks).toEqual([])
    expect(withKept.nextSteps).toContain(`Answer the latest user message this checkpoint covers (${pointer}).`)
    expect(withKept.constraints.join("\n")).not.toContain("old loader")
    expect(text.length).toBeLessThan(CheckpointRenderer.renderContent(withoutKept).length)
  })

  it("the validator counts the kept message: latest ask and its identifiers are carried", () => {
    const checkpoint = (content: Checkpoint.CheckpointContent): Checkpoint.Checkpoint => ({
      id: "checkpoint:1:e6",
      generation: 1,
      coveredRange: { fromEntryId: null, toEntryId: "e6" },
      firstKeptEntryId: "e7",
      tokensBefore: 0,
      tokensAfter: 0,
      summarizer: { kind: "extractive", promptVersion: "test" },
      content,
      createdAt: new Date(0).toISOString()
    })
    const validate = (kept: ReadonlyArray<Message.Message> | undefined) =>
      CheckpointValidation.validate({
        checkpoint: checkpoint(withKept),
        covered: session.map((item) => item.message),
        kept,
        checkpointTokens: 100,
        replacedTokens: 10_000
      })
    const carried = validate([pinned.message])
    expect(carried.ok, JSON.stringify(carried.checks)).toBe(true)
    expect(carried.checks.find((check) => check.name === "latest-user-ask")?.detail).toContain(
      "kept verbatim after the checkpoint"
    )
    // Judged without the kept message, the path only the user's pinned words name is lost.
    const alone = validate(undefined)
    expect(CheckpointValidation.failedChecks(alone)).toContain("identifier-retention")
    expect(alone.missing).toContain("identifier:src/store/loader.ts")
  })
})

describe("engine: a split turn's pinned ask appears once in the request", () => {
  it("the checkpoint of a manual compaction does not quote the pinned ask; the view carries it verbatim once", async () => {
    const messages: Array<Message.Message> = [
      { role: "system", content: "You are a coding agent." },
      user("Set up the project layout with a src and a test folder and a pnpm workspace."),
      calls({ id: "s1", name: "write", input: { path: "pnpm-workspace.yaml", content: "packages: []" } }),
      results({ id: "s1", name: "write", text: "ok" }),
      assistant("Set up the workspace."),
      user(ASK)
    ]
    for (let step = 0; step < 8; step++) {
      messages.push(calls({ id: `r${step}`, name: "read", input: { path: `src/part${step}.ts` } }))
      messages.push(results({ id: `r${step}`, name: "read", text: `${step}`.repeat(3_000) }))
    }
    const entries: Array<Entry.Entry> = entriesOf(messages)
    const engine = TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: () => [] })
    const policy = Cases.policySync({ contextWindow: 16_000, maxOutputTokens: 1_000, keepRecentTokens: 2_000 })
    const result = await engine.compact({ entries, policy, manual: true })
    expect(result.checkpoint?.content).toBeDefined()
    const checkpointText = CheckpointRenderer.render(result.checkpoint!)
    expect(checkpointText).not.toContain(ASK)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    const withAsk = result.view.items.filter((item) => JSON.stringify(item.message.content).includes(ASK))
    expect(withAsk.map((item) => item.entryId)).toEqual(["m5"])
    expect(result.checkpoint?.content?.goal).toContain(
      '(m5, kept verbatim after this checkpoint: the user message that begins "Now port the session loader to src/store…")'
    )
  })
})

describe("iterative update: the overall goal", () => {
  const goal = (text: string, done: ReadonlyArray<string> = []): Checkpoint.CheckpointContent => ({
    ...Checkpoint.emptyContent(),
    goal: text,
    progress: { done: [...done], inProgress: [], blocked: [] }
  })

  it("is carried under the newer goal while open, and said to be dropped once a done item finished it", () => {
    const open = mergeContent(
      goal("Migrate the billing service to the new queue (e1)"),
      goal("Rename the retry helper (f3)")
    )
    expect(open.goal).toBe(
      "Rename the retry helper (f3)\nOverall goal (from earlier checkpoints; still open): Migrate the billing service to the new queue (e1)"
    )
    expect(open.dropped).toEqual([])
    const finished = mergeContent(
      goal("Migrate the billing service to the new queue (e1)"),
      goal("Rename the retry helper (f3)", ["todo done: Migrate the billing service to the new queue"])
    )
    expect(finished.goal).toBe("Rename the retry helper (f3)")
    expect(finished.dropped).toEqual(["earlier goal, finished: Migrate the billing service to the new queue (e1)"])
  })
})

describe("iterative update: next steps", () => {
  const plan = ["Create the directories src/utils and src/modes", "Move the files as per the structure above"]
  const content = (goal: string, nextSteps: ReadonlyArray<string>): Checkpoint.CheckpointContent => ({
    ...Checkpoint.emptyContent(),
    goal,
    nextSteps: [...nextSteps]
  })

  it("the earlier plan survives while the newer range works on the same request", () => {
    const merged = mergeContent(
      content("Reorganize the file structure (e1)", plan),
      content("", ["Continue from the verbatim messages after this checkpoint."])
    )
    expect(merged.nextSteps).toEqual(["Continue from the verbatim messages after this checkpoint.", ...plan])
    expect(merged.dropped).toEqual([])
  })

  it("a newer task-setting request supersedes the earlier plan, and the update says it dropped it", () => {
    const merged = mergeContent(
      content("Reorganize the file structure (e1)", plan),
      content("Remove the duplicated selector code in interactive-mode.ts (f9)", ["Run the type check"])
    )
    expect(merged.nextSteps).toEqual(["Run the type check"])
    expect(merged.dropped).toEqual([
      "2 earlier next step(s), superseded by a newer request: Create the directories src/utils and src/modes"
    ])
  })
})

it("content with no kept messages is unchanged by the option (emptyContent shape intact)", () => {
  expect(Object.keys(ExtractiveSummarizer.extract([], [], new Set())).sort()).toEqual(
    Object.keys({ ...Checkpoint.emptyContent(), artifacts: [], failedApproaches: [], keyIdentifiers: [] }).sort()
  )
})

describe("keptPointer: a locator, never the kept message", () => {
  it("quotes at most half the message and at most 40 characters, cut between words", () => {
    expect(keptPointer("m1", "Refactor everything in src/")).toBe(
      'm1, kept verbatim after this checkpoint: the user message that begins "Refactor…"'
    )
    expect(keptPointer("m2", "please   rename\nthe config loader and its tests everywhere")).toBe(
      'm2, kept verbatim after this checkpoint: the user message that begins "please rename the config…"'
    )
  })

  it("a message too short to leave anything out, or one long first word, gets the entry id alone", () => {
    expect(keptPointer("m3", "continue")).toBe("m3, kept verbatim after this checkpoint")
    expect(keptPointer("m4", `${"x".repeat(90)} now`)).toBe("m4, kept verbatim after this checkpoint")
  })
})
