import {
  Budget,
  Errors,
  Measurer,
  type Message,
  type ModelPolicy,
  PolicyRegistry,
  Tokenizers
} from "@context-engine/core"
import { Cases } from "@context-engine/core/testing"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { loadCase } from "./support/shared.ts"

interface Case {
  readonly policy: Cases.CasePolicy
  readonly messages: ReadonlyArray<Message.Message>
  readonly tools?: Record<string, { readonly description: string; readonly inputSchema: Message.JsonValue }>
}

const failure = <A, E>(effect: Effect.Effect<A, E>): E => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (!reason) throw new Error(String(exit.cause))
  return reason.error
}

/**
 * Independent approximation for the budget checks: ~4 characters per token
 * ("a helpful rule of thumb is that one token generally corresponds to ~4
 * characters of text for common English text", OpenAI tokenizer page,
 * https://platform.openai.com/tokenizer). Rounded down, so it never overstates.
 */
const approxTokens = (text: string): number => Math.floor(text.length / 4)

const reserved = (policy: ModelPolicy.ModelPolicy) =>
  policy.reserveTokens + policy.toolLoopReserveTokens + policy.safetyMarginTokens

describe("Budget.make", () => {
  const policies = fc
    .integer({ min: 3, max: 10_000_000 })
    .chain((window) => fc.tuple(fc.constant(window), fc.integer({ min: 1, max: window })))
    .map(([window, output]) =>
      PolicyRegistry.resolveSync({ model: "p", contextWindowTokens: window, maxOutputTokens: output })
    )
  const overheads = fc.record({
    systemTokens: fc.integer({ min: 0, max: 5_000_000 }),
    toolSchemaTokens: fc.integer({ min: 0, max: 5_000_000 })
  })

  it("property: follows DESIGN.md's formula window − output − tool loop − safety − fixed", () => {
    fc.assert(
      fc.property(policies, overheads, (policy, overhead) => {
        const budget = Budget.make(policy, overhead)
        expect(budget.inputBudgetTokens).toBe(policy.contextWindowTokens - reserved(policy))
        expect(budget.fixedOverheadTokens).toBe(overhead.systemTokens + overhead.toolSchemaTokens)
        expect(budget.availableTokens).toBe(
          policy.contextWindowTokens - reserved(policy) - overhead.systemTokens - overhead.toolSchemaTokens
        )
        // a validated policy always leaves input room before fixed overhead
        expect(budget.inputBudgetTokens).toBeGreaterThan(0)
      })
    )
  })

  it("property: checkFixedOverhead fails exactly when nothing is left, with the numbers", () => {
    fc.assert(
      fc.property(policies, overheads, (policy, overhead) => {
        const budget = Budget.make(policy, overhead)
        const exit = Effect.runSyncExit(Budget.checkFixedOverhead(budget, overhead))
        const fits = overhead.systemTokens + overhead.toolSchemaTokens < policy.contextWindowTokens - reserved(policy)
        expect(Exit.isSuccess(exit)).toBe(fits)
        if (!fits) {
          const error = failure(Budget.checkFixedOverhead(budget, overhead))
          expect(error.systemTokens).toBe(overhead.systemTokens)
          expect(error.toolSchemaTokens).toBe(overhead.toolSchemaTokens)
          expect(error.contextWindowTokens).toBe(policy.contextWindowTokens)
          expect(error.reservedTokens).toBe(reserved(policy))
        }
      })
    )
  })

  it("property: checkConversation fails exactly when the conversation exceeds what is left", () => {
    fc.assert(
      fc.property(policies, overheads, fc.integer({ min: 0, max: 20_000_000 }), (policy, overhead, conversation) => {
        const budget = Budget.make(policy, overhead)
        const fits =
          overhead.systemTokens + overhead.toolSchemaTokens + conversation <=
          policy.contextWindowTokens - reserved(policy)
        const exit = Effect.runSyncExit(Budget.checkConversation(budget, conversation))
        expect(Exit.isSuccess(exit)).toBe(fits)
        if (!fits) {
          const error = failure(Budget.checkConversation(budget, conversation))
          expect(error.requestTokens).toBe(overhead.systemTokens + overhead.toolSchemaTokens + conversation)
          expect(error.budgetTokens).toBe(policy.contextWindowTokens - reserved(policy))
          expect(error.requestTokens).toBeGreaterThan(error.budgetTokens)
        }
      })
    )
  })
})

describe("Budget.formula", () => {
  const base = {
    contextWindowTokens: 128_000,
    reservedOutputTokens: 16_384,
    toolLoopReserveTokens: 4_096,
    safetyMarginTokens: 4_864,
    inputBudgetTokens: 102_656
  }

  it("names each term the window budget subtracts, with en-US grouping", () => {
    expect(Budget.formula({ ...base, bindingLimit: "context-window" })).toBe(
      "window 128,000 − output reserve 16,384 − tool-loop reserve 4,096 − safety margin 4,864"
    )
  })

  it("for a provider cap or a server compaction point, names that limit (the budget plus the margin)", () => {
    expect(Budget.formula({ ...base, inputBudgetTokens: 95_136, bindingLimit: "max-input-tokens" })).toBe(
      "max input tokens 100,000 − safety margin 4,864"
    )
    expect(Budget.formula({ ...base, inputBudgetTokens: 45_136, bindingLimit: "server-compaction" })).toBe(
      "server compaction at 50,000 − safety margin 4,864"
    )
  })
})

