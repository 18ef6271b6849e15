import type { Budget, Checkpoint } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Build from "../../src/checkpoint/Build.ts"
import * as KeptUsers from "../../src/checkpoint/KeptUsers.ts"
import * as Prepare from "../../src/checkpoint/Prepare.ts"
import { user } from "../support.ts"
import { buildInput, prepared, prepareInput, request, sessionMessages, withKeepRecent } from "./fixture.ts"

describe("Prepare.summaryCapTokens", () => {
  const budget = (availableTokens: number) => ({ availableTokens }) as Budget.Budget
  const policy = (reserveTokens: number) => ({ ...request([]).policy, reserveTokens })

  it("is 0.8 × reserveTokens (Pi), at most a quarter of the conversation budget and maxCheckpointTokens, at least 64", () => {
    expect(Prepare.summaryCapTokens(policy(1_000), budget(40_000))).toBe(800)
    expect(Prepare.summaryCapTokens(policy(10_000), budget(40_000))).toBe(2_000)
    expect(Prepare.summaryCapTokens(policy(10_000), budget(40_000), 3_000)).toBe(3_000)
    expect(Prepare.summaryCapTokens(policy(10_000), budget(1_000))).toBe(250)
    expect(Prepare.summaryCapTokens(policy(10_000), budget(100))).toBe(64)
  })
})

