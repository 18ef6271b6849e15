import type { ContextEngine, Entry, Message, ModelPolicy } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { describe, expect, it } from "vitest"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"
import { entriesOf } from "./support.ts"

interface Scenario {
  readonly id: string
  readonly take?: number
  readonly append?: Array<Message.Message>
  readonly nextUserMessage?: Message.Message
}
interface Case {
  readonly messages: Array<Message.Message>
  readonly policy: Cases.CasePolicy
  readonly provider: { readonly model: string; readonly supportsAssistantPrefill: boolean }
  readonly scenarios: ReadonlyArray<Scenario>
}

const c15 = loadCase<Case>("C15")
const noPrefill: ModelPolicy.ModelPolicy = {
  ...Cases.policySync(c15.policy, c15.provider.model),
  assistantPrefill: c15.provider.supportsAssistantPrefill
}
const withPrefill: ModelPolicy.ModelPolicy = Cases.policySync(c15.policy, "prefill-model")

const scenario = (id: string): { scenario: Scenario; messages: Array<Message.Message> } => {
  const found = c15.scenarios.find((candidate) => candidate.id === id)!
  return {
    scenario: found,
    messages: [...c15.messages.slice(0, found.take ?? c15.messages.length), ...(found.append ?? [])]
  }
}

/** Compacts when the engine says so (or when `manual`), then assembles from the entries the engine appended. */
const compactThenAssemble = async (
  entries: Array<Entry.Entry>,
  policy: ModelPolicy.ModelPolicy,
  manual = false,
  options: TieredSummaryEngine.Options = {}
) => {
  const engine = TieredSummaryEngine.makeAsync(options)
  const input: ContextEngine.EngineInput = { entries, policy, ...(manual ? { manual } : {}) }
  const decision = await engine.shouldCompact(input)
  const result = decision.compact ? await engine.compact(input) : undefined
  const after = [...entries, ...(result?.entriesToAppend ?? [])]
  return { engine, decision, result, after, assembled: await engine.assembleContext({ entries: after, policy }) }
}

const endsOnUserOrTool = (messages: ReadonlyArray<Message.Message>) =>
  expect(["user", "tool"]).toContain(messages.at(-1)!.role)

const noSyntheticAssistant = (appended: ReadonlyArray<Entry.Entry>) => {
  for (const entry of appended) if (entry.kind === "message") expect(entry.message.role).not.toBe("assistant")
}

describe("C15: the request ends on a user message or tool result", () => {
  it("C15 A: compaction at the start of a turn keeps the latest ask last and verbatim, the checkpoint before it", async () => {
    const { messages } = scenario("A")
    // With the built-in stages (they suffice here) and without them (a checkpoint is written).
    for (const options of [{}, { replaceBuiltInStrategies: () => [] }]) {
      const { decision, result, assembled } = await compactThenAssemble(entriesOf(messages), noPrefill, false, options)
      expect(decision.compact).toBe(true)
      noSyntheticAssistant(result!.entriesToAppend)
      expect(assembled.messages.at(-1)).toEqual(messages.at(-1))
      expect(assembled.repairs ?? []).toEqual([])
      if ("replaceBuiltInStrategies" in options) {
        expect(result!.checkpoint).toBeDefined()
        const checkpointAt = assembled.view.items.findIndex((item) => item.source === "checkpoint")
        expect(checkpointAt).toBeGreaterThanOrEqual(0)
        expect(checkpointAt).toBeLessThan(assembled.view.items.length - 1)
      }
    }
  })

  it("C15 B: inside a tool loop the request ends on the tool result, right after its call", async () => {
    const { messages } = scenario("B")
    const { result, assembled } = await compactThenAssemble(entriesOf(messages), noPrefill)
    noSyntheticAssistant(result?.entriesToAppend ?? [])
    const last = assembled.messages.at(-1)!
    expect(last).toEqual(messages.at(-1))
    const call = assembled.messages.at(-2)!
    expect(call.role).toBe("assistant")
    expect(JSON.stringify(call.content)).toContain('"toolCallId":"c_rv"')
  })

  it("C15 C: a trailing prefill is dropped and reported for this provider, kept where prefill is supported", async () => {
    const { messages } = scenario("C")
    const entries = entriesOf(messages)
    const frozen = structuredClone(entries)
    const engine = TieredSummaryEngine.makeAsync()
    const assembled = await engine.assembleContext({ entries, policy: noPrefill })
    endsOnUserOrTool(assembled.messages)
    const prefillId = entries.at(-1)!.id
    expect(assembled.repairs).toEqual([
      expect.objectContaining({ op: "drop", entryId: prefillId, strategy: "request-shape" })
    ])
    expect(assembled.repairs![0]!.reason).toContain("claude-opus-4-6 does not support assistant prefill")
    expect(entries).toEqual(frozen)

    const supported = await TieredSummaryEngine.makeAsync().assembleContext({ entries, policy: withPrefill })
    expect(supported.messages.at(-1)).toEqual(messages.at(-1))
    expect(supported.repairs ?? []).toEqual([])
  })

  it("C15 D: a manual /compact adds no acknowledgement; the next request ends on the new ask, verbatim", async () => {
    const { scenario: d, messages } = scenario("D")
    expect(messages.at(-1)!.role).toBe("assistant")
    const { result, after, assembled } = await compactThenAssemble(entriesOf(messages), noPrefill, true)
    noSyntheticAssistant(result?.entriesToAppend ?? [])
    // Nothing new to answer: the finished answer is not sent as a prefill; the drop is reported.
    endsOnUserOrTool(assembled.messages)
    expect(assembled.repairs?.map((edit) => edit.strategy)).toContain("request-shape")
    const next = [
      ...after,
      {
        id: "next",
        parentId: after.at(-1)!.id,
        timestamp: new Date(0).toISOString(),
        schemaVersion: 1,
        kind: "message",
        message: d.nextUserMessage!
      } satisfies Entry.Entry
    ]
    const again = await TieredSummaryEngine.makeAsync().assembleContext({ entries: next, policy: noPrefill })
    expect(again.messages.at(-1)).toEqual(d.nextUserMessage)
    expect(again.repairs ?? []).toEqual([])
  })

  it("C15: prefill support follows the provider's documentation by model id", async () => {
    const { RequestShape } = await import("@context-engine/core")
    for (const model of [
      "claude-opus-4-6",
      "claude-sonnet-4-6",
      "us.anthropic.claude-opus-4-6-v1",
      "claude-opus-4-7",
      "claude-sonnet-5"
    ])
      expect(RequestShape.supportsAssistantPrefill(model)).toBe(false)
    for (const model of [
      "claude-sonnet-4-5-20250929",
      "claude-opus-4-20250514",
      "claude-opus-4-1",
      "claude-3-5-sonnet-20241022",
      "gpt-5.2",
      "gemini-2.5-pro"
    ])
      expect(RequestShape.supportsAssistantPrefill(model)).toBe(true)
  })
})
