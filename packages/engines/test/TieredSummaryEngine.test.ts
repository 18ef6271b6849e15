import { CheckpointRenderer, type ContextEngine, type Entry, Errors, type Message } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import * as Engine from "../src/Engine.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import type { Summarizer } from "../src/Summarizer.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { assistant, calls, results, user } from "./support.ts"

interface Case {
  readonly messages: Array<Message.Message>
  readonly policy: Cases.CasePolicy
}

const toEntries = (messages: ReadonlyArray<Message.Message>, prefix = "m"): Array<Entry.Entry> =>
  messages.map((message, index) => ({
    id: `${prefix}${index}`,
    parentId: index === 0 ? null : `${prefix}${index - 1}`,
    timestamp: new Date(0).toISOString(),
    schemaVersion: 1,
    kind: "message",
    message
  }))

const caseInput = (id: string) => {
  const testCase = loadCase<Case>(id)
  return { entries: toEntries(testCase.messages), policy: Cases.policySync(testCase.policy) }
}

const throwing: Summarizer = {
  name: "mock-model",
  summarize: () =>
    Effect.fail(new Errors.SummarizerFailed({ summarizer: "mock-model", reason: "fetch failed: ECONNRESET" }))
}

const noCheapStages = () => []

const pairing = (messages: ReadonlyArray<Message.Message>) => {
  const callIds: Array<string> = []
  const resultIds: Array<string> = []
  for (const message of messages) {
    if (typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type === "tool-call") callIds.push(part.toolCallId)
      if (part.type === "tool-result") resultIds.push(part.toolCallId)
    }
  }
  return { callIds, resultIds }
}

const textOf = (message: Message.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part ? part.text : "")).join("")

/** A long session: `turns` turns of a user ask, a tool call and a large result. */
const longSession = (turns: number, resultChars = 6000): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < turns; turn++) {
    messages.push(user(`Step ${turn}: inspect src/module_${turn}.ts`))
    messages.push(calls({ id: `c${turn}`, name: "read", input: { path: `src/module_${turn}.ts` } }))
    messages.push(results({ id: `c${turn}`, name: "read", text: `// module ${turn}\n${"x ".repeat(resultChars / 2)}` }))
    messages.push(assistant(`module_${turn} exports handler${turn}.`))
  }
  return messages
}

const policy = (window: number, keepRecentTokens: number) =>
  Cases.policySync({ contextWindow: window, maxOutputTokens: 2000, keepRecentTokens })

