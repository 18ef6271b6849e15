import { describe, expect, it } from "vitest"
import * as ContextView from "../src/ContextView.ts"
import { categories } from "../src/Measurement.ts"
import * as Measurer from "../src/Measurer.ts"
import type { Message } from "../src/Message.ts"
import * as ReasoningTokens from "../src/ReasoningTokens.ts"
import * as Tokenizers from "../src/Tokenizers.ts"
import * as UsageScale from "../src/UsageScale.ts"
import { piMessages } from "./support/piTranscript.ts"

const o200k = Tokenizers.get("o200k_base")

/** `inner` with its `measure` calls counted; `copy` returns a copy of each measurement (a foreign measurer). */
const spied = (inner: Measurer.Measurer, copy = false) => {
  const spy = {
    ...inner,
    calls: 0,
    measure: (view: ContextView.ContextView, options?: Parameters<Measurer.Measurer["measure"]>[1]) => {
      spy.calls++
      const measurement = inner.measure(view, options)
      return copy ? { ...measurement } : measurement
    }
  }
  return spy
}

describe("UsageScale.scaled", () => {
  const view = ContextView.fromMessages(piMessages().slice(0, 200))
  // The provider's number for the first 151 messages (~96K by o200k): plausible, i.e. above half the local count,
  // which the measurer would otherwise raise to (UsageScale.RATIO_BOUNDS).
  const anchor = { inputTokens: 100_000, lastEntryId: "m150" }
  const usage = { ratio: 1.3, lastEntryId: "m150" }

  it("an anchored measurement is usage + ratio × the local count of what followed, from one measurement of the view", () => {
    const inner = Measurer.make(o200k)
    // The items after the anchor, each counted at its position in the view (reasoning before the current tool loop
    // counts as prior).
    const loopStart = ReasoningTokens.currentLoopStart(view.items, (item) => item.message)
    expect(loopStart).toBeGreaterThan(150)
    let suffix = 0
    for (let index = 151; index < view.items.length; index++) {
      const item = view.items[index]!
      suffix += inner.messageTokens(item.message, item.source, index < loopStart ? "prior" : "current")
    }
    expect(suffix).toBeGreaterThan(1_000)

    const spy = spied(inner)
    const measurement = UsageScale.scaled(spy, usage).measure(view, { anchor })
    expect(spy.calls).toBe(1)
    expect(measurement.method).toBe("anchored")
    // Rounded per category.
    expect(Math.abs(measurement.inputTokens - (100_000 + 1.3 * suffix))).toBeLessThanOrEqual(categories.length)
  })

  it("a measurer that does not record its anchored suffix gets the same numbers (measured again)", () => {
    const foreign = spied(Measurer.make(o200k), true)
    const viaForeign = UsageScale.scaled(foreign, usage).measure(view, { anchor })
    expect(foreign.calls).toBe(3) // the view with the anchor, the items after it alone, the view with no items
    expect(viaForeign).toEqual(UsageScale.scaled(Measurer.make(o200k), usage).measure(view, { anchor }))
  })

  it("the anchor is found at the end of the view and anywhere before it", () => {
    const last = view.items.at(-1)!.entryId
    expect(UsageScale.locate(view, { inputTokens: 1, lastEntryId: last }).index).toBe(199)
    expect(UsageScale.locate(view, { inputTokens: 1, lastEntryId: "m0" }).index).toBe(0)
    expect(UsageScale.locate(view, { inputTokens: 1, lastEntryId: "m150" }).index).toBe(150)
    expect(UsageScale.locate(view, { inputTokens: 1, lastEntryId: "m200" }).index).toBe(-1)
  })
})

describe("UsageScale.ratioFor", () => {
  it("takes the local count of the view the request was built from as it was measured for it (no second count)", () => {
    const messages = structuredClone(piMessages().slice(0, 120)) as Array<Message>
    const view = ContextView.fromMessages(messages)
    const measurer = Measurer.make(o200k)
    const sent = measurer.measure(view).inputTokens
    const usage = { inputTokens: Math.round(sent * 1.2), lastEntryId: view.items.at(-1)!.entryId }
    expect(UsageScale.ratioFor(measurer, view, usage)?.ratio).toBe(usage.inputTokens / sent)

    // A message edited in place while the request was out: the usage describes the request as sent.
    const part = messages
      .flatMap((message) =>
        typeof message.content === "string" ? [] : (message.content as Array<{ type: string; text?: string }>)
      )
      .find((candidate) => candidate.type === "text") as { text: string }
    part.text += " and a long addition, edited in place after the request went out".repeat(8)
    expect(UsageScale.ratioFor(measurer, view, usage)?.ratio).toBe(usage.inputTokens / sent)
    // The next measurement sees the edit, and a ratio for that request uses it.
    const now = measurer.measure(view).inputTokens
    expect(now).toBeGreaterThan(sent)
    expect(UsageScale.ratioFor(measurer, view, usage)?.ratio).toBe(usage.inputTokens / now)
    // A view this measurer did not measure, or a prefix of it, is counted.
    expect(UsageScale.ratioFor(Measurer.make(o200k), view, usage)?.ratio).toBe(usage.inputTokens / now)
    const prefix = Measurer.make(o200k, { cache: false }).measure({ ...view, items: view.items.slice(0, 100) })
    const prefixUsage = { inputTokens: Math.round(prefix.inputTokens * 1.1), lastEntryId: view.items[99]!.entryId }
    expect(UsageScale.ratioFor(measurer, view, prefixUsage)?.ratio).toBe(prefixUsage.inputTokens / prefix.inputTokens)
  })
})
