/**
 * Validation of an engine's input ({@link ContextEngine.EngineInput}) before
 * any engine touches it: every entry decodes with the {@link Entry} schema,
 * entry ids are unique, tools are well-formed and the policy is possible.
 * Bad input becomes a typed error that names the path and the offending
 * value — never a raw `TypeError` from deep inside measurement, and never a
 * silent fallback (an unknown tokenizer, a `NaN` window).
 *
 * Cheap on the request path: the middleware calls the engine on every agent
 * step with the whole transcript, so each entry object is decoded once and
 * remembered by identity (a `WeakSet`); a later call decodes only entries it
 * has not seen. Entries are the append-only transcript and are never mutated
 * (DESIGN.md invariants), so identity is a sound cache key. A validator
 * also remembers its last valid entries: a call whose entries extend them
 * checks ids and decodes only the entries after them — found by pointer
 * compares over the prefix, or with none when the entries are recorded as
 * extending the last ones (`ArrayLineage`, the middleware's snapshots).
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import * as EngineInput from "./EngineInput.ts"
 * import * as PolicyRegistry from "./PolicyRegistry.ts"
 *
 * const policy = PolicyRegistry.lookupSync("claude-sonnet-4-5")
 * const input = Effect.runSync(EngineInput.validate({ entries: [], policy }))
 * ```
 *
 * @since 0.1.0
 */
import { Effect, Schema } from "effect"
import * as ArrayLineage from "./ArrayLineage.ts"
import type { ContextEngine, EngineInput, InputError } from "./ContextEngine.ts"
import { decodeUnknown, decodeUnknownSync } from "./Decode.ts"
import { Entry } from "./Entry.ts"
import { InvalidInput, PolicyInvalid } from "./Errors.ts"
import * as JsonSafety from "./JsonSafety.ts"
import { JsonValue } from "./Message.ts"
import { ModelPolicy } from "./ModelPolicy.ts"
import * as PolicyLimits from "./PolicyLimits.ts"
import * as Tokenizers from "./Tokenizers.ts"

export type {
  /** @category models */
  EngineInput
} from "./ContextEngine.ts"

/**
 * Why an engine input was rejected.
 *
 * @category errors
 */
export type EngineInputError = InputError

const WHAT = "engine input"

const ToolDefinition = Schema.Struct({
  name: Schema.String,
  description: Schema.optionalKey(Schema.String),
  inputSchema: JsonValue
})

const decodeEntry = decodeUnknownSync(Entry, WHAT)
const decodeTools = decodeUnknownSync(Schema.Array(ToolDefinition), WHAT)

/** The typed error `decode` throws for `value`, or undefined when it decodes. */
const decodeProblem = (decode: (value: unknown) => unknown, value: unknown): InvalidInput | undefined => {
  try {
    decode(value)
    return undefined
  } catch (error) {
    if (error instanceof InvalidInput) return error
    throw error
  }
}
const decodePolicy = decodeUnknown(ModelPolicy, WHAT)

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value)

const showValue = (value: unknown): string => {
  const text = value === undefined ? "undefined" : (JSON.stringify(value) ?? String(value))
  return text.length > 80 ? `${text.slice(0, 80)}… (${text.length} chars)` : text
}

/**
 * The value with object keys whose value is `undefined` left out, for
 * decoding only. The AI SDK writes absent options as present-but-undefined
 * (`providerOptions: undefined`); the schemas use optional keys, and an
 * undefined key means "absent" to every reader of a message. Copy on write:
 * an array or plain object is copied only when something inside it changes,
 * else the value itself is returned (a transcript's entries rarely have an
 * undefined key; copying each one made a second transcript of garbage on
 * every first validation, issue #13 req 6).
 */
const withoutUndefinedKeys = (value: unknown): unknown => {
  if (Array.isArray(value)) {
    let out: Array<unknown> | undefined
    for (let index = 0; index < value.length; index++) {
      const field: unknown = value[index]
      const kept = withoutUndefinedKeys(field)
      if (out === undefined && kept !== field) out = value.slice(0, index)
      out?.push(kept)
    }
    return out ?? value
  }
  if (typeof value !== "object" || value === null || Object.getPrototypeOf(value) !== Object.prototype) return value
  const record = value as Record<string, unknown>
  let out: Record<string, unknown> | undefined
  for (const key in record) {
    if (!Object.hasOwn(record, key)) continue
    const field = record[key]
    const kept = field === undefined ? undefined : withoutUndefinedKeys(field)
    if (out === undefined && (field === undefined || kept !== field)) {
      out = {}
      // the keys before this one: defined and unchanged (for…in visits own keys in the same order every time)
      for (const earlier in record) {
        if (earlier === key) break
        if (Object.hasOwn(record, earlier)) out[earlier] = record[earlier]
      }
    }
    if (out !== undefined && kept !== undefined) out[key] = kept
  }
  return out ?? value
}

const invalid = (path: string, detail: string): InvalidInput => new InvalidInput({ what: WHAT, path, detail })

