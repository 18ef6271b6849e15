/**
 * Bad input becomes a typed error that names the path and the offending
 * value, never a crash or a silent accept.
 */
import { Decode, Entry, Errors, Message, PolicyRegistry } from "@context-engine/core"
import { Effect, Exit, Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const decodeMessage = Decode.decodeUnknownSync(Message.Message, "message")
const decodeMessages = Decode.decodeUnknownSync(Schema.Array(Message.Message), "messages")
const decodeEntry = Decode.decodeUnknownSync(Entry.Entry, "entry")

const invalid = (decode: (input: unknown) => unknown, input: unknown): Errors.InvalidInput => {
  try {
    decode(input)
  } catch (error) {
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    return error as Errors.InvalidInput
  }
  throw new Error(`accepted ${JSON.stringify(input)}`)
}

const failure = <A, E>(effect: Effect.Effect<A, E>): E => {
  const exit = Effect.runSyncExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  if (!reason) throw new Error(String(exit.cause))
  return reason.error
}

const toolResult = (toolCallId: string) => ({
  type: "tool-result",
  toolCallId,
  toolName: "read",
  output: { type: "text", value: "ok" }
})

describe("malformed messages", () => {
  it.each([
    [{ role: "developer", content: "hi" }, "role", '"developer"'],
    [{ content: "hi" }, "role", "Missing key"],
    [{ role: "user" }, "content", "Missing key"],
    [{ role: "user", content: [{ type: "text", text: 1 }] }, "content[0].text", "got 1"],
    [{ role: "user", content: 42 }, "content", "got 42"],
    [{ role: "assistant", content: [{ type: "banana" }] }, "content[0].type", '"banana"'],
    [
      { role: "assistant", content: [{ type: "tool-call", toolName: "read", input: {} }] },
      "content[0].toolCallId",
      "Missing key"
    ],
    [
      { role: "tool", content: [{ ...toolResult("c1"), toolCallId: undefined }] },
      "content[0].toolCallId",
      "got undefined"
    ],
    [
      { role: "tool", content: [{ type: "tool-result", toolName: "read", output: { type: "text", value: "ok" } }] },
      "content[0].toolCallId",
      "Missing key"
    ],
    [{ role: "tool", content: [{ ...toolResult("c1"), toolCallId: 5 }] }, "content[0].toolCallId", "got 5"],
    [
      { role: "tool", content: [{ ...toolResult("c1"), output: { type: "html", value: "x" } }] },
      "content[0].output.type",
      '"html"'
    ],
    [{ role: "system", content: null }, "content", "got null"],
    ["hello", "", '"hello"'],
    [null, "", "got null"]
  ])("%o → InvalidInput at %s mentioning %s", (input, path, mention) => {
    const error = invalid(decodeMessage, input)
    expect(error.path).toBe(path)
    expect(error.detail).toContain(mention)
    // the field when there is one; a whole-input error says what was wrong without a placeholder path (QA session 6)
    expect(error.message).toBe(`Invalid ${error.what}${path ? ` at ${path}` : ""}: ${error.detail}`)
    expect(error.message).not.toContain("<root>")
  })

  it("names the message index inside a list", () => {
    const error = invalid(decodeMessages, [
      { role: "user", content: "a" },
      { role: "assistant", content: "b" },
      { role: "robot", content: "c" }
    ])
    expect(error.path).toBe("[2].role")
    expect(error.detail).toContain('"robot"')
  })

  it("keeps details short for huge offending values", () => {
    const error = invalid(decodeMessage, { role: "x".repeat(100_000), content: "hi" })
    expect(error.path).toBe("role")
    expect(error.detail.length).toBeLessThan(300)
    expect(error.detail).toContain("100002 chars")
  })

  it("property: any unknown role is reported at role with its value", () => {
    const roles = new Set(["system", "user", "assistant", "tool"])
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }).filter((role) => !roles.has(role)),
        (role) => {
          const error = invalid(decodeMessage, { role, content: "hi" })
          expect(error.path).toBe("role")
          expect(error.detail).toContain(JSON.stringify(role))
        }
      )
    )
  })

  it("property: a tool result without an id is reported at its own index", () => {
    fc.assert(
      fc.property(
        fc
          .integer({ min: 1, max: 8 })
          .chain((count) => fc.tuple(fc.constant(count), fc.integer({ min: 0, max: count - 1 }))),
        ([count, broken]) => {
          const content = Array.from({ length: count }, (_, index) => {
            const { toolCallId: _id, ...withoutId } = toolResult(`call_${index}`)
            return index === broken ? withoutId : toolResult(`call_${index}`)
          })
          const error = invalid(decodeMessage, { role: "tool", content })
          expect(error.path).toBe(`content[${broken}].toolCallId`)
        }
      )
    )
  })
})

