import type { Entry, Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { TieredSummaryEngine } from "@context-engine/engines"
import { MockLanguageModelV4 } from "ai/test"
import { describe, expect, it } from "vitest"
import * as LanguageModelMemoryExtractor from "../src/LanguageModelMemoryExtractor.ts"

const usage = {
  inputTokens: { total: 10, noCache: 10, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 10, text: 10, reasoning: 0 }
}
const toEntries = (messages: ReadonlyArray<Message.Message>): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `e${index}`,
    parentId: index === 0 ? null : `e${index - 1}`,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))
const session = (): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "agent" }]
  for (let turn = 0; turn < 20; turn++)
    messages.push(
      {
        role: "user",
        // the later asks (~400 tokens each) fill the kept-user budget, so the first one is covered and not kept
        // verbatim: the flush reads only messages the request does not send word for word
        content: `Task ${turn}: check src/m${turn}.ts${turn === 0 ? ". Our services run on port 8443." : `. ${"The walk covers its exports and the callers that read them. ".repeat(36)}`}`
      },
      { role: "assistant", content: `Checked m${turn}. ${`Detail ${turn} of the module walk. `.repeat(200)}` }
    )
  return messages
}

describe("LanguageModelMemoryExtractor", () => {
  it("runs in the flush: keeps facts with provenance in the covered range, drops invented ids", async () => {
    const prompts: Array<string> = []
    const model = new MockLanguageModelV4({
      doGenerate: async (params) => {
        prompts.push(JSON.stringify(params.prompt))
        const facts = [
          { text: "Services run on port 8443.", scope: "environment", sourceEntryIds: ["e1"] },
          { text: "Invented fact.", scope: "decision", sourceEntryIds: ["nowhere"] }
        ]
        return {
          content: [{ type: "text", text: JSON.stringify({ facts }) }],
          finishReason: { unified: "stop", raw: undefined },
          usage,
          warnings: []
        }
      }
    })
    const engine = TieredSummaryEngine.makeAsync({
      memory: { extractor: LanguageModelMemoryExtractor.make({ model }) }
    })
    const policy = Cases.policySync({ contextWindow: 16_000, maxOutputTokens: 2_000 }, "test")
    const result = await engine.compact({ entries: toEntries(session()), policy })
    expect(result.checkpoint).toBeDefined()
    const memories = result.entriesToAppend.filter((entry): entry is Entry.MemoryEntry => entry.kind === "memory")
    expect(memories.map((entry) => entry.memory)).toEqual([
      { text: "Services run on port 8443.", scope: "environment", sourceEntryIds: ["e1"], cycle: 1 }
    ])
    expect(prompts).toHaveLength(1)
    expect(prompts[0]).toContain("[entry e1]")
    expect(prompts[0]).toContain("port 8443")
  })

  it("a failing model writes no memory and the checkpoint still commits", async () => {
    const model = new MockLanguageModelV4({
      doGenerate: async () => {
        throw new Error("model down")
      }
    })
    const engine = TieredSummaryEngine.makeAsync({
      memory: { extractor: LanguageModelMemoryExtractor.make({ model }) }
    })
    const policy = Cases.policySync({ contextWindow: 16_000, maxOutputTokens: 2_000 }, "test")
    const result = await engine.compact({ entries: toEntries(session()), policy })
    expect(result.checkpoint).toBeDefined()
    expect(result.entriesToAppend.some((entry) => entry.kind === "memory")).toBe(false)
  })
})