/** Prefixes a decode error's path with `prefix` (`entries[3]` + `message.content`). */
const under = (prefix: string, error: InvalidInput): InvalidInput =>
  invalid(error.path === "" ? prefix : `${prefix}${error.path.startsWith("[") ? "" : "."}${error.path}`, error.detail)

// Entry objects that passed the schema and JSON-safety checks, remembered by every validator (an object is decoded
// once wherever it is checked: by an engine's own validator, the shared one or entriesProblem for a store's load).
const decodedValid = new WeakSet<object>()

/**
 * A validator with its own cache of validated policies and tools and of the last
 * valid input's entries (entry objects found valid are shared by every validator).
 *
 * @category models
 */
export interface Validator {
  /** Validates an input; succeeds with the same input object. */
  readonly validate: (input: unknown) => Effect.Effect<EngineInput, EngineInputError>
  /** How many entries this validator has schema-decoded so far (each entry object at most once, across validators). */
  readonly decodedEntries: () => number
  /** The first problem of `entries` by {@link validate}'s entry checks (schema, duplicate ids), or undefined. */
  readonly entriesProblem: (entries: ReadonlyArray<unknown>) => InvalidInput | undefined
}

/**
 * Checks a policy: the numbers first with `PolicyLimits.checkNumbers`
 * ({@link PolicyInvalid}: field, value, reason — a `NaN` or negative window
 * is reported here), then the shape with the {@link ModelPolicy} schema
 * ({@link InvalidInput} at `policy.<field>`, e.g. an unknown tokenizer), then
 * the relations with `PolicyLimits.check` (reserve below the window, …).
 *
 * @category validation
 */
export const validatePolicy = (policy: unknown): Effect.Effect<ModelPolicy, EngineInputError> =>
  Effect.suspend(() => {
    if (!isObject(policy)) return Effect.fail(invalid("policy", `Expected a model policy, got ${showValue(policy)}`))
    const model = typeof policy.model === "string" ? policy.model : "<unknown model>"
    const numbers = PolicyLimits.checkNumbers(policy)
    if (numbers) return Effect.fail(new PolicyInvalid({ model, ...numbers }))
    return Effect.flatMap(
      Effect.mapError(decodePolicy(policy), (error) => under("policy", error)),
      (decoded): Effect.Effect<ModelPolicy, PolicyInvalid> => {
        const problem = PolicyLimits.check(decoded)
        return problem ? Effect.fail(new PolicyInvalid({ model, ...problem })) : Effect.succeed(policy as ModelPolicy)
      }
    )
  })

/** Length of the prefix `entries` shares with `known`, by identity (a plain loop: the generator's is slower). */
const sharedLength = (entries: ReadonlyArray<unknown>, known: ReadonlyArray<unknown>): number => {
  const end = Math.min(known.length, entries.length)
  let index = 0
  while (index < end && entries[index] === known[index]) index++
  return index
}

/**
 * Builds a {@link Validator}. {@link validate} uses one shared validator;
 * make your own to observe {@link Validator.decodedEntries} in isolation.
 *
 * @category constructors
 */