describe("TieredSummaryEngine", () => {
  it("C01: a parallel batch stays paired and the last user message is verbatim", async () => {
    const engine = TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: noCheapStages })
    const input = { ...caseInput("C01"), manual: true }
    const result = await engine.compact(input)
    const messages = result.view.items.map((item) => item.message)
    const { callIds, resultIds } = pairing(messages)
    expect(new Set(callIds)).toEqual(new Set(resultIds))
    const batch = ["call_p1", "call_p2", "call_p3", "call_p4", "call_p5", "call_p6", "call_p7"]
    const kept = batch.filter((id) => resultIds.includes(id))
    expect(kept.length === 0 || kept.length === batch.length).toBe(true)
    const lastUser = input.entries[input.entries.length - 1]!
    expect(result.view.items[result.view.items.length - 1]!.message).toBe((lastUser as Entry.MessageEntry).message)
  })

  it("C02: exactly one synthesized result for the interrupted call, also after a second pass", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = caseInput("C02")
    const first = await engine.compact({ ...input, manual: true })
    const count = (messages: ReadonlyArray<Message.Message>) =>
      pairing(messages).resultIds.filter((id) => id === "call_mig").length
    expect(count(first.view.items.map((item) => item.message))).toBe(1)
    const entries = [...input.entries, ...first.entriesToAppend]
    const assembled = await engine.assembleContext({ ...input, entries })
    expect(count(assembled.messages)).toBe(1)
    const second = await engine.compact({ ...input, entries, manual: true })
    expect(count(second.view.items.map((item) => item.message))).toBe(1)
    expect(input.entries.length).toBe(loadCase<Case>("C02").messages.length)
  })

  it("C03: one pass fits by clamping, the transcript is unchanged, a second pass needs nothing", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = caseInput("C03")
    const snapshot = JSON.stringify(input.entries)
    expect((await engine.shouldCompact(input)).compact).toBe(true)
    const result = await engine.compact(input)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    expect(JSON.stringify(input.entries)).toBe(snapshot)
    const second = await engine.shouldCompact({ ...input, entries: [...input.entries, ...result.entriesToAppend] })
    expect(second.compact).toBe(false)
    expect(second.reasons).toEqual([])
  })

  it("C05: a throwing summarizer commits nothing, reports the typed failure and still fits", async () => {
    const engine = TieredSummaryEngine.makeAsync({ summarizer: throwing, replaceBuiltInStrategies: noCheapStages })
    const input = caseInput("C05")
    const snapshot = JSON.stringify(input.entries)
    expect((await engine.shouldCompact(input)).reasons).toContain("threshold")
    const result = await engine.compact(input)
    expect(result.checkpoint).toBeUndefined()
    expect(result.entriesToAppend.some((entry) => entry.kind === "checkpoint")).toBe(false)
    expect(result.failures?.[0]).toBeInstanceOf(Errors.SummarizerFailed)
    expect(result.fits).toBe(true)
    expect(result.stages.some((stage) => stage.stage.startsWith("reduce:toolTrim"))).toBe(true)
    expect(JSON.stringify(input.entries)).toBe(snapshot)
  })

  it("C05: with the default ladder the request fits without a summary", async () => {
    const engine = TieredSummaryEngine.makeAsync({ summarizer: throwing })
    const result = await engine.compact(caseInput("C05"))
    expect(result.checkpoint).toBeUndefined()
    expect(result.fits).toBe(true)
    expect(result.failures).toBeUndefined()
  })

  it("C08: the turn in progress stays; the current call and result stay paired", async () => {
    for (const strategies of [undefined, noCheapStages]) {
      const engine = TieredSummaryEngine.makeAsync(strategies ? { strategies } : {})
      const input = { ...caseInput("C08"), manual: true }
      const result: ContextEngine.CompactionResult | Error = await engine
        .compact(input)
        .catch((error: unknown) => error as Error)
      if (result instanceof Error) {
        // Without cheap stages the 15K-token result cannot fit a 16K budget with a checkpoint: a typed error, nothing committed.
        expect(["BudgetExceeded", "ValidationFailed"]).toContain((result as { _tag?: string })._tag)
        continue
      }
      const messages = result.view.items.map((item) => item.message)
      const { callIds, resultIds } = pairing(messages)
      expect(callIds).toContain("call_dump")
      expect(resultIds).toContain("call_dump")
      expect(
        messages.some((message) => message.role === "user" && textOf(message) === "Now analyse the crash dump.")
      ).toBe(true)
    }
  })

  it("writes a validated checkpoint for a long session, placed before the tail and before the latest user message", async () => {
    const engine = TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: noCheapStages })
    const input = { entries: toEntries(longSession(12)), policy: policy(16_000, 3_000) }
    expect((await engine.shouldCompact(input)).reasons).toEqual(["threshold"])
    const result = await engine.compact(input)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    expect(result.checkpoint?.summarizer.kind).toBe("extractive")
    expect(result.after.inputTokens).toBeLessThan(result.before.inputTokens)
    const items = result.view.items
    const checkpointAt = items.findIndex((item) => item.source === "checkpoint")
    const lastUserAt = items.map((item) => item.message.role).lastIndexOf("user")
    expect(items[0]!.message.role).toBe("system")
    expect(checkpointAt).toBeGreaterThan(0)
    expect(checkpointAt).toBeLessThan(lastUserAt)
    expect(textOf(items[checkpointAt]!.message)).toContain(CheckpointRenderer.HEADER)
    const kept = items.find((item) => item.entryId === result.checkpoint!.firstKeptEntryId)
    expect(kept).toBeDefined()
    const appended = result.entriesToAppend.filter((entry) => entry.kind === "checkpoint")
    expect(appended).toHaveLength(1)
    // Re-assembling from the transcript gives the same view.
    const assembled = await engine.assembleContext({ ...input, entries: [...input.entries, ...result.entriesToAppend] })
    expect(assembled.messages.map(textOf)).toEqual(items.map((item) => textOf(item.message)))
    expect(await engine.validate(input, result)).toMatchObject({ ok: true })
  })

  it("a second compaction covers from the previous cut: every earlier kept message is kept or covered", async () => {
    const engine = TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: noCheapStages })
    const sessionPolicy = policy(16_000, 3_000)
    const first = await engine.compact({ entries: toEntries(longSession(12)), policy: sessionPolicy })
    const firstCheckpoint = first.checkpoint!
    // the first checkpoint kept covered user messages verbatim: they precede its cut, and the second compaction
    // covers them again, yet its range starts after the first one's (not at m1)
    expect(firstCheckpoint.keptUserEntryIds?.[0]).toBe("m1")
    const grown = [...toEntries(longSession(12)), ...first.entriesToAppend]
    const more = longSession(20).slice(longSession(12).length)
    const entries = [...grown, ...toEntries(more, "n")]
    const second = await engine.compact({ entries, policy: sessionPolicy })
    const secondCheckpoint = second.checkpoint!
    expect(secondCheckpoint.generation).toBe(2)
    expect(secondCheckpoint.coveredRange.fromEntryId).toBe(firstCheckpoint.firstKeptEntryId)
    const ids = entries.map((entry) => entry.id)
    const keptBefore = ids.slice(ids.indexOf(firstCheckpoint.firstKeptEntryId!)).filter((id) => id.startsWith("m"))
    const keptNow = new Set(second.view.items.map((item) => item.entryId))
    const coveredTo = ids.indexOf(secondCheckpoint.coveredRange.toEntryId)
    for (const id of keptBefore) expect(keptNow.has(id) || ids.indexOf(id) <= coveredTo).toBe(true)
    // files read in the first covered range are still listed
    expect(secondCheckpoint.content!.filesRead).toEqual(expect.arrayContaining([...firstCheckpoint.content!.filesRead]))
  })

  it("splits the turn in progress when it alone exceeds keepRecentTokens", async () => {
    const messages: Array<Message.Message> = [{ role: "system", content: "sys" }, user("Refactor everything in src/")]
    for (let step = 0; step < 10; step++) {
      messages.push(calls({ id: `s${step}`, name: "read", input: { path: `src/file_${step}.ts` } }))
      messages.push(results({ id: `s${step}`, name: "read", text: "y ".repeat(3000) }))
    }
    const engine = TieredSummaryEngine.makeAsync({ replaceBuiltInStrategies: noCheapStages })
    const input = { entries: toEntries(messages), policy: policy(16_000, 3_000) }
    const plan = await engine.plan(input)
    expect(plan.cutPoint?.splitTurn).toBe(true)
    const result = await engine.compact(input)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    // the pinned ask is not repeated in the checkpoint (issue #11 req 3): the goal points at it
    expect(CheckpointRenderer.render(result.checkpoint!)).not.toContain("Refactor everything in src/")
    // … by entry id and opening words (the next model never sees entry ids)
    expect(result.checkpoint?.content?.goal).toContain(
      '(m1, kept verbatim after this checkpoint: the user message that begins "Refactor…")'
    )
    // the user message is kept verbatim, after the checkpoint
    const roles = result.view.items.map((item) => (item.source === "checkpoint" ? "checkpoint" : item.message.role))
    expect(roles.slice(0, 3)).toEqual(["system", "checkpoint", "user"])
  })

  it("repairs once, then falls back, and never commits a summary that fails validation", async () => {
    const calls: Array<string> = []
    const bad: Summarizer = {
      name: "bad",
      summarize: (request) =>
        Effect.sync(() => {
          calls.push(request.repair ? "repair" : "first")
          return {
            content: { ...ExtractiveSummarizer.summarizeSync(request), goal: "Error: upstream model overloaded" },
            summarizer: { kind: "language-model", model: "bad", promptVersion: "test" }
          }
        })
    }
    const engine = TieredSummaryEngine.makeAsync({ summarizer: bad, replaceBuiltInStrategies: noCheapStages })
    const result = await engine.compact({ entries: toEntries(longSession(12)), policy: policy(16_000, 3_000) })
    expect(calls).toEqual(["first", "repair"])
    expect(result.checkpoint?.summarizer.kind).toBe("extractive")
    expect(result.failures?.map((failure) => failure._tag)).toEqual(["ValidationFailed", "ValidationFailed"])
  })

  it("beforeCompact hooks chain: a supplied summary is used, a cancel keeps the previous state", async () => {
    const input = { entries: toEntries(longSession(12)), policy: policy(16_000, 3_000) }
    const seen: Array<boolean> = []
    const supplying = TieredSummaryEngine.makeAsync({
      replaceBuiltInStrategies: noCheapStages,
      hooks: {
        beforeCompact: [
          (event) => ({
            summary: ExtractiveSummarizer.summarizeSync({
              covered: event.coveredEntryIds.map((id) => ({
                entryId: id,
                message: (input.entries.find((entry) => entry.id === id) as Entry.MessageEntry).message
              })),
              maxTokens: 2000,
              countTokens: (text) => Math.ceil(text.length / 4)
            })
          }),
          (event) => {
            seen.push(event.summary !== undefined)
            return undefined
          }
        ]
      }
    })
    const supplied = await supplying.compact(input)
    expect(seen).toEqual([true])
    expect(supplied.checkpoint?.summarizer.kind).toBe("hook")
    const after: Array<string> = []
    const cancelling = TieredSummaryEngine.makeAsync({
      replaceBuiltInStrategies: noCheapStages,
      hooks: {
        beforeCompact: [() => ({ cancel: true, reason: "user said no" })],
        afterCompact: [({ result }) => void after.push(result.checkpoint?.id ?? "none")]
      }
    })
    const cancelled = await cancelling.compact(input)
    expect(cancelled.checkpoint).toBeUndefined()
    expect(cancelled.stages.find((stage) => stage.stage === "checkpoint")?.note).toContain("user said no")
    expect(after).toEqual([])
  })

  it("shouldCompact reports manual, overflow and fixed-overhead reasons; recordOutcome anchors measurement", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = { entries: toEntries([user("hi"), assistant("hello")]), policy: policy(16_000, 3_000) }
    expect((await engine.shouldCompact(input)).compact).toBe(false)
    expect((await engine.shouldCompact({ ...input, manual: true })).reasons).toEqual(["manual"])
    await engine.recordOutcome(input, { inputTokens: 12_345, lastEntryId: "m1" })
    const anchored = await engine.measure(input)
    expect(anchored.method).toBe("anchored")
    expect(anchored.inputTokens).toBeGreaterThanOrEqual(12_345)
    await engine.recordOutcome(input, {
      overflow: new Errors.ContextOverflow({ provider: "test", providerMessage: "prompt is too long" })
    })
    expect((await engine.shouldCompact(input)).reasons).toContain("overflow")
    const huge = {
      entries: toEntries([{ role: "system", content: "s ".repeat(40_000) }, user("hi")]),
      policy: policy(16_000, 3_000)
    }
    const decision = await engine.shouldCompact(huge)
    expect(decision.reasons).toContain("fixed-overhead-exceeded")
    expect(decision.compact).toBe(false)
    await expect(engine.compact(huge)).rejects.toBeInstanceOf(Errors.FixedOverheadExceedsBudget)
  })
})

