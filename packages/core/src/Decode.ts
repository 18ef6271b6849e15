/**
 * Decoding unknown input into schema types with {@link InvalidInput} errors
 * that name the path of the bad field.
 *
 * @since 0.1.0
 */
import { Effect, Exit, Schema, SchemaIssue } from "effect"
import { InvalidInput } from "./Errors.ts"

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join("")

/**
 * Turns a schema issue into an {@link InvalidInput} naming the first bad path.
 *
 * @category errors
 */
export const toInvalidInput = (what: string, issue: SchemaIssue.Issue): InvalidInput => {
  const first = standard(issue).issues[0]
  return new InvalidInput({
    what,
    path: first?.path ? formatPath(first.path.map((p) => (typeof p === "object" ? p.key : p))) : "",
    detail: first?.message ?? "invalid value"
  })
}

/**
 * Decodes `input` with `schema`, failing with {@link InvalidInput}.
 *
 * @category decoding
 */
export const decodeUnknown =
  <S extends Schema.Decoder<unknown>>(schema: S, what: string) =>
  (input: unknown): Effect.Effect<S["Type"], InvalidInput> =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(input), (error) =>
      toInvalidInput(what, error.issue)
    ) as Effect.Effect<S["Type"], InvalidInput>

/**
 * Synchronous form of {@link decodeUnknown}: returns the value or throws the
 * typed {@link InvalidInput}.
 *
 * @category decoding
 */
export const decodeUnknownSync =
  <S extends Schema.Decoder<unknown>>(schema: S, what: string) =>
  (input: unknown): S["Type"] => {
    const exit = Schema.decodeUnknownExit(schema)(input)
    if (Exit.isSuccess(exit)) return exit.value
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error as Schema.SchemaError | undefined
    throw error ? toInvalidInput(what, error.issue) : new InvalidInput({ what, path: "", detail: "invalid value" })
  }