describe("shared case C09: a budget smaller than the only message", () => {
  const c09 = loadCase<Case>("C09")
  const policy = Cases.policySync(c09.policy, "C09")
  const [message] = c09.messages
  if (!message || c09.messages.length !== 1) throw new Error("C09 should hold exactly one message")
  const text = JSON.stringify(message.content)

  it("has no fixed overhead to blame: checkFixedOverhead passes", () => {
    const budget = Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 })
    expect(
      Exit.isSuccess(Effect.runSyncExit(Budget.checkFixedOverhead(budget, { systemTokens: 0, toolSchemaTokens: 0 })))
    ).toBe(true)
    expect(budget.availableTokens).toBeLessThan(c09.policy.contextWindow)
  })

  it.each([
    ["the 4-characters-per-token approximation", approxTokens(text)],
    [
      "Measurer.make with the generic estimator",
      Measurer.make(Tokenizers.get("estimate:generic")).messageTokens(message)
    ],
    ["Measurer.make with o200k_base", Measurer.make(Tokenizers.get("o200k_base")).messageTokens(message)]
  ])("the message (%s) exceeds the budget: a typed BudgetExceeded with the numbers", (_, messageTokens) => {
    expect(messageTokens).toBeGreaterThan(c09.policy.contextWindow) // larger than the whole window, not just the budget
    const budget = Budget.make(policy, { systemTokens: 0, toolSchemaTokens: 0 })
    const error = failure(Budget.checkConversation(budget, messageTokens))
    expect(error).toBeInstanceOf(Errors.BudgetExceeded)
    expect(error.requestTokens).toBe(messageTokens)
    expect(error.budgetTokens).toBe(c09.policy.contextWindow - reserved(policy))
    expect(error.message).toContain(String(messageTokens))
    expect(error.message).toContain(String(error.budgetTokens))
  })
})

describe("shared case C04: system prompt + tool schemas over budget", () => {
  const c04 = loadCase<Case>("C04")
  const policy = Cases.policySync(c04.policy, "C04")
  const system = c04.messages.filter((message) => message.role === "system")
  const tools = Object.entries(c04.tools ?? {}).map(([name, tool]) => ({ name, ...tool }))

  const measurements = [
    [
      "the 4-characters-per-token approximation",
      {
        systemTokens: system.reduce((sum, message) => sum + approxTokens(String(message.content)), 0),
        toolSchemaTokens: tools.reduce((sum, tool) => sum + approxTokens(JSON.stringify(tool)), 0)
      }
    ],
    [
      "Measurer.make with o200k_base",
      (() => {
        const measurer = Measurer.make(Tokenizers.get("o200k_base"))
        return {
          systemTokens: system.reduce((sum, message) => sum + measurer.messageTokens(message), 0),
          toolSchemaTokens: measurer.toolSchemaTokens(tools)
        }
      })()
    ]
  ] as const

  it.each(measurements)("checkFixedOverhead fails with the numbers (%s)", (_, overhead) => {
    expect(tools.length).toBeGreaterThan(0)
    const budget = Budget.make(policy, overhead)
    const error = failure(Budget.checkFixedOverhead(budget, overhead))
    expect(error).toBeInstanceOf(Errors.FixedOverheadExceedsBudget)
    expect(error.fixedOverheadTokens).toBe(overhead.systemTokens + overhead.toolSchemaTokens)
    expect(error.systemTokens).toBe(overhead.systemTokens)
    expect(error.toolSchemaTokens).toBe(overhead.toolSchemaTokens)
    expect(error.contextWindowTokens).toBe(c04.policy.contextWindow)
    expect(error.reservedTokens).toBe(reserved(policy))
    expect(error.fixedOverheadTokens).toBeGreaterThan(error.contextWindowTokens - error.reservedTokens)
    expect(error.message).toContain(String(error.fixedOverheadTokens))
  })

  it.each(measurements)("no tool-loop reserve or safety margin could rescue it (%s)", (_, overhead) => {
    const bare = Cases.policySync(c04.policy, "C04")
    const noMargins = PolicyRegistry.resolveSync({ ...bare, toolLoopReserveTokens: 0, safetyMarginTokens: 0 })
    // the case's own statement: a 16K output reserve alone leaves too little
    expect(noMargins.reserveTokens).toBe(c04.policy.maxOutputTokens)
    const error = failure(Budget.checkFixedOverhead(Budget.make(noMargins, overhead), overhead))
    expect(error.reservedTokens).toBe(c04.policy.maxOutputTokens)
  })
})
