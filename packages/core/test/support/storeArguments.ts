/**
 * The store-argument contract every transcript store meets (#12 req 5):
 * wrongly typed arguments fail with `InvalidInput` naming the path
 * (`[3].parentId`), never a raw `TypeError`, and nothing is written.
 */
import { expect } from "vitest"
import type { Entry } from "../../src/Entry.ts"
import type { AsyncTranscriptStore } from "../../src/TranscriptStore.ts"
import { conversation } from "./compactionFixture.ts"

const rejection = async (promise: Promise<unknown>): Promise<Record<string, unknown>> => {
  try {
    await promise
  } catch (error) {
    return error as Record<string, unknown>
  }
  throw new Error("expected a rejection")
}

/** Runs the contract on `store` in session `sessionId` (must be empty). */
export const checkStoreArguments = async (store: AsyncTranscriptStore, sessionId: string): Promise<void> => {
  const entries = conversation(4, `${sessionId}-`)
  const cases: ReadonlyArray<readonly [string, Promise<unknown>, string]> = [
    ["entries not an array", store.append(sessionId, "entries" as unknown as Array<Entry>), ""],
    ["null entry", store.append(sessionId, [entries[0]!, null as unknown as Entry]), "[1]"],
    ["number entry", store.append(sessionId, [7 as unknown as Entry]), "[0]"],
    [
      "parentId a number",
      store.append(sessionId, [...entries.slice(0, 3), { ...entries[3]!, parentId: 5 } as unknown as Entry]),
      "[3].parentId"
    ],
    [
      "timestamp missing",
      store.append(sessionId, [{ ...entries[0]!, timestamp: undefined } as unknown as Entry]),
      "[0].timestamp"
    ],
    [
      "message content a number",
      store.append(sessionId, [{ ...entries[0]!, message: { role: "user", content: 42 } } as unknown as Entry]),
      "[0].message.content"
    ],
    ["commitCompaction with a null", store.commitCompaction(sessionId, [null as unknown as Entry]), "[0]"],
    ["commitCompaction not an array", store.commitCompaction(sessionId, { length: 1 } as unknown as Array<Entry>), ""],
    [
      "installCheckpoint with a string",
      store.installCheckpoint(sessionId, "k1" as unknown as Parameters<AsyncTranscriptStore["installCheckpoint"]>[1]),
      "[0]"
    ]
  ]
  for (const [name, promise, path] of cases) {
    const error = await rejection(promise)
    expect(error, name).toMatchObject({ _tag: "InvalidInput" })
    expect(error.path, name).toBe(path)
    expect(String(error.message), name).not.toMatch(/TypeError|Cannot read/)
  }
  expect((await store.load(sessionId)).entries).toEqual([])
}
