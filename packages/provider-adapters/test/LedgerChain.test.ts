/**
 * The cumulative artifact ledger survives every kind of checkpoint (issue
 * #11 requirement 2): offline → model-written → hook-supplied → offline, each
 * compaction of the same session keeps every file, commit and branch the
 * earlier ones recorded, and adds its own range's. The model's and the hook's
 * summaries carry no ledger of their own: the engine re-attaches it.
 */
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider"
import { Checkpoint, type Entry, type Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import { usage } from "./support/MockProvider.ts"

const turn = (k: number): Array<Message.Message> => [
  { role: "user", content: `Task ${k}: rename the handler in module ${k} and commit it` },
  {
    role: "assistant",
    content: [{ type: "tool-call", toolCallId: `r${k}`, toolName: "read", input: { path: `docs/spec${k}.md` } }]
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: `r${k}`,
        toolName: "read",
        output: { type: "text", value: `spec ${k}\n${"detail ".repeat(300)}` }
      }
    ]
  },
  {
    role: "assistant",
    content: [
      {
        type: "tool-call",
        toolCallId: `e${k}`,
        toolName: "edit",
        input: { path: `src/mod${k}.ts`, old: "a", new: "b" }
      }
    ]
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: `e${k}`,
        toolName: "edit",
        output: { type: "text", value: `Edited src/mod${k}.ts` }
      }
    ]
  },
  {
    role: "assistant",
    content: [
      { type: "tool-call", toolCallId: `c${k}`, toolName: "bash", input: { command: `git commit -am "rename ${k}"` } }
    ]
  },
  {
    role: "tool",
    content: [
      {
        type: "tool-result",
        toolCallId: `c${k}`,
        toolName: "bash",
        output: { type: "text", value: `[main ${(0xabc000 + k).toString(16)}0] rename ${k}\n 1 file changed` }
      }
    ]
  },
  { role: "assistant", content: `Renamed the handler in module ${k} and committed it.` }
]

const append = (entries: Array<Entry.Entry>, messages: ReadonlyArray<Message.Message>): void => {
  for (const message of messages) {
    const id = `m${entries.length}`
    entries.push({
      id,
      parentId: entries.at(-1)?.id ?? null,
      timestamp: new Date(0).toISOString(),
      schemaVersion: 1,
      kind: "message",
      message
    })
  }
}

/** A handoff naming the latest task of a text, without any ledger or file lists. */
const handoffOf = (text: string): Checkpoint.CheckpointContent => {
  const tasks = [...text.matchAll(/Task (\d+): rename the handler in module \d+ and commit it/g)]
  const latest = tasks.at(-1)?.[0] ?? "continue"
  return {
    ...Checkpoint.emptyContent(),
    goal: `Rename the handlers module by module; latest: ${latest}`,
    progress: { done: [`finished: ${latest}`], inProgress: [], blocked: [] },
    nextSteps: ["wait for the next task"],
    criticalContext: [`Latest user message (answered): ${latest}`]
  }
}

const promptText = (params: LanguageModelV4CallOptions): string =>
  params.prompt
    .flatMap((m) =>
      typeof m.content === "string" ? [m.content] : m.content.flatMap((p) => (p.type === "text" ? [p.text] : []))
    )
    .join("\n")

const model = new MockLanguageModelV4({
  modelId: "mock-summarizer",
  doGenerate: async (params) => ({
    content: [{ type: "text", text: JSON.stringify(handoffOf(promptText(params).split("</transcript>")[0]!)) }],
    finishReason: { unified: "stop", raw: undefined },
    usage: usage(800, 120),
    warnings: []
  })
})

const keys = (checkpoint: Checkpoint.Checkpoint | undefined): Array<string> =>
  (checkpoint?.content?.artifacts ?? []).map((a) => `${a.kind} ${a.value.split(" ")[0]} ${a.status}`)

describe("the artifact ledger is cumulative through offline, model and hook checkpoints", () => {
  it("offline → model → hook → offline: every later checkpoint keeps every earlier artifact and adds its range's", async () => {
    const policy = Cases.policySync({ contextWindow: 12_000, maxOutputTokens: 1_000, keepRecentTokens: 700 })
    const entries: Array<Entry.Entry> = []
    const engines = [
      TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: () => [], memory: { extractor: null } }),
      TieredSummaryEngine.makeAsync({
        summarizer: LanguageModelSummarizer.make({ model }),
        fallbackSummarizer: null,
        replaceBuiltInStrategies: () => [],
        memory: { extractor: null }
      }),
      TieredSummaryEngine.makeAsync({
        replaceBuiltInStrategies: () => [],
        memory: { extractor: null },
        hooks: {
          beforeCompact: [
            (event) => ({
              summary: handoffOf(
                event.coveredEntryIds
                  .map((id) => JSON.stringify((entries.find((e) => e.id === id) as Entry.MessageEntry).message))
                  .join("\n")
              )
            })
          ]
        }
      }),
      TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: () => [], memory: { extractor: null } })
    ]
    const checkpoints: Array<Checkpoint.Checkpoint> = []
    for (const [index, engine] of engines.entries()) {
      for (let k = index * 3 + 1; k <= index * 3 + 3; k++) append(entries, turn(k))
      const result = await engine.compact({ entries: [...entries], policy, manual: true })
      expect(result.failures ?? []).toEqual([])
      expect(result.checkpoint?.generation).toBe(index + 1)
      checkpoints.push(result.checkpoint!)
      entries.push(...result.entriesToAppend)
    }
    expect(checkpoints.map((c) => c.summarizer.kind)).toEqual(["extractive", "language-model", "hook", "extractive"])
    for (let index = 1; index < checkpoints.length; index++) {
      const earlier = keys(checkpoints[index - 1])
      const later = keys(checkpoints[index])
      expect(later).toEqual(expect.arrayContaining(earlier))
      expect(later.length).toBeGreaterThan(earlier.length)
    }
    // The last checkpoint lists the modules edited and committed in the ranges of all four compactions.
    const last = keys(checkpoints.at(-1))
    for (const k of [1, 4, 7])
      expect(last).toEqual(
        expect.arrayContaining([`file src/mod${k}.ts modified`, `commit ${(0xabc000 + k).toString(16)}0 committed`])
      )
    // The model's answer itself is not padded: its sections are exactly what the model wrote.
    const modelWritten = checkpoints[1]!.content!
    expect(modelWritten.identifiers).toEqual(Checkpoint.emptyContent().identifiers)
    expect(modelWritten.filesModified).toEqual([])
  })
})
