/**
 * decode ∘ encode is the identity for every schema exported by the core data
 * modules, on values generated from the schemas themselves (Effect's
 * `Arbitrary.schema`, which shrinks a failing value like fast-check does).
 *
 * Two forms are checked:
 *
 * - in memory: `decode(encode(value))` equals `value`, binary (`Uint8Array`,
 *   `ArrayBuffer`) and `URL` instances included;
 * - JSON-persisted: `decode(JSON.parse(JSON.stringify(encode(value))))`
 *   equals `value` for JSON-safe values. Binary data and `URL` instances are
 *   not JSON: plain `JSON.stringify` turns a `Uint8Array` into an index-keyed
 *   object and a `URL` into a string that decodes as the `string` member of
 *   the `DataContent` union. Persisted transcripts therefore store them in
 *   the JSON-safe forms `TranscriptLog.encodeEntry` writes (base64 string,
 *   URL string, revived for `{ type: "url" }`), and this property is
 *   restricted to values without them;
 * - through Effect's derived JSON codec (`Schema.toCodecJson`): exact for
 *   values without binary/URL instances, `undefined` in JSON objects or `-0`,
 *   and the only form that keeps non-finite numbers (`Measurement.budgetTokens`
 *   is `Infinity` when unknown; plain JSON writes `null`, which no longer
 *   decodes). Persist measurements through the codec, not `JSON.stringify`.
 */
import { isDeepStrictEqual } from "node:util"
import { Checkpoint, Entry, Measurement, Message, ModelPolicy, PolicyRegistry, ViewEdit } from "@context-engine/core"
import { PolicyFile } from "@context-engine/core/node"
import { Arbitrary, Effect, Schema } from "effect"
import { describe, expect, it } from "vitest"

const modules = { Message, Entry, Checkpoint, ViewEdit, ModelPolicy, Measurement, PolicyRegistry, PolicyFile }

const schemas = Object.entries(modules).flatMap(([moduleName, module]) =>
  Object.entries(module)
    .filter(([, value]) => Schema.isSchema(value))
    .map(([name, value]) => [`${moduleName}.${name}`, value as Schema.Codec<unknown, unknown>] as const)
)

/** Structural form that tells URL / bytes / -0 / NaN / absent-vs-undefined apart. */
const canonical = (value: unknown, json: boolean): unknown => {
  if (value instanceof URL) return { $url: value.href }
  if (value instanceof Uint8Array) return { $bytes: [...value] }
  if (value instanceof ArrayBuffer) return { $buffer: [...new Uint8Array(value)] }
  if (Array.isArray(value)) return value.map((item) => canonical(item, json))
  if (typeof value === "number" && (Number.isNaN(value) || Object.is(value, -0))) return { $number: String(value) }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value)
      .filter(([, item]) => !(json && item === undefined))
      .map(([key, item]) => [key, item === undefined ? { $undefined: true } : canonical(item, json)] as const)
    const out: Record<string, unknown> = {}
    for (const [key, item] of entries) Object.defineProperty(out, key, { value: item, enumerable: true })
    return out
  }
  return value
}

/** A value JSON represents exactly: no binary, URL, non-finite number or -0. */
const isJsonSafe = (value: unknown): boolean => {
  if (value === null || typeof value === "string" || typeof value === "boolean") return true
  if (typeof value === "number") return Number.isFinite(value) && !Object.is(value, -0)
  if (Array.isArray(value)) return value.every(isJsonSafe)
  if (typeof value === "object" && Object.getPrototypeOf(value) === Object.prototype) {
    return Object.values(value as object).every((item) => item === undefined || isJsonSafe(item))
  }
  return false
}

const check = <A>(arbitrary: Arbitrary.Arbitrary<A>, property: (value: A) => boolean, runs: number) =>
  Effect.runPromise(Arbitrary.checkEffect(arbitrary, property, { runs, size: 8, maxDiscards: runs * 50 }))

