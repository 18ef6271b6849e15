/**
 * EngineInput.validate: bad engine input is a typed error naming the path
 * and value; each entry object is decoded once.
 */
import { ArrayLineage, type ContextEngine, EngineInput, type Entry, Errors, PolicyRegistry } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { Effect, Exit } from "effect"
import { describe, expect, it } from "vitest"
import { piEntries } from "./support/piEntries.ts"
import { countReads } from "./support/readCounter.ts"

const policy = PolicyRegistry.lookupSync("claude-sonnet-4-5")

const message = (id: string, text: string, parentId: string | null = null): Entry.Entry => ({
  id,
  parentId,
  timestamp: "2025-01-01T00:00:00.000Z",
  schemaVersion: 1,
  kind: "message",
  message: { role: "user", content: [{ type: "text", text }] }
})

const failure = (input: unknown): Errors.InvalidInput | Errors.PolicyInvalid => {
  const exit = Effect.runSyncExit(EngineInput.validate(input))
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (!reason) throw new Error(String(exit.cause))
  return reason.error
}

describe("EngineInput.validate", () => {
  it("accepts a valid input and returns it unchanged", () => {
    const input = { entries: [message("a", "hi")], policy }
    expect(Effect.runSync(EngineInput.validate(input))).toBe(input)
  })

  it("names the entry, the path and the value of a bad message", () => {
    const error = failure({
      entries: [message("a", "hi"), { ...message("b", "x"), message: { role: "user", content: 42 } }],
      policy
    })
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    expect((error as Errors.InvalidInput).path).toMatch(/^entries\[1\]\.message\.content/)
    expect(error.message).toContain("42")
  })

  it("names a duplicate id and both indices", () => {
    const error = failure({ entries: [message("a", "1"), message("b", "2"), message("a", "3")], policy })
    expect(error._tag).toBe("InvalidInput")
    expect(error.message).toContain('"a"')
    expect(error.message).toContain("entries[0]")
    expect(error.message).toContain("entries[2]")
  })

  it("reads a present-but-undefined key as absent at any depth, beside the keys before and after it", () => {
    // the AI SDK writes absent options as `key: undefined`; the decode copies only the objects that hold one
    const entry = {
      ...message("a", "hi"),
      message: {
        role: "assistant",
        content: [
          { type: "text", text: "calling", providerOptions: undefined },
          { type: "tool-call", toolCallId: "c1", toolName: "ls", input: { path: ".", depth: undefined } }
        ],
        providerOptions: undefined
      }
    }
    const result = {
      ...message("b", ""),
      message: {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "ls",
            output: { type: "json", value: [{ name: "a" }, [1, { name: "a.ts", size: undefined }]] }
          }
        ]
      }
    }
    const plain = message("c", "plain")
    const input = { entries: [entry, result, plain], policy }
    const before = structuredClone(input)
    expect(Effect.runSync(EngineInput.validate(input))).toBe(input)
    expect(input).toEqual(before)
    expect(Object.hasOwn(entry.message, "providerOptions")).toBe(true)
    const bad = { ...entry, message: { ...entry.message, role: 42 } }
    const error = failure({ entries: [plain, bad], policy })
    expect((error as Errors.InvalidInput).path).toMatch(/^entries\[1\]\.message/)
    expect(error.message).toContain("42")
    // a bad part before a copied one is still decoded (and named)
    const badPart = {
      ...plain,
      message: {
        role: "user",
        content: [
          { type: "text", text: 7 },
          { type: "text", text: "x", providerOptions: undefined }
        ]
      }
    }
    expect((failure({ entries: [badPart], policy }) as Errors.InvalidInput).path).toMatch(
      /^entries\[0\]\.message\.content\[0\]/
    )
  })

  it.each([
    ["contextWindowTokens", Number.NaN],
    ["contextWindowTokens", -5],
    ["contextWindowTokens", 0]
  ])("reports %s = %s as PolicyInvalid", (field, value) => {
    const error = failure({ entries: [], policy: { ...policy, [field]: value } })
    expect(error).toBeInstanceOf(Errors.PolicyInvalid)
    expect((error as Errors.PolicyInvalid).field).toBe(field)
  })

  it("reports an unknown tokenizer at policy.tokenizer with its value", () => {
    const error = failure({ entries: [], policy: { ...policy, tokenizer: "nope" } })
    expect(error._tag).toBe("InvalidInput")
    expect((error as Errors.InvalidInput).path).toBe("policy.tokenizer")
    expect(error.message).toContain('"nope"')
  })

  it("decodes the 1000-entry pi transcript once, then only an appended entry", () => {
    const entries = piEntries(transcript("pi/before-compaction.jsonl"))
    expect(entries.length).toBe(1000)
    const validator = EngineInput.makeValidator()
    Effect.runSync(validator.validate({ entries, policy }))
    expect(validator.decodedEntries()).toBe(entries.length)
    const appended = [...entries, message("appended", "one more", entries.at(-1)!.id)]
    Effect.runSync(validator.validate({ entries: appended, policy }))
    expect(validator.decodedEntries()).toBe(entries.length + 1)
    // A bad entry is not remembered as valid: it fails again.
    const bad = { ...message("bad", "x"), message: null }
    expect(Exit.isFailure(Effect.runSyncExit(validator.validate({ entries: [bad], policy })))).toBe(true)
    expect(Exit.isFailure(Effect.runSyncExit(validator.validate({ entries: [bad], policy })))).toBe(true)
  })

  it("entriesProblem: the entry checks of validate without an input (a store's load); no validator decodes passing entries again", () => {
    const entries = [message("a", "one"), message("b", "two", "a")]
    const { schemaVersion: _dropped, ...unversioned } = message("c", "three", "b")
    const missing = EngineInput.entriesProblem([...entries, unversioned])
    expect([missing?.path, missing?.detail]).toEqual(["entries[2].schemaVersion", "Missing key"])
    const repeated = EngineInput.entriesProblem([...entries, message("a", "again", "b")])
    expect([repeated?.path, repeated?.detail]).toEqual([
      "entries[2].id",
      'Duplicate entry id "a": entries[0] and entries[2] both have it'
    ])
    expect(EngineInput.entriesProblem(entries)).toBeUndefined()
    // An engine's own validator (EngineInput.guard makes one per engine) takes them as decoded.
    const validator = EngineInput.makeValidator()
    Effect.runSync(validator.validate({ entries, policy }))
    expect(validator.decodedEntries()).toBe(0)
    // Entries that failed are not: a fresh validator decodes them (and fails on the bad one).
    const other = EngineInput.makeValidator()
    expect(Exit.isFailure(Effect.runSyncExit(other.validate({ entries: [unversioned], policy })))).toBe(true)
    expect(other.decodedEntries()).toBe(1)
  })

  it("checks an extended input against the ids seen before, also when the caller mutates its array", () => {
    const validator = EngineInput.makeValidator()
    const entries = [message("a", "one"), message("b", "two", "a")]
    Effect.runSync(validator.validate({ entries, policy }))
    const outcome = (list: ReadonlyArray<Entry.Entry>) =>
      Effect.runSyncExit(validator.validate({ entries: list, policy }))
    // A new array repeating an earlier id after the known prefix.
    const repeated = outcome([...entries, message("a", "three", "b")])
    expect(Exit.isFailure(repeated) && String(repeated.cause)).toContain("entries[0] and entries[2]")
    // The failed input taught nothing: the valid extension still passes.
    expect(Exit.isSuccess(outcome([...entries, message("c", "three", "b")]))).toBe(true)
    // The same array, pushed to and then edited in place, is checked again.
    entries.push(message("c", "three", "b"))
    expect(Exit.isSuccess(outcome(entries))).toBe(true)
    entries[1] = message("a", "edited", "a")
    expect(Exit.isFailure(outcome(entries))).toBe(true)
  })

  it("each guarded engine checks only what its own last input did not hold: two sessions in turn read no earlier entry", () => {
    // A stand-in engine: only the guard's validation is under test.
    const engine = { shouldCompact: () => Effect.succeed(false) } as unknown as ContextEngine.ContextEngine
    const reads = { count: 0 }
    const session = (tag: string) =>
      Array.from(
        { length: 50 },
        (_, index) =>
          new Proxy(message(`${tag}${index}`, `text ${index}`, index === 0 ? null : `${tag}${index - 1}`), {
            get: (target, key, receiver) => {
              reads.count++
              return Reflect.get(target, key, receiver)
            }
          })
      )
    const [a, b] = [session("a"), session("b")]
    const [engineA, engineB] = [EngineInput.guard(engine), EngineInput.guard(engine)]
    Effect.runSync(engineA.shouldCompact({ entries: a, policy }))
    Effect.runSync(engineB.shouldCompact({ entries: b, policy }))
    reads.count = 0
    expect(Effect.runSync(engineA.shouldCompact({ entries: [...a, message("a50", "next", "a49")], policy }))).toBe(
      false
    )
    expect(reads.count).toBe(0)
    // Still checked against the ids seen before.
    const repeated = Effect.runSyncExit(
      engineA.shouldCompact({ entries: [...a, message("a3", "again", "a49")], policy })
    )
    expect(Exit.isFailure(repeated) && String(repeated.cause)).toContain("entries[3] and entries[50]")
  })

  it("entries recorded as extending the last valid ones (ArrayLineage: the middleware's snapshots) are not read", () => {
    const engine = EngineInput.guard({
      shouldCompact: () => Effect.succeed(false)
    } as unknown as ContextEngine.ContextEngine)
    const first = ArrayLineage.extend(
      [],
      Array.from({ length: 50 }, (_, index) =>
        message(`e${index}`, `text ${index}`, index === 0 ? null : `e${index - 1}`)
      )
    )
    Effect.runSync(engine.shouldCompact({ entries: first, policy }))
    const second = ArrayLineage.extend(first, [message("e50", "next", "e49")])
    const reads = { count: 0 }
    countReads(second, 50, reads)
    // A step's shouldCompact, then its assembleContext and recordOutcome with the same entries.
    expect(Effect.runSync(engine.shouldCompact({ entries: second, policy }))).toBe(false)
    expect(Effect.runSync(engine.shouldCompact({ entries: second, policy }))).toBe(false)
    expect(reads.count).toBe(0)
    // The appended entries are still checked against every id seen before.
    const repeated = Effect.runSyncExit(
      engine.shouldCompact({ entries: ArrayLineage.extend(second, [message("e3", "again", "e50")]), policy })
    )
    expect(Exit.isFailure(repeated) && String(repeated.cause)).toContain("entries[3] and entries[51]")
    // A caller's own array holding the same entries has no record: it is compared position by position.
    const own = [...first, message("e50", "next", "e49")]
    expect(Effect.runSync(engine.shouldCompact({ entries: own, policy }))).toBe(false)
    const after = [...own, message("e51", "more", "e50")]
    reads.count = 0
    countReads(after, 50, reads)
    expect(Effect.runSync(engine.shouldCompact({ entries: after, policy }))).toBe(false)
    expect(reads.count).toBeGreaterThanOrEqual(50)
  })
})