describe("TieredSummaryEngine with OverflowRecovery-style plans", () => {
  it("an overflow plan forces a checkpoint even when the cheap stages would fit, and honours a lower target", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = { entries: toEntries(longSession(6, 2000)), policy: policy(64_000, 1_000) }
    const plain = await engine.compact(input)
    expect(plain.checkpoint).toBeUndefined()
    const plan = await engine.plan(input)
    const lower = Math.floor(plain.after.inputTokens * 0.6)
    const forced = await engine.compact(input, { ...plan, reasons: ["overflow"], targetTokens: lower })
    expect(forced.checkpoint?.validation?.ok).toBe(true)
    expect(forced.after.inputTokens).toBeLessThanOrEqual(lower)
  })
})

/** 40 turns of an ask naming a file, a read of it and an answer. */
const fortyTurns = (): Array<Message.Message> => {
  const messages: Array<Message.Message> = [{ role: "system", content: "You are a coding agent." }]
  for (let turn = 0; turn < 40; turn++) {
    messages.push(user(`Step ${turn}: please look at src/module_${turn}.ts and fix the bug in handler${turn}`))
    messages.push(calls({ id: `c${turn}`, name: "read", input: { path: `src/module_${turn}.ts` } }))
    messages.push(results({ id: `c${turn}`, name: "read", text: `// module ${turn}\n${"x ".repeat(100)}` }))
    messages.push(assistant(`Fixed handler${turn} in src/module_${turn}.ts by checking for null.`))
  }
  return messages
}