describe("schema round trips", () => {
  it("covers the data modules' schemas", () => {
    const names = schemas.map(([name]) => name)
    for (const name of [
      "Message.Message",
      "Message.ToolResultPart",
      "Entry.Entry",
      "Entry.Transcript",
      "Checkpoint.Checkpoint",
      "ViewEdit.ViewEdit",
      "ModelPolicy.ModelPolicy",
      "Measurement.Measurement",
      "PolicyFile.PolicyFileContent"
    ]) {
      expect(names).toContain(name)
    }
  })

  it.each(schemas)("%s: decode(encode(x)) = x in memory", async (_, schema) => {
    const encode = Schema.encodeSync(schema)
    const decode = Schema.decodeUnknownSync(schema)
    const result = await check(
      Arbitrary.schema(schema),
      (value) => isDeepStrictEqual(canonical(decode(encode(value)), false), canonical(value, false)),
      60
    )
    expect(result._tag === "Falsified" ? Arbitrary.formatCheckFailure(result) : result._tag).toBe("Passed")
  })

  // Every value of these holds a `URL` instance, so no value is JSON-safe;
  // Effect's derived JSON codec (`Schema.toCodecJson`, URL ⇄ string) is their JSON form.
  const urlOnly = new Set(["Message.FileDataUrl"])

  it.each(schemas.filter(([name]) => urlOnly.has(name)))(
    "%s: round-trips through Schema.toCodecJson",
    async (_, schema) => {
      const json = Schema.toCodecJson(schema)
      const encode = Schema.encodeSync(json)
      const decode = Schema.decodeUnknownSync(json)
      const result = await check(
        Arbitrary.schema(schema),
        (value) => {
          const text = JSON.stringify(encode(value))
          return isDeepStrictEqual(canonical(decode(JSON.parse(text)), true), canonical(value, true))
        },
        60
      )
      expect(result._tag === "Falsified" ? Arbitrary.formatCheckFailure(result) : result._tag).toBe("Passed")
    }
  )

  it.each(schemas.filter(([name]) => !urlOnly.has(name)))(
    "%s: decode(JSON(encode(x))) = x for JSON-safe values",
    async (_, schema) => {
      const encode = Schema.encodeSync(schema)
      const decode = Schema.decodeUnknownSync(schema)
      const jsonSafe = Arbitrary.schema(schema).pipe(Arbitrary.filter((value) => isJsonSafe(encode(value))))
      const result = await check(
        jsonSafe,
        (value) =>
          isDeepStrictEqual(canonical(decode(JSON.parse(JSON.stringify(encode(value)))), true), canonical(value, true)),
        60
      )
      expect(result._tag === "Falsified" ? Arbitrary.formatCheckFailure(result) : result._tag).toBe("Passed")
    }
  )

  /**
   * Values Effect's JSON codec represents exactly: no binary or URL instance
   * (bytes become base64 strings, URLs strings), no `undefined` inside a JSON
   * object (the codec writes `null`), no `-0` (written as `0`). Non-finite
   * numbers are allowed: the codec writes them as strings, plain JSON as `null`.
   */
  const codecExact = (value: unknown): boolean => {
    if (value instanceof URL || value instanceof Uint8Array || value instanceof ArrayBuffer) return false
    if (value === undefined || Object.is(value, -0)) return false
    if (Array.isArray(value)) return value.every(codecExact)
    if (value !== null && typeof value === "object") return Object.values(value).every(codecExact)
    return true
  }

  it.each(schemas)(
    "%s: Schema.toCodecJson round-trips through JSON text, non-finite numbers included",
    async (_, schema) => {
      const json = Schema.toCodecJson(schema)
      const encode = Schema.encodeSync(json)
      const decode = Schema.decodeUnknownSync(json)
      const values = Arbitrary.schema(schema).pipe(Arbitrary.filter(codecExact))
      const result = await check(
        values,
        (value) =>
          isDeepStrictEqual(canonical(decode(JSON.parse(JSON.stringify(encode(value)))), true), canonical(value, true)),
        40
      )
      expect(["Passed", ...(urlOnly.has(_) ? ["Exhausted"] : [])]).toContain(
        result._tag === "Falsified" ? Arbitrary.formatCheckFailure(result) : result._tag
      )
    }
  )

  it("Measurement.budgetTokens = Infinity (documented 'unknown') needs the JSON codec", () => {
    const measurement: Measurement.Measurement = {
      byCategory: Measurement.zeroCounts(),
      inputTokens: 10,
      totalTokens: 20,
      budgetTokens: Number.POSITIVE_INFINITY,
      headroomTokens: Number.POSITIVE_INFINITY,
      method: "estimate",
      tokenizer: "estimate:generic"
    }
    // plain JSON turns Infinity into null, which no longer decodes
    expect(() => Schema.decodeUnknownSync(Measurement.Measurement)(JSON.parse(JSON.stringify(measurement)))).toThrow()
    const json = Schema.toCodecJson(Measurement.Measurement)
    const text = JSON.stringify(Schema.encodeSync(json)(measurement))
    expect(Schema.decodeUnknownSync(json)(JSON.parse(text))).toEqual(measurement)
  })
})
