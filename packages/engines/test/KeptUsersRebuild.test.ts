/**
 * A checkpoint that replaces one which kept covered user messages verbatim
 * (Codex's rule, `checkpoint/KeptUsers.ts`): the view rebuilt from the
 * transcript must be the view the compaction returned. Found by the 10,000-run
 * fuzz (seed -814036401): a manual compaction after the first checkpoint cut
 * among the kept user messages, covered only the first of them, named the
 * second as its first kept entry and the first as its range's end — the
 * rebuilt view brought back messages the first checkpoint had covered
 * (15 messages where the compaction returned 11).
 */
import type { Entry, Message } from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, entriesOf, results, user } from "./support.ts"

const messages: Array<Message.Message> = [
  { role: "system", content: "You are a coding agent working in /work/app." },
  user(`- - - A ${"u".repeat(289)}`),
  user(`- - - - ${"u".repeat(74)}`),
  user(`  0  0 0  ${"u".repeat(60)}`),
  user("  0  u"),
  assistant("a"),
  user(` 0 0  ${"u".repeat(344)}`),
  user(` 0  0  0  ${"u".repeat(304)}`),
  calls(
    { id: "call_0", name: "bash", input: { command: "ls dir_1" } },
    { id: "call_1", name: "bash", input: { command: "ls dir_2" } }
  ),
  results({ id: "call_0", name: "bash", text: "r".repeat(331) }),
  results({ id: "call_1", name: "bash", text: "r".repeat(331) }),
  assistant("a".repeat(590)),
  calls({ id: "call_2", name: "bash", input: { command: "ls dir_3" } }),
  results({ id: "call_2", name: "bash", text: "r".repeat(1_315) }),
  assistant('{"answer": "')
]

it("a second checkpoint cut among the first one's kept user messages rebuilds to the view it returned", async () => {
  const engine = TieredSummaryEngine.makeAsync()
  const policy = Cases.policySync({ contextWindow: 6_000, maxOutputTokens: 1_000, keepRecentTokens: 500 })
  let entries: ReadonlyArray<Entry.Entry> = entriesOf(messages)
  for (let round = 0; round < 2; round++) {
    const result = await engine.compact({ entries, policy, manual: true })
    entries = [...entries, ...result.entriesToAppend]
    const rebuilt = await engine.assembleContext({ entries, policy })
    // The request drops a trailing assistant message (no prefill); everything else is the returned view.
    const dropped = new Set((rebuilt.repairs ?? []).flatMap((edit) => (edit.op === "drop" ? [edit.entryId] : [])))
    expect(rebuilt.view.items.map((item) => item.entryId)).toEqual(
      result.view.items.map((item) => item.entryId).filter((id) => !dropped.has(id))
    )
  }
})