export const makeValidator = (): Validator => {
  const validPolicies = new WeakSet<object>()
  const validTools = new WeakSet<object>()
  let decoded = 0
  // Our own copy of the last valid entries (callers may mutate theirs), the index of each id in it, and the array
  // it was taken from.
  let lastValid:
    | {
        readonly known: Array<unknown>
        readonly firstIndex: Map<string, number>
        readonly source: ReadonlyArray<unknown>
      }
    | undefined

  type Checked = { readonly known: Array<unknown>; readonly firstIndex: Map<string, number>; readonly start: number }

  /** The first problem of `entries[start…]` (schema, then ids against `firstIndex`, which it extends), or undefined. */
  const checkFrom = (
    entries: ReadonlyArray<unknown>,
    start: number,
    firstIndex: Map<string, number>
  ): InvalidInput | undefined => {
    for (let index = start; index < entries.length; index++) {
      const entry: unknown = entries[index]
      if (!isObject(entry) || !decodedValid.has(entry)) {
        decoded++
        const unsafe = JsonSafety.check(entry, `entries[${index}]`)
        if (unsafe !== undefined) return invalid(unsafe.path, unsafe.detail)
        const problem = decodeProblem(decodeEntry, withoutUndefinedKeys(entry))
        if (problem !== undefined) return under(`entries[${index}]`, problem)
        decodedValid.add(entry as object)
      }
      const id = (entry as EngineInput["entries"][number]).id
      const earlier = firstIndex.get(id)
      if (earlier !== undefined)
        return invalid(
          `entries[${index}].id`,
          `Duplicate entry id ${JSON.stringify(id)}: entries[${earlier}] and entries[${index}] both have it`
        )
      firstIndex.set(id, index)
    }
    return undefined
  }

  /**
   * The first problem of `input`'s entries, tools and `manual` (in that order), or what to keep when they are
   * valid. Plain synchronous code: it runs on every engine call of every step (issue #13 req 1), where a
   * generator's resumes and an Effect per decode cost more than the checks.
   */
  const checkEntries = (input: unknown): InvalidInput | Checked => {
    if (!isObject(input)) return invalid("", `Expected an object with entries and policy, got ${showValue(input)}`)
    const entries = input.entries
    if (!Array.isArray(entries)) return invalid("entries", `Expected an array, got ${showValue(entries)}`)
    // The entries of the last valid input are usually a prefix of these (a step appends): only the
    // rest is checked, against the ids seen so far. Entries recorded as extending the last valid ones
    // (`ArrayLineage`: the request path's snapshots) are not compared at all; others by pointer over the prefix.
    let start = 0
    let firstIndex = new Map<string, number>()
    let known: Array<unknown> = []
    if (lastValid !== undefined) {
      start = ArrayLineage.isExtensionOf(entries, lastValid.source)
        ? lastValid.known.length
        : sharedLength(entries, lastValid.known)
      if (start === lastValid.known.length) ({ known, firstIndex } = lastValid)
      else start = 0
    }
    // Taken over (and extended below) only if this input is valid.
    lastValid = undefined
    const problem = checkFrom(entries, start, firstIndex)
    if (problem !== undefined) return problem
    const tools = input.tools
    if (tools !== undefined && !(isObject(tools) || Array.isArray(tools) ? validTools.has(tools) : false)) {
      const problem = decodeProblem(decodeTools, withoutUndefinedKeys(tools))
      if (problem !== undefined) return under("tools", problem)
      validTools.add(tools as object)
    }
    if (input.manual !== undefined && typeof input.manual !== "boolean")
      return invalid("manual", `Expected boolean, got ${showValue(input.manual)}`)
    return { known, firstIndex, start }
  }

  const validate = (input: unknown): Effect.Effect<EngineInput, EngineInputError> =>
    Effect.suspend(() => {
      const checked = checkEntries(input)
      if (checked instanceof InvalidInput) return Effect.fail(checked)
      const valid = input as unknown as EngineInput
      const keep = (): EngineInput => {
        const { known, firstIndex, start } = checked
        for (let index = start; index < valid.entries.length; index++) known.push(valid.entries[index])
        lastValid = { known, firstIndex, source: valid.entries }
        return valid
      }
      const policy: unknown = valid.policy
      if (isObject(policy) && validPolicies.has(policy)) return Effect.succeed(keep())
      return Effect.map(validatePolicy(policy), () => {
        validPolicies.add(policy as object)
        return keep()
      })
    })

  return {
    validate,
    decodedEntries: () => decoded,
    entriesProblem: (entries) => checkFrom(entries, 0, new Map())
  }
}

const shared = makeValidator()

/**
 * The first problem {@link validate} would report for input entries
 * `entries` (`InvalidInput` at `entries[i]…`: the {@link Entry} schema, a
 * repeated id), or undefined when they pass — for a caller that reads entries
 * from elsewhere (a transcript store's load) and must know before handing
 * them to an engine. Entry objects that pass are remembered by every
 * validator ({@link guard}'s per-engine ones too), so an engine's first call
 * does not decode them again.
 *
 * @category validation
 */
export const entriesProblem = (entries: ReadonlyArray<unknown>): InvalidInput | undefined =>
  shared.entriesProblem(entries)

/**
 * Validates an engine input: `InvalidInput` naming `entries[i]…` and the
 * offending value for an entry that does not match the {@link Entry} schema
 * (each entry object is decoded once, then remembered), `InvalidInput` naming
 * the duplicate id and both indices for a repeated entry id, `InvalidInput`
 * for malformed `tools` or `manual`, and the policy checks of
 * {@link validatePolicy}. Succeeds with the input unchanged.
 *
 * @category validation
 */
export const validate = (input: unknown): Effect.Effect<EngineInput, EngineInputError> => shared.validate(input)

/**
 * Wraps an engine so that every method taking an {@link EngineInput}
 * validates it first ({@link validate}'s checks) and makes the policy's
 * tokenizer ready (`Tokenizers.ready`: its rank table loaded — synchronously
 * in Node, by a dynamic import on edge runtimes); other members are kept as
 * they are. Each wrapped engine has its own {@link Validator}: an engine
 * serves one session, and a validator checks only what the last valid input
 * did not hold, so sessions stepping in turn through a shared one re-checked
 * their whole entries every call.
 *
 * @category constructors
 */
export const guard = <E extends ContextEngine>(engine: E): E => {
  const validator = makeValidator().validate
  const validate = (input: unknown) => Effect.tap(validator(input), (valid) => Tokenizers.ready(valid.policy.tokenizer))
  return {
    ...engine,
    measure: (input) => Effect.flatMap(validate(input), engine.measure),
    shouldCompact: (input) => Effect.flatMap(validate(input), engine.shouldCompact),
    plan: (input) => Effect.flatMap(validate(input), engine.plan),
    compact: (input, plan) => Effect.flatMap(validate(input), (valid) => engine.compact(valid, plan)),
    validate: (input, result) => Effect.flatMap(validate(input), (valid) => engine.validate(valid, result)),
    assembleContext: (input) => Effect.flatMap(validate(input), engine.assembleContext),
    recordOutcome: (input, outcome) => Effect.flatMap(validate(input), (valid) => engine.recordOutcome(valid, outcome))
  }
}