/** A chat without tool output (like an aider history) whose asks name more files than a small window can list. */
const pathHeavyChat = (turns: number): Array<Message.Message> => {
  const messages: Array<Message.Message> = []
  for (let turn = 0; turn < turns; turn++) {
    const paths = Array.from(
      { length: 6 },
      (_, k) => `services/billing/internal/ledger_${turn}_${k}/reconciliation_worker_${turn}_${k}.go`
    )
    messages.push(user(`Turn ${turn}: review ${paths.join(", ")}`))
    messages.push(assistant(`Reviewed the ${paths.length} files of turn ${turn}; nothing to change.`))
  }
  return messages
}

const checkpointEntry = (id: string, toEntryId: string, firstKeptEntryId: string): Entry.Entry => ({
  id,
  parentId: firstKeptEntryId,
  timestamp: new Date(0).toISOString(),
  schemaVersion: 1,
  kind: "checkpoint",
  checkpoint: {
    id,
    generation: 1,
    coveredRange: { fromEntryId: null, toEntryId },
    firstKeptEntryId,
    tokensBefore: 0,
    tokensAfter: 0,
    summarizer: { kind: "imported", promptVersion: "test" },
    text: "## Goal\nAudit the billing services\n## Progress\n- PREVIOUS-CHECKPOINT-MARKER\n## Next Steps\n- continue",
    createdAt: new Date(0).toISOString()
  }
})

