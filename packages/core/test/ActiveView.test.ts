import { describe, expect, it } from "vitest"
import * as ActiveView from "../src/ActiveView.ts"
import type * as Checkpoint from "../src/Checkpoint.ts"
import * as CheckpointRenderer from "../src/CheckpointRenderer.ts"
import type * as Entry from "../src/Entry.ts"

const header = (id: string, parentId: string | null) => ({
  id,
  parentId,
  timestamp: "2026-03-01T00:00:00.000Z",
  schemaVersion: 1 as const
})

const message = (
  id: string,
  parentId: string | null,
  role: "user" | "assistant" | "system",
  text: string
): Entry.Entry => ({ ...header(id, parentId), kind: "message", message: { role, content: text } })

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

const ids = (active: ActiveView.ActiveView) => active.view.items.map((item) => item.entryId)

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

describe("ActiveView.reconstruct: the checkpoint", () => {
  it("a rolled-back checkpoint is not used; the messages it covered are back", () => {
    const active = ActiveView.reconstruct(entries)
    expect(active.checkpoint?.id).toBe("cp1")
    expect(active.conversation.map((item) => item.entryId)).toEqual(["u2", "a2", "u3"])
    expect(active.skippedCheckpoints).toEqual([{ entryId: "cp2", reason: ActiveView.ROLLED_BACK }])
    expect(active.nextGeneration).toBe(3)
  })

  it("without the rollback, the latest checkpoint; it is rendered by the one renderer, reference only", () => {
    const active = ActiveView.reconstruct(entries.slice(0, -1))
    expect(active.checkpoint?.id).toBe("cp2")
    expect(ids(active)).toEqual(["cp2", "u3"])
    const rendered = active.view.items[0]!
    expect(rendered.source).toBe("checkpoint")
    expect(rendered.message).toEqual(CheckpointRenderer.toMessage(active.checkpoint!.checkpoint))
    expect(JSON.stringify(rendered.message)).toContain(CheckpointRenderer.HEADER.slice(1, 40))
  })

  it("pins the latest user message verbatim when the checkpoint covered it", () => {
    const covered = [
      message("sys", null, "system", "be brief"),
      message("u1", "sys", "user", "the ask"),
      message("a1", "u1", "assistant", "step one"),
      message("a2", "a1", "assistant", "step two"),
      checkpoint("cp", "a2", 1, "a1", "a2")
    ]
    const active = ActiveView.reconstruct(covered)
    expect(ids(active)).toEqual(["sys", "cp", "u1", "a2"])
    expect(active.view.items[2]!.message).toEqual({ role: "user", content: "the ask" })
  })

  it("pins the user's latest words, not a slash command after them, as the cut point does (C21)", () => {
    // the cut point covers user-role data after the user's words and pins the words (Turns.latestUserIndex);
    // the rebuilt view must pin the same message, or store view and returned view disagree
    const covered = [
      message("u1", null, "user", "fix the failing test"),
      message("c1", "u1", "user", "/compact"),
      message("a1", "c1", "assistant", "working"),
      checkpoint("cp", "a1", 1, "c1", "a1")
    ]
    const active = ActiveView.reconstruct(covered)
    expect(ids(active)).toEqual(["cp", "u1", "a1"])
  })
})

describe("ActiveView.branch", () => {
  // The app rewrote its last user message: u2 was abandoned, u2b continues from a1.
  const rewritten: Array<Entry.Entry> = [
    message("u1", null, "user", "first"),
    message("a1", "u1", "assistant", "answer"),
    message("u2", "a1", "user", "original ask"),
    message("a2", "u2", "assistant", "answer to the original"),
    message("u2b", "a1", "user", "rewritten ask")
  ]

  it("follows parentId from the leaf: the abandoned version is not in the view", () => {
    expect(ActiveView.branch(rewritten).map((entry) => entry.id)).toEqual(["u1", "a1", "u2b"])
    expect(ids(ActiveView.reconstruct(rewritten))).toEqual(["u1", "a1", "u2b"])
  })

  it("a leaf id selects another branch", () => {
    expect(ids(ActiveView.reconstruct(rewritten, { leafId: "a2" }))).toEqual(["u1", "a1", "u2", "a2"])
  })

  it("edits on another branch do not apply", () => {
    const withEdit: Array<Entry.Entry> = [
      ...rewritten.slice(0, 4),
      {
        ...header("edit", "a2"),
        kind: "edit",
        edit: {
          op: "replace",
          entryId: "a1",
          strategy: "test",
          reason: "r",
          message: { role: "assistant", content: "X" }
        }
      },
      message("u2b", "a1", "user", "rewritten ask")
    ]
    const active = ActiveView.reconstruct(withEdit)
    expect(active.view.items.map((item) => item.message.content)).toEqual(["first", "answer", "rewritten ask"])
  })

  it("a linear log is one branch whatever its parent ids say (null or unknown parents continue the previous entry)", () => {
    const loose = [
      message("x", null, "user", "a"),
      message("y", null, "assistant", "b"),
      message("z", "gone", "user", "c")
    ]
    expect(ActiveView.branch(loose)).toBe(loose)
  })

  it("beforeCheckpointId shows the branch as it was before that checkpoint", () => {
    const active = ActiveView.reconstruct(entries, { beforeCheckpointId: "cp2" })
    expect(active.checkpoint?.id).toBe("cp1")
    expect(ids(active)).toEqual(["cp1", "u2", "a2", "u3"])
  })
})
