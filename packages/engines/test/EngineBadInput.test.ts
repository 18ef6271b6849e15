/**
 * Bad engine input through both engines' Promise faces: a typed error
 * (`_tag`) whose message names the path / value, never a raw TypeError.
 */
import { ContextEngine, type Entry, PolicyRegistry } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as ProviderNativeEngine from "../src/ProviderNativeEngine.ts"
import * as SlidingWindowEngine from "../src/SlidingWindowEngine.ts"
import * as TieredSummaryEngine from "../src/TieredSummaryEngine.ts"

const policy = PolicyRegistry.lookupSync("claude-sonnet-4-5")

const entry = (id: string, message: unknown): Entry.Entry =>
  ({
    id,
    parentId: null,
    timestamp: "2025-01-01T00:00:00.000Z",
    schemaVersion: 1,
    kind: "message",
    message
  }) as Entry.Entry

const ok = entry("u0", { role: "user", content: [{ type: "text", text: "hello" }] })

interface Bad {
  readonly name: string
  readonly input: unknown
  readonly tag: "InvalidInput" | "PolicyInvalid"
  readonly mentions: ReadonlyArray<string>
}

const bad: ReadonlyArray<Bad> = [
  {
    name: "content: 42",
    input: { entries: [ok, entry("u1", { role: "user", content: 42 })], policy },
    tag: "InvalidInput",
    mentions: ["entries[1].message.content", "42"]
  },
  {
    name: "a null message",
    input: { entries: [ok, entry("u1", null)], policy },
    tag: "InvalidInput",
    mentions: ["entries[1].message", "null"]
  },
  { name: "a null entry", input: { entries: [null], policy }, tag: "InvalidInput", mentions: ["entries[0]"] },
  {
    name: 'role: "bogus"',
    input: { entries: [entry("u1", { role: "bogus", content: "x" })], policy },
    tag: "InvalidInput",
    mentions: ["entries[0].message.role", '"bogus"']
  },
  {
    name: "contextWindowTokens: NaN",
    input: { entries: [ok], policy: { ...policy, contextWindowTokens: Number.NaN } },
    tag: "PolicyInvalid",
    mentions: ["contextWindowTokens", "finite"]
  },
  {
    name: "contextWindowTokens: -5",
    input: { entries: [ok], policy: { ...policy, contextWindowTokens: -5 } },
    tag: "PolicyInvalid",
    mentions: ["contextWindowTokens", "-5"]
  },
  {
    name: "contextWindowTokens: 0",
    input: { entries: [ok], policy: { ...policy, contextWindowTokens: 0 } },
    tag: "PolicyInvalid",
    mentions: ["contextWindowTokens", "= 0"]
  },
  {
    name: "reserveTokens > window",
    input: { entries: [ok], policy: { ...policy, reserveTokens: policy.contextWindowTokens + 1 } },
    tag: "PolicyInvalid",
    mentions: ["reserveTokens", String(policy.contextWindowTokens + 1), String(policy.contextWindowTokens)]
  },
  {
    name: 'tokenizer: "nope"',
    input: { entries: [ok], policy: { ...policy, tokenizer: "nope" } },
    tag: "InvalidInput",
    mentions: ["policy.tokenizer", '"nope"']
  },
  {
    name: "duplicate entry ids",
    input: { entries: [ok, entry("u1", { role: "assistant", content: "a" }), { ...ok }], policy },
    tag: "InvalidInput",
    mentions: ['"u0"', "entries[0]", "entries[2]"]
  },
  { name: "entries not an array", input: { entries: "x", policy }, tag: "InvalidInput", mentions: ["entries"] }
]

const engines: ReadonlyArray<readonly [string, () => ContextEngine.AsyncContextEngine]> = [
  ["SlidingWindowEngine", () => SlidingWindowEngine.makeAsync()],
  ["TieredSummaryEngine", () => TieredSummaryEngine.makeAsync()],
  [
    "ProviderNativeEngine",
    () => ContextEngine.toAsync(ProviderNativeEngine.make({ fallback: SlidingWindowEngine.make() }))
  ]
]

const methods: ReadonlyArray<
  readonly [string, (engine: ContextEngine.AsyncContextEngine, input: ContextEngine.EngineInput) => Promise<unknown>]
> = [
  ["measure", (engine, input) => engine.measure(input)],
  ["shouldCompact", (engine, input) => engine.shouldCompact(input)],
  ["plan", (engine, input) => engine.plan(input)],
  ["compact", (engine, input) => engine.compact(input)],
  ["assembleContext", (engine, input) => engine.assembleContext(input)],
  ["recordOutcome", (engine, input) => engine.recordOutcome(input, { inputTokens: 10, lastEntryId: "u0" })]
]

const rejection = async (run: () => Promise<unknown>): Promise<unknown> => {
  try {
    await run()
  } catch (error) {
    return error
  }
  throw new Error("expected a rejection")
}

describe.each(engines)("%s rejects bad input with a typed error", (_name, makeEngine) => {
  describe.each(bad)("$name", ({ input, tag, mentions }) => {
    it.each(methods)("%s", async (_method, call) => {
      const error = await rejection(() => call(makeEngine(), input as ContextEngine.EngineInput))
      expect(error).not.toBeInstanceOf(TypeError)
      expect((error as { _tag?: string })._tag).toBe(tag)
      for (const text of mentions) expect((error as Error).message).toContain(text)
    })
  })

  it("validate rejects a bad input too", async () => {
    const engine = makeEngine()
    const good = { entries: [ok], policy }
    const result = await engine.compact({ ...good, manual: true }).catch(() => undefined)
    if (result === undefined) return
    const error = await rejection(() => engine.validate({ entries: [entry("u0", null)], policy }, result))
    expect((error as { _tag?: string })._tag).toBe("InvalidInput")
  })

  it("a valid input still works", async () => {
    const measurement = await makeEngine().measure({ entries: [ok], policy })
    expect(measurement.inputTokens).toBeGreaterThan(0)
  })
})
