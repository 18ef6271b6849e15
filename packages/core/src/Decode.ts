/**
 * Decoding unknown input into schema types with {@link InvalidInput} errors
 * that name the path of the bad field.
 *
 * @since 0.1.0
 */
import { Effect, Exit, Schema, type SchemaAST, SchemaIssue } from "effect"
import { InvalidInput } from "./Errors.ts"

const standard = SchemaIssue.makeFormatterStandardSchemaV1()

const formatPath = (path: ReadonlyArray<PropertyKey>): string =>
  path
    .map((key, index) => (typeof key === "number" ? `[${key}]` : index === 0 ? String(key) : `.${String(key)}`))
    .join("")

/** Longest rendering of an offending value in a `detail`. */
const MAX_VALUE_CHARS = 80

const showValue = (value: unknown): string => {
  const text = value === undefined ? "undefined" : (JSON.stringify(value) ?? String(value))
  return text.length > MAX_VALUE_CHARS ? `${text.slice(0, MAX_VALUE_CHARS)}… (${text.length} chars)` : text
}

const truncateDetail = (detail: string): string =>
  detail.length > 400 ? `${detail.slice(0, 400)}… (${detail.length} chars)` : detail

interface Discriminant {
  readonly path: ReadonlyArray<PropertyKey>
  readonly key: string
  readonly expected: ReadonlyArray<unknown>
  readonly actual: unknown
}

/** The literal values each union member requires at `key`, or undefined when a member has no literal there. */
const literalsAt = (types: ReadonlyArray<SchemaAST.AST>, key: string): ReadonlyArray<unknown> | undefined => {
  const out: Array<unknown> = []
  for (const member of types) {
    if (member._tag !== "Objects") return undefined
    const property = member.propertySignatures.find((signature) => signature.name === key)
    if (!property) return undefined
    const type = property.type
    if (type._tag === "Literal") out.push(type.literal)
    else if (type._tag === "Union" && type.types.every((t) => t._tag === "Literal")) {
      for (const t of type.types) if (t._tag === "Literal") out.push(t.literal)
    } else return undefined
  }
  return [...new Set(out)]
}

/**
 * Finds a union of tagged structs (`role`, `type`, `kind`, `op` …) whose
 * input has a missing or unknown tag, so the error can name `…role` and the
 * tag's value instead of listing every member's shape at the parent.
 */
const findDiscriminant = (issue: SchemaIssue.Issue, path: ReadonlyArray<PropertyKey>): Discriminant | undefined => {
  if (issue._tag === "Pointer") return findDiscriminant(issue.issue, [...path, ...issue.path])
  if (issue._tag === "AnyOf" && issue.ast._tag === "Union") {
    const input = "input" in issue ? (issue.input as unknown) : undefined
    if (typeof input === "object" && input !== null && !Array.isArray(input)) {
      const first = issue.ast.types[0]
      const keys = first?._tag === "Objects" ? first.propertySignatures.map((signature) => String(signature.name)) : []
      for (const key of keys) {
        const expected = literalsAt(issue.ast.types, key)
        if (!expected) continue
        const actual = (input as Record<string, unknown>)[key]
        if (!expected.includes(actual)) return { path: [...path, key], key, expected, actual }
      }
    }
  }
  const children: ReadonlyArray<SchemaIssue.Issue> =
    "issues" in issue && Array.isArray(issue.issues)
      ? issue.issues
      : "issue" in issue && issue.issue
        ? [issue.issue as SchemaIssue.Issue]
        : []
  for (const child of children) {
    const found = findDiscriminant(child, path)
    if (found) return found
  }
  return undefined
}

/**
 * Turns a schema issue into an {@link InvalidInput} naming the first bad path
 * and, when the issue carries it (decoding with `reportInput`), the offending
 * value: `content[0].text: Expected string, got 1`. A union of tagged structs
 * with an unknown or missing tag is reported at the tag
 * (`role: Expected "system" | "user" | "assistant" | "tool", got "developer"`).
 *
 * @category errors
 */
export const toInvalidInput = (what: string, issue: SchemaIssue.Issue): InvalidInput => {
  const first = standard(issue).issues[0]
  const firstPath = first?.path ? first.path.map((p) => (typeof p === "object" ? p.key : p)) : []
  const discriminant = findDiscriminant(issue, [])
  if (
    discriminant &&
    discriminant.path.length === firstPath.length + 1 &&
    formatPath(discriminant.path.slice(0, -1)) === formatPath(firstPath)
  ) {
    const expected = discriminant.expected.map((literal) => JSON.stringify(literal)).join(" | ")
    return new InvalidInput({
      what,
      path: formatPath(discriminant.path),
      detail:
        discriminant.actual === undefined
          ? `Missing key ${JSON.stringify(discriminant.key)}; expected ${expected}`
          : `Expected ${expected}, got ${showValue(discriminant.actual)}`
    })
  }
  return new InvalidInput({
    what,
    path: formatPath(firstPath),
    detail: truncateDetail(first?.message ?? "invalid value")
  })
}

const options = { reportInput: true } as const

/**
 * Decodes `input` with `schema`, failing with {@link InvalidInput}.
 *
 * @category decoding
 */
export const decodeUnknown =
  <S extends Schema.Decoder<unknown>>(schema: S, what: string) =>
  (input: unknown): Effect.Effect<S["Type"], InvalidInput> =>
    Effect.mapError(Schema.decodeUnknownEffect(schema)(input, options), (error) =>
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
    const exit = Schema.decodeUnknownExit(schema)(input, options)
    if (Exit.isSuccess(exit)) return exit.value
    const error = exit.cause.reasons.find((reason) => reason._tag === "Fail")?.error as Schema.SchemaError | undefined
    throw error ? toInvalidInput(what, error.issue) : new InvalidInput({ what, path: "", detail: "invalid value" })
  }
