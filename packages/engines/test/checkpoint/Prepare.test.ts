import type { Budget } from "@context-engine/core"
import { describe, expect, it } from "vitest"
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
    const coveredTokens = req.cheap.view.items
      .slice(1, 25)
      .reduce((total, item) => total + req.measurer.messageTokens(item.message, item.source), 0)
    expect(prepared.replacedTokens).toBe(coveredTokens)
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

  it("never ends the covered range on a synthesized view item", () => {
    const items = [{ entryId: "m1" }, { entryId: "m2" }, { entryId: "m2/interrupted" }]
    expect(Prepare.lastRealEntryId([{ id: "m1" }, { id: "m2" }], items)).toBe("m2")
  })
})

describe("Prepare.summaryMaxTokens", () => {
  const ready = () => {
    const { req, preparation } = prepared()
    const room = (targetTokens: number) => Prepare.summaryMaxTokens(buildInput(req, preparation, targetTokens))
    return { preparation, room }
  }

  it("is the cap when the request has room, and shrinks token for token with the room, to at least 64", () => {
    const { preparation, room } = ready()
    expect(room(1_000_000)).toBe(preparation.summaryCapTokens)
    const limited = room(1_400)
    expect(limited).toBeLessThan(preparation.summaryCapTokens)
    expect(limited).toBeGreaterThan(64)
    expect(room(1_300)).toBe(limited - 100)
    expect(room(0)).toBe(64)
  })
})
