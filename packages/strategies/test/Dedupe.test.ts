import type { Message } from "@context-engine/core"
import { FakeMeasurer, StrategyInput } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import { Dedupe } from "../src/index.ts"
import { call, filler, result, targetOf } from "./support/views.ts"

const measurer = FakeMeasurer.make()

const read = (id: string, args: Record<string, unknown>, body: string, toolName = "read"): Array<Message.Message> => [
  { role: "assistant", content: [call(id, toolName, args)] },
  { role: "tool", content: [result(id, toolName, body)] }
]

const outputOf = (edit: { readonly message?: Message.Message }): string => {
  const part = (edit.message!.content as ReadonlyArray<Message.ToolResultPart>)[0]!
  return part.output.type === "text" ? part.output.value : ""
}

describe("Dedupe", () => {
  it("keeps the newest read of a file verbatim and replaces older reads with a reference", () => {
    const view = StrategyInput.frozenView([
      { role: "user", content: "go" },
      ...read("r1", { path: "src/a.ts" }, `v1 ${filler(3000, 1)}`),
      ...read("r2", { path: "src/b.ts" }, filler(3000, 2)),
      ...read("r3", { path: "src/a.ts" }, `v2 ${filler(3000, 3)}`),
      ...read("r4", { path: "src/a.ts" }, `v3 ${filler(3000, 4)}`),
      { role: "user", content: "next" }
    ])
    const { edits } = Dedupe.dedupe.apply(StrategyInput.make(view, measurer, 0))
    expect(edits.map(targetOf)).toEqual(["m2", "m6"])
    for (const edit of edits) {
      if (edit.op !== "replace") throw new Error("expected replace")
      expect(outputOf(edit)).toContain("call r4")
      expect(outputOf(edit)).toContain(`transcript entry ${edit.entryId}`)
    }
  })

  it("treats reads of different ranges as different", () => {
    const view = StrategyInput.frozenView([
      { role: "user", content: "go" },
      ...read("r1", { path: "a.ts", offset: 1, limit: 100 }, filler(3000, 1)),
      ...read("r2", { path: "a.ts", offset: 101, limit: 100 }, filler(3000, 2)),
      { role: "user", content: "next" }
    ])
    expect(Dedupe.dedupe.apply(StrategyInput.make(view, measurer, 0)).edits).toEqual([])
  })

  it("replaces identical outputs of any tool and honours configured keys", () => {
    const same = filler(2000, 9)
    const view = StrategyInput.frozenView([
      { role: "user", content: "go" },
      ...read("b1", { command: "npm test" }, same, "bash"),
      ...read("b2", { command: "npm test" }, same, "bash"),
      ...read("f1", { file: "x.md" }, filler(2000, 1), "fetch"),
      ...read("f2", { file: "x.md" }, filler(2000, 2), "fetch"),
      { role: "user", content: "next" }
    ])
    expect(Dedupe.dedupe.apply(StrategyInput.make(view, measurer, 0)).edits.map(targetOf)).toEqual(["m2"])
    const keyed = Dedupe.make({ keys: { fetch: "file" } }).apply(StrategyInput.make(view, measurer, 0))
    expect(keyed.edits.map(targetOf)).toEqual(["m2", "m6"])
    expect(Dedupe.make({ identicalResults: false }).apply(StrategyInput.make(view, measurer, 0)).edits).toEqual([])
  })

  it("is idempotent: a deduplicated view has nothing left to dedupe", async () => {
    const { ContextView } = await import("@context-engine/core")
    const view = StrategyInput.frozenView([
      { role: "user", content: "go" },
      ...read("r1", { path: "a.ts" }, filler(3000, 1)),
      ...read("r2", { path: "a.ts" }, filler(3000, 2)),
      { role: "user", content: "next" }
    ])
    const first = Dedupe.dedupe.apply(StrategyInput.make(view, measurer, 0))
    expect(first.edits).toHaveLength(1)
    const again = Dedupe.dedupe.apply(StrategyInput.make(ContextView.applyEdits(view, first.edits), measurer, 0))
    expect(again.edits).toEqual([])
  })
})