describe("Prepare.prepare", () => {
  it("covers the oldest turns and keeps about keepRecentTokens of the newest, originals of covered messages", () => {
    const req = withKeepRecent(request(sessionMessages(8)), 1_200)
    const prepared = Prepare.prepare(prepareInput(req))
    if (prepared._tag !== "Ready") throw new Error(prepared.note)
    // 8 turns of 4 messages after the system prompt (m0): each turn is ~540 tokens, so 1,200 keep-recent tokens
    // keep the last two whole turns (m25..m32) and cover m1..m24.
    expect(prepared.cut.splitTurn).toBe(false)
    expect(prepared.coveredEntryIds).toEqual(Array.from({ length: 24 }, (_, index) => `m${index + 1}`))
    expect(prepared.covered.map((item) => item.entryId)).toEqual(prepared.coveredEntryIds)
    expect(prepared.turnPrefix).toEqual([])
    expect(prepared.lastCoveredEntryId).toBe("m24")
    expect(prepared.firstKept?.entryId).toBe("m25")
    expect(prepared.tail.map((item) => item.entryId)).toEqual(Array.from({ length: 8 }, (_, index) => `m${index + 25}`))
    expect(prepared.pinned).toBeUndefined()
    expect(prepared.previous).toBeUndefined()
    // Codex's rule: the covered user messages (each turn's first, well under 20,000 tokens) stay verbatim
    const keptUsers = ["m1", "m5", "m9", "m13", "m17", "m21"]
    expect(prepared.keptUsers.map((item) => item.entryId)).toEqual(keptUsers)
    const coveredTokens = req.cheap.view.items
      .slice(1, 25)
      .filter((item) => !keptUsers.includes(item.entryId))
      .reduce((total, item) => total + req.measurer.messageTokens(item.message, item.source), 0)
    expect(prepared.replacedTokens).toBe(coveredTokens)
    expect(prepared.coveredFromEntryId).toBeNull()
  })

  it("hands the summarizer the original message of an entry a stage replaced", () => {
    const req = withKeepRecent(request(sessionMessages(8)), 1_200)
    const cleared = {
      ...req.cheap.view,
      items: req.cheap.view.items.map((item) =>
        item.entryId === "m3" ? { ...item, message: user("[tool output cleared]") } : item
      )
    }
    const prepared = Prepare.prepare(prepareInput(req, cleared))
    if (prepared._tag !== "Ready") throw new Error(prepared.note)
    const m3 = prepared.covered.find((item) => item.entryId === "m3")
    expect(m3?.message).toEqual(req.entries[3]!.kind === "message" ? req.entries[3]!.message : undefined)
    expect(m3?.message.role).toBe("tool")
  })

  it("says there is nothing to summarize when the kept recent window holds the whole conversation", () => {
    const req = withKeepRecent(request(sessionMessages(2)), 1_000_000)
    const prepared = Prepare.prepare(prepareInput(req))
    expect(prepared).toEqual({
      _tag: "NothingToSummarize",
      note: "nothing older than the kept recent window to summarize"
    })
  })

  it("a threshold compaction lands at the low-water mark: a lower mark keeps a smaller tail", () => {
    const req = withKeepRecent(request(sessionMessages(8)), 1_000_000)
    const at = (lowWaterTokens: number) => {
      const prepared = Prepare.prepare({ ...prepareInput(req), lowWaterTokens })
      if (prepared._tag !== "Ready") throw new Error(prepared.note)
      return prepared.tail.length
    }
    const fixed = req.budget.fixedOverheadTokens
    const cap = Prepare.summaryCapTokens(req.policy, req.budget)
    // Room for the tail = low-water − fixed overhead − summary cap: ~1,100 tokens keep 2 turns, ~2,200 keep 4.
    expect(at(fixed + cap + 1_100)).toBe(8)
    expect(at(fixed + cap + 2_200)).toBe(16)
  })

  it("a threshold compaction keeps keepRecentTokens when the low-water mark leaves more room: the landing is Pi's, not the mark", () => {
    // Same session and rooms as above: ~1,100 tokens of tail keep 2 turns (8 items), ~2,200 keep 4 (16 items).
    const tailAt = (keepRecentTokens: number, roomTokens: number) => {
      const req = withKeepRecent(request(sessionMessages(8)), keepRecentTokens)
      const lowWaterTokens =
        req.budget.fixedOverheadTokens + Prepare.summaryCapTokens(req.policy, req.budget) + roomTokens
      const prepared = Prepare.prepare({ ...prepareInput(req), lowWaterTokens })
      if (prepared._tag !== "Ready") throw new Error(prepared.note)
      return prepared.tail.length
    }
    // The mark leaves room for 4 turns; keepRecentTokens asks for 2: the tail is 2 turns (it used to fill the room).
    expect(tailAt(1_100, 2_200)).toBe(8)
    // keepRecentTokens asks for 4 turns; the mark leaves room for 2: the mark still caps the tail.
    expect(tailAt(2_200, 1_100)).toBe(8)
    expect(tailAt(2_200, 2_200)).toBe(16)
  })

  it("starts a continuing range after the previous checkpoint's range, not at a user message it kept", () => {
    const entries = ["m1", "m2", "m3", "checkpoint:1:m3", "m4", "m5"].map((id) => ({ id }))
    const previous = { coveredRange: { fromEntryId: null, toEntryId: "m3" } } as Checkpoint.Checkpoint
    // m1 was kept verbatim by the previous checkpoint and is covered again; m4/interrupted is synthesized
    const covered = ["m1", "m4/interrupted", "m4", "m5"].map((entryId) => ({ entryId }))
    const input = { entries, covered, lastCoveredEntryId: "m5", keptUsers: [], tail: [] }
    expect(KeptUsers.continuation({ ...input, previous }).coveredFromEntryId).toBe("m4")
    expect(KeptUsers.continuation({ ...input, previous: undefined }).coveredFromEntryId).toBeNull()
  })

  it("a cut among the previous checkpoint's kept user messages keeps the rest of them and its range", () => {
    // Fuzz (seed -814036401): the second checkpoint covered only m1, a user message the first one kept; it named
    // m2 as its first kept entry and m1 as its range's end, so the view rebuilt from the transcript brought back
    // m5 and m8–m10, which the first checkpoint had covered.
    const entries = ["m1", "m2", "m3", "m4", "m5", "checkpoint:1:m5", "m6", "m7"].map((id) => ({ id }))
    const previous = { coveredRange: { fromEntryId: null, toEntryId: "m5" } } as Checkpoint.Checkpoint
    const item = (entryId: string) => ({ entryId, message: user(entryId), source: "transcript" as const, editedBy: [] })
    const result = KeptUsers.continuation({
      entries,
      covered: [{ entryId: "m1" }],
      lastCoveredEntryId: "m1",
      keptUsers: [],
      tail: ["m2", "m3", "m6", "m7"].map(item),
      previous
    })
    expect(result.firstKept?.entryId).toBe("m6")
    expect(result.keptUserEntryIds).toEqual(["m2", "m3"])
    expect(result.lastCoveredEntryId).toBe("m5")
  })

  it("never ends the covered range on a synthesized view item", () => {
    const items = [{ entryId: "m1" }, { entryId: "m2" }, { entryId: "m2/interrupted" }]
    expect(Prepare.lastRealEntryId([{ id: "m1" }, { id: "m2" }], items)).toBe("m2")
  })
})

describe("Build.summaryMaxTokens", () => {
  const ready = () => {
    const { req, preparation } = prepared()
    const room = (targetTokens: number) => Build.summaryMaxTokens(buildInput(req, preparation, targetTokens))
    return { preparation, room }
  }

  it("is the cap when the request has room, and shrinks token for token with the room, to at least 64", () => {
    const { preparation, room } = ready()
    expect(room(1_000_000)).toBe(preparation.summaryCapTokens)
    const limited = room(1_500)
    expect(limited).toBeLessThan(preparation.summaryCapTokens)
    expect(limited).toBeGreaterThan(164)
    expect(room(1_400)).toBe(limited - 100)
    expect(room(0)).toBe(64)
  })
})
