/**
 * `Measurement.fromCounts` is the one home of the measurement-from-counts
 * arithmetic that Measurer, FakeMeasurer, UsageScale, FrozenPrefix and the
 * stage pipeline each wrote by hand. These properties compare it with those
 * hand-written forms (copied here as they stood in f5aa646) on random counts,
 * field by field and in key order (JSON output and reports print it).
 */
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Measurement from "../src/Measurement.ts"

type Counts = { -readonly [K in Measurement.Category]: number }

const counts = fc.record(
  Object.fromEntries(Measurement.categories.map((category) => [category, fc.integer({ min: 0, max: 2_000_000 })])) as {
    [K in Measurement.Category]: fc.Arbitrary<number>
  }
) as fc.Arbitrary<Counts>

const budget = fc.oneof(fc.integer({ min: 0, max: 4_000_000 }), fc.constant(Number.POSITIVE_INFINITY))
const notes = fc.option(fc.array(fc.string({ maxLength: 12 }), { minLength: 1, maxLength: 3 }), { nil: undefined })
const method = fc.constantFrom<Measurement.Method>("exact", "estimate", "anchored")

// The literal both measurers wrote (f5aa646), in its key order
const literal = (
  byCategory: Counts,
  inputTokens: number,
  budgetTokens: number,
  how: Measurement.Method,
  noted?: Array<string>
) => ({
  byCategory,
  inputTokens,
  totalTokens: inputTokens + byCategory.reservedOutput,
  budgetTokens,
  headroomTokens: budgetTokens - inputTokens,
  method: how,
  tokenizer: "o200k_base",
  ...(noted !== undefined && noted.length > 0 ? { notes: noted } : {})
})

// Measurer.measure: the input categories summed in order, notes only when some
const measurerForm = (byCategory: Counts, budgetTokens: number, how: Measurement.Method, noted?: Array<string>) => {
  let inputTokens = 0
  for (const category of Measurement.categories.filter((c) => c !== "reservedOutput"))
    inputTokens += byCategory[category]
  return literal(byCategory, inputTokens, budgetTokens, how, noted)
}

// FakeMeasurer: the sum of every category less reservedOutput
const fakeForm = (byCategory: Counts, budgetTokens: number) =>
  literal(
    byCategory,
    Object.values(byCategory).reduce((total, value) => total + value, 0) - byCategory.reservedOutput,
    budgetTokens,
    "estimate"
  )

// FrozenPrefix.withDelta / UsageScale / Pipeline (f5aa646): a previous measurement with its counts replaced
const deltaForm = (before: Measurement.Measurement, change: Counts) => {
  const byCategory = { ...before.byCategory } as Counts
  let inputTokens = 0
  for (const category of Measurement.categories) {
    byCategory[category] += change[category]
    if (category !== "reservedOutput") inputTokens += byCategory[category]
  }
  return {
    ...before,
    byCategory,
    inputTokens,
    totalTokens: inputTokens + byCategory.reservedOutput,
    headroomTokens: before.budgetTokens - inputTokens
  }
}

const same = (actual: unknown, expected: unknown) => {
  expect(actual).toStrictEqual(expected)
  expect(Object.keys(actual as object)).toEqual(Object.keys(expected as object))
}

describe("Measurement.fromCounts", () => {
  it("equals the measurer's hand arithmetic, notes included only when given", () => {
    fc.assert(
      fc.property(counts, budget, method, notes, (byCategory, budgetTokens, how, noted) => {
        same(
          Measurement.fromCounts(byCategory, { budgetTokens, method: how, tokenizer: "o200k_base", notes: noted }),
          measurerForm(byCategory, budgetTokens, how, noted)
        )
      }),
      { numRuns: 500 }
    )
  })

  it("equals the fake measurer's sum-less-reserved arithmetic", () => {
    fc.assert(
      fc.property(counts, budget, (byCategory, budgetTokens) => {
        same(
          Measurement.fromCounts(byCategory, { budgetTokens, method: "estimate", tokenizer: "o200k_base" }),
          fakeForm(byCategory, budgetTokens)
        )
      }),
      { numRuns: 500 }
    )
  })

  it("replacing a previous measurement's counts keeps its budget, method, tokenizer, notes and key order", () => {
    fc.assert(
      fc.property(counts, counts, budget, method, notes, (start, change, budgetTokens, how, noted) => {
        const before = measurerForm(start, budgetTokens, how, noted)
        const byCategory = { ...before.byCategory }
        for (const category of Measurement.categories) byCategory[category] += change[category]
        same(Measurement.fromCounts(byCategory, before), deltaForm(before, change))
      }),
      { numRuns: 500 }
    )
  })

  it("worked example: input excludes the reserved output, headroom goes negative over budget", () => {
    const byCategory = { ...Measurement.zeroCounts(), system: 100, userText: 250, framing: 7, reservedOutput: 4096 }
    const measurement = Measurement.fromCounts(byCategory, { budgetTokens: 300, method: "exact", tokenizer: "t" })
    expect(measurement).toMatchObject({ inputTokens: 357, totalTokens: 4453, headroomTokens: -57 })
    expect("notes" in measurement).toBe(false)
  })
})
