import type { Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { entriesOf } from "./support.ts"

/** Turns of an ask, a read and a large, distinct result: cheap stages trim, then a checkpoint is still needed. */
const session = (turns: number): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++) {
    messages.push(
      { role: "user", content: `Task ${turn}: inspect src/module${turn}.ts` },
      {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: `c${turn}`, toolName: "read", input: { path: `src/module${turn}.ts` } }
        ]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: `c${turn}`,
            toolName: "read",
            output: { type: "text", value: `// module ${turn}\n${`export const value${turn} = ${turn}\n`.repeat(400)}` }
          }
        ]
      },
      {
        role: "assistant",
        content: `Module ${turn} exports value${turn}. ${`It is imported by module ${turn + 1} for its startup path. `.repeat(60)}`
      }
    )
  }
  return messages
}

describe("TieredSummaryEngine entries to append", () => {
  it("records overlays only for entries the new checkpoint keeps, and the transcript rebuilds the same view", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const policy = Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000 }, "test")
    const input = { entries: entriesOf(session(30)), policy }
    const result = await engine.compact(input)
    expect(result.checkpoint).toBeDefined()
    expect(result.stages.some((stage) => stage.stage !== "checkpoint" && stage.status === "applied")).toBe(true)
    const covered = new Set<string>()
    const ids = input.entries.map((entry) => entry.id)
    const from = ids.indexOf(result.checkpoint!.firstKeptEntryId ?? ids[ids.length - 1]!)
    for (const id of ids.slice(1, from)) covered.add(id)
    for (const entry of result.entriesToAppend) {
      if (entry.kind !== "edit") continue
      const target = entry.edit.op === "insert" ? entry.edit.afterEntryId : entry.edit.entryId
      expect(covered.has(target), `edit on covered entry ${target}`).toBe(false)
    }
    const rebuilt = await engine.assembleContext({ ...input, entries: [...input.entries, ...result.entriesToAppend] })
    expect(rebuilt.messages).toEqual(result.view.items.map((item) => item.message))
  })
})