describe("TieredSummaryEngine falls back instead of failing", () => {
  it("a 40-turn session under a 3,000-token window gets a validated checkpoint", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const input = {
      entries: toEntries(fortyTurns()),
      policy: Cases.policySync({ contextWindow: 3000, maxOutputTokens: 500 })
    }
    expect((await engine.shouldCompact(input)).reasons).toEqual(["threshold"])
    const result = await engine.compact(input)
    expect(result.checkpoint?.validation?.ok).toBe(true)
    expect(result.checkpoint?.content?.progress.done.length).toBeGreaterThan(0)
    expect(result.fits).toBe(true)
    expect(await engine.validate(input, result)).toMatchObject({ ok: true })
  })

  it("when no checkpoint can keep the identifiers and fit, keeps the previous checkpoint and drops the oldest turns", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const head = toEntries([{ role: "system", content: "You are a code reviewer." }, ...pathHeavyChat(40)])
    // an earlier (imported) checkpoint covering the first turn; the conversation continues from m3
    // (the entry after it continues from the checkpoint, as in a transcript: the view follows parent ids)
    const entries = [
      ...head.slice(0, 4),
      { ...checkpointEntry("cp-old", "m2", "m3"), parentId: "m3" },
      { ...head[4]!, parentId: "cp-old" },
      ...head.slice(5)
    ]
    const input = { entries, policy: Cases.policySync({ contextWindow: 3000, maxOutputTokens: 500 }) }
    const result = await engine.compact(input)
    expect(result.fits).toBe(true)
    expect(result.after.inputTokens).toBeLessThanOrEqual(result.after.budgetTokens)
    expect(result.checkpoint).toBeUndefined()
    expect(result.entriesToAppend.some((entry) => entry.kind === "checkpoint")).toBe(false)
    expect(result.failures?.every((failure) => failure._tag === "ValidationFailed")).toBe(true)
    expect(result.stages.some((stage) => stage.stage === "reduce:slidingWindow" && stage.status === "applied")).toBe(
      true
    )
    // the previous checkpoint, the system prompt and the turn in progress stay; older turns went
    const items = result.view.items
    expect(
      items.some((item) => item.source === "checkpoint" && textOf(item.message).includes("PREVIOUS-CHECKPOINT-MARKER"))
    ).toBe(true)
    expect(items[0]!.message.role).toBe("system")
    const last = entries[entries.length - 1] as Entry.MessageEntry
    const lastUser = entries[entries.length - 2] as Entry.MessageEntry
    expect(items.at(-1)!.message).toBe(last.message)
    expect(items.at(-2)!.message).toBe(lastUser.message)
    expect(items.length).toBeLessThan(entries.length)
    // the edits reproduce the view from the transcript
    const assembled = await engine.assembleContext({ ...input, entries: [...entries, ...result.entriesToAppend] })
    expect(assembled.messages.map(textOf)).toEqual(items.map((item) => textOf(item.message)))
  })

  it("fails with BudgetExceeded and the numbers, not ValidationFailed, when even the window cannot fit", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const messages = [...pathHeavyChat(10), user(`Now read this: ${"word ".repeat(3000)}`)]
    const input = {
      entries: toEntries([{ role: "system", content: "sys" }, ...messages]),
      policy: Cases.policySync({ contextWindow: 3000, maxOutputTokens: 500 })
    }
    const error = await engine.compact(input).catch((failure: unknown) => failure)
    expect(error).toBeInstanceOf(Errors.BudgetExceeded)
    const exceeded = error as Errors.BudgetExceeded
    expect(exceeded.requestTokens).toBeGreaterThan(exceeded.budgetTokens)
    expect(exceeded.reason).toContain("turn in progress")
    expect(exceeded.reason).toContain(String(exceeded.requestTokens))
  })
})