describe("malformed entries", () => {
  const header = { id: "e1", parentId: null, timestamp: "2026-01-01T00:00:00Z", schemaVersion: 1 }

  it.each([
    [
      { ...header, schemaVersion: 2, kind: "message", message: { role: "user", content: "x" } },
      "schemaVersion",
      "got 2"
    ],
    [{ ...header, kind: "note", text: "x" }, "kind", '"note"'],
    [
      { ...header, kind: "message", message: { role: "user", content: [{ type: "text" }] } },
      "message.content[0].text",
      "Missing key"
    ],
    [{ ...header, id: 7, kind: "event", event: { name: "x" } }, "id", "got 7"]
  ])("%o → InvalidInput at %s", (input, path, mention) => {
    const error = invalid(decodeEntry, input)
    expect(error.path).toBe(path)
    expect(error.detail).toContain(mention)
  })
})

describe("impossible policy numbers", () => {
  const valid = PolicyRegistry.lookupSync("gpt-5")

  it("a wrongly typed field is InvalidInput with path and value", () => {
    const error = failure(PolicyRegistry.decodePolicy({ ...valid, contextWindowTokens: "400k" }))
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    expect((error as Errors.InvalidInput).path).toBe("contextWindowTokens")
    expect((error as Errors.InvalidInput).detail).toContain('"400k"')
  })

  it("property: a negative or absurd number in any token field is PolicyInvalid with field and value", () => {
    const fields = [
      "contextWindowTokens",
      "maxOutputTokens",
      "reserveTokens",
      "keepRecentTokens",
      "toolLoopReserveTokens",
      "safetyMarginTokens"
    ] as const
    fc.assert(
      fc.property(
        fc.constantFrom(...fields),
        fc.oneof(fc.integer({ min: -1e12, max: -1 }), fc.integer({ min: 100_000_001, max: 1e15 })),
        (field, value) => {
          const error = failure(PolicyRegistry.decodePolicy({ ...valid, [field]: value }))
          expect(error).toBeInstanceOf(Errors.PolicyInvalid)
          const policyError = error as Errors.PolicyInvalid
          expect(policyError.field).toBe(field)
          expect(policyError.value).toBe(value)
          expect(policyError.message).toContain(String(value))
        }
      )
    )
  })

  it("the message shows a number as given: NaN, Infinity, -Infinity, -5 (JSON would print null for the first three)", () => {
    for (const [value, shown] of [
      [Number.NaN, "NaN"],
      [Number.POSITIVE_INFINITY, "Infinity"],
      [Number.NEGATIVE_INFINITY, "-Infinity"],
      [-5, "-5"]
    ] as const) {
      const error = failure(PolicyRegistry.resolve({ model: "gpt-5", contextWindowTokens: value }))
      expect(error).toBeInstanceOf(Errors.PolicyInvalid)
      expect((error as Errors.PolicyInvalid).message).toContain(`contextWindowTokens = ${shown} is invalid`)
    }
  })

  it("a fractional number is rejected at the schema with its value", () => {
    const error = failure(PolicyRegistry.decodePolicy({ ...valid, reserveTokens: 0.5 }))
    expect(error).toBeInstanceOf(Errors.InvalidInput)
    expect((error as Errors.InvalidInput).path).toBe("reserveTokens")
    expect((error as Errors.InvalidInput).detail).toContain("0.5")
  })
})
