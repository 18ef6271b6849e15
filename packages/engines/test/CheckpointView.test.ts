import { ActiveView, type Checkpoint, type Entry } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as CheckpointView from "../src/CheckpointView.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const header = (id: string, parentId: string | null) => ({
  id,
  parentId,
  timestamp: "2026-03-01T00:00:00.000Z",
  schemaVersion: 1 as const
})

const message = (id: string, parentId: string | null, role: "user" | "assistant", text: string): Entry.Entry => ({
  ...header(id, parentId),
  kind: "message",
  message: { role, content: text }
})

const checkpoint = (id: string, parentId: string, generation: number, through: string, firstKept: string) => {
  const body: Checkpoint.Checkpoint = {
    id,
    generation,
    coveredRange: { fromEntryId: null, toEntryId: through },
    firstKeptEntryId: firstKept,
    tokensBefore: 1000,
    tokensAfter: 100,
    summarizer: { kind: "extractive", promptVersion: "test" },
    text: `summary ${id}: everything through ${through}`,
    createdAt: "2026-03-01T00:00:00.000Z"
  }
  return { ...header(id, parentId), kind: "checkpoint", checkpoint: body } as const satisfies Entry.Entry
}

/** Two checkpoints, then a rollback of the second appended (as the transcript store does). */
const entries: Array<Entry.Entry> = [
  message("u1", null, "user", "first task"),
  message("a1", "u1", "assistant", "done first"),
  message("u2", "a1", "user", "second task"),
  checkpoint("cp1", "u2", 1, "a1", "u2"),
  message("a2", "cp1", "assistant", "done second"),
  message("u3", "a2", "user", "third task"),
  checkpoint("cp2", "u3", 2, "a2", "u3"),
  {
    ...header("rb", "cp2"),
    kind: "event",
    event: { name: ActiveView.ROLLBACK_EVENT, data: { checkpointEntryId: "cp2" } }
  }
]

describe("CheckpointView", () => {
  it("builds on the same checkpoint as the transcript store: a rolled-back checkpoint is not used", () => {
    const storeView = ActiveView.reconstruct(entries)
    const engineView = CheckpointView.fromEntries(entries)
    expect(storeView.checkpoint?.id).toBe("cp1")
    expect(engineView.checkpointEntry?.id).toBe("cp1")
    // the messages cp2 had covered are back in the engine's view
    expect(engineView.conversation.map((item) => item.entryId)).toEqual(["u2", "a2", "u3"])
  })

  it("without the rollback, both use the latest checkpoint", () => {
    const withoutRollback = entries.slice(0, -1)
    expect(ActiveView.reconstruct(withoutRollback).checkpoint?.id).toBe("cp2")
    expect(CheckpointView.fromEntries(withoutRollback).checkpointEntry?.id).toBe("cp2")
  })

  it("the tiered engine assembles the rolled-back session on the earlier checkpoint", async () => {
    const engine = TieredSummaryEngine.make()
    const policy = Cases.policySync({ contextWindow: 32_000, maxOutputTokens: 4_000 }, "test")
    const assembled = await Effect.runPromise(engine.assembleContext({ entries, policy }))
    const checkpointItems = assembled.view.items.filter((item) => item.source === "checkpoint")
    expect(checkpointItems.map((item) => item.entryId)).toEqual(["cp1"])
    expect(assembled.view.items.map((item) => item.entryId)).toContain("a2")
  })
})