describe("TieredSummaryEngine hysteresis", () => {
  /** One small agent step: a call and a short result (about 100 tokens). */
  const step = (index: number): Array<Message.Message> => [
    calls({ id: `s${index}`, name: "read", input: { path: `src/step_${index}.ts` } }),
    results({ id: `s${index}`, name: "read", text: `// step ${index}\n${"y ".repeat(150)}` })
  ]

  it("after a threshold compaction the next small steps do not trigger another one", async () => {
    const steps = 10
    const engine = TieredSummaryEngine.makeAsync()
    const sessionPolicy = policy(16_000, 3_000)
    const messages = longSession(6, 1000)
    let index = 0
    // grow step by step until the threshold triggers
    let entries = toEntries(messages)
    while (!(await engine.shouldCompact({ entries, policy: sessionPolicy })).compact)
      entries = [...entries, ...toEntries(step(index++), `g${index}-`)]
    const decision = await engine.shouldCompact({ entries, policy: sessionPolicy })
    expect(decision.reasons).toEqual(["threshold"])
    const result = await engine.compact({ entries, policy: sessionPolicy })
    const lowWater =
      decision.budget.fixedOverheadTokens + Math.floor(decision.budget.availableTokens * Engine.DEFAULT_LOW_WATER_SHARE)
    expect(result.after.inputTokens).toBeLessThanOrEqual(lowWater)
    entries = [...entries, ...result.entriesToAppend]
    const stepTokens: Array<number> = []
    for (let next = 0; next < steps; next++) {
      const before = (await engine.measure({ entries, policy: sessionPolicy })).inputTokens
      entries = [...entries, ...toEntries(step(index++), `h${next}-`)]
      const after = await engine.shouldCompact({ entries, policy: sessionPolicy })
      stepTokens.push(after.measurement.inputTokens - before)
      expect(after.compact).toBe(false)
    }
    // the steps were real growth: together more than the old "just under the threshold" margin of one step
    expect(Math.min(...stepTokens)).toBeGreaterThan(0)
    expect(stepTokens.reduce((a, b) => a + b, 0)).toBeGreaterThan(
      decision.measurement.inputTokens - decision.budget.inputBudgetTokens
    )
  })

  it("cheap stages that would stop short of the low-water mark are not applied alone: a checkpoint is written", async () => {
    const engine = TieredSummaryEngine.makeAsync()
    const sessionPolicy = policy(16_000, 3_000)
    // one large old tool result (clearing it gets under the threshold, far from the low-water mark), three small
    // recent ones (protected), then chat until the threshold triggers
    const opening: Array<Message.Message> = [
      { role: "system", content: "sys" },
      user("Read the big log"),
      calls({ id: "big", name: "read", input: { path: "logs/big.log" } }),
      results({ id: "big", name: "read", text: "z ".repeat(4000) }),
      ...[0, 1, 2].flatMap((k) => [
        calls({ id: `r${k}`, name: "read", input: { path: `src/r${k}.ts` } }),
        results({ id: `r${k}`, name: "read", text: `ok ${k}` })
      ]),
      assistant("Read them.")
    ]
    let entries = toEntries(opening)
    let turn = 0
    while (!(await engine.shouldCompact({ entries, policy: sessionPolicy })).compact) {
      entries = [
        ...entries,
        ...toEntries(
          [user(`Question ${turn}: ${"why ".repeat(60)}`), assistant(`Answer ${turn}: ${"because ".repeat(60)}`)],
          `t${turn}-`
        )
      ]
      turn++
    }
    const result = await engine.compact({ entries, policy: sessionPolicy })
    expect(result.checkpoint?.validation?.ok).toBe(true)
    expect(result.stages.find((stage) => stage.stage === "checkpoint")?.status).toBe("applied")
  })
})
