/**
 * A checkpoint written on a branch: the application rewrites an older message
 * (or the store rolls a checkpoint back), so the session continues on a branch
 * whose lineage holds an older checkpoint, or none, while the store already
 * holds higher generations. The next checkpoint must carry the store's next
 * generation (`ActiveView.nextGeneration`: max installed + 1 on every branch),
 * or the store refuses it (`CheckpointConflict`) and the agent's request fails.
 */
import { type Entry, InMemoryTranscriptStore } from "@context-engine/core"
import { generateText, type ModelMessage } from "ai"
import { describe, expect, it } from "vitest"
import { smallPolicy, tieredModel, windowedModel } from "./support/MockProvider.ts"

const WINDOW_TOKENS = 4_000

/** A user turn of about 190 o200k tokens naming its subject. */
const turn = (index: number): ModelMessage => ({
  role: "user",
  content: `Turn ${index}: review module m${index}. ${"The handler keeps its state in a map keyed by request id. ".repeat(15)}`
})

const checkpointsOf = (entries: ReadonlyArray<Entry.Entry>): Array<Entry.CheckpointEntry> =>
  entries.filter((entry): entry is Entry.CheckpointEntry => entry.kind === "checkpoint")

/** A middleware over `store` (a process that opens the session anew when given an existing store). */
const setup = (store = InMemoryTranscriptStore.open()) => {
  const provider = windowedModel({
    windowTokens: WINDOW_TOKENS,
    maxOutputTokens: 1_000,
    replies: () => ({ text: "noted" })
  })
  const model = tieredModel(provider, {
    store,
    policy: smallPolicy(WINDOW_TOKENS)
  })
  /** Sends `history` plus one new turn per step until the store holds `count` checkpoints. */
  const untilCheckpoints = async (history: Array<ModelMessage>, count: number, first: number) => {
    for (let index = first; index < first + 40; index++) {
      history.push(turn(index))
      const result = await generateText({ model, instructions: "You review code.", messages: history })
      history.push(...result.responseMessages)
      if (checkpointsOf((await store.load("s")).entries).length >= count) return index
    }
    throw new Error(`no checkpoint ${count} within 40 turns`)
  }
  return { store, untilCheckpoints }
}

describe("a checkpoint on a branch carries the store's next generation", () => {
  it("an application that rewrites its first message after a checkpoint keeps getting answers and checkpoints", async () => {
    const { store, untilCheckpoints } = setup()
    const history: Array<ModelMessage> = []
    const last = await untilCheckpoints(history, 1, 0)
    // The application edits its first message in place: the session continues on a branch from before it,
    // a lineage without the checkpoint the store holds.
    history[0] = { role: "user", content: `Turn 0 (rewritten): review module m0 only. ${"x ".repeat(10)}` }
    await untilCheckpoints(history, 2, last + 1)
    const checkpoints = checkpointsOf((await store.load("s")).entries)
    expect(checkpoints.map((entry) => entry.checkpoint.generation)).toEqual([1, 2])
    const view = await store.activeView("s")
    expect(view.checkpoint?.id).toBe(checkpoints[1]!.id)
    // The active branch starts from the rewritten message; the original stays in the transcript.
    const firstUser = (entries: ReadonlyArray<Entry.Entry>) =>
      JSON.stringify(
        (entries.find((entry) => entry.kind === "message" && entry.message.role === "user") as Entry.MessageEntry)
          .message.content
      )
    expect(firstUser(view.branch)).toContain("rewritten")
    expect(firstUser((await store.load("s")).entries)).not.toContain("rewritten")
  })

  it("after a rollback of the latest checkpoint, the next one is the store's next generation, not the restored one's + 1", async () => {
    const { store, untilCheckpoints } = setup()
    const history: Array<ModelMessage> = []
    const last = await untilCheckpoints(history, 2, 0)
    const [first, second] = checkpointsOf((await store.load("s")).entries)
    await store.rollback("s", second!.id)
    expect((await store.activeView("s")).checkpoint?.id).toBe(first!.id)
    // The next run opens the session from the store: its view holds checkpoint 1, the store generations 1 and 2.
    await setup(store).untilCheckpoints(history, 3, last + 1)
    expect(checkpointsOf((await store.load("s")).entries).map((entry) => entry.checkpoint.generation)).toEqual([
      1, 2, 3
    ])
  })
})
