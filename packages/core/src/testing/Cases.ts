/**
 * Regression cases in the shared case-file format (`../shared/cases`, one
 * JSON file per case named `<id>-<slug>.json`): the loader, and the mapping
 * of a case's `policy` object to a validated {@link ModelPolicy}. The case
 * format is a test input, not part of core's main API.
 *
 * @since 0.2.0
 */
import { createHash } from "node:crypto"
import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect, Exit, Schema } from "effect"
import type { PolicyInvalid } from "../Errors.ts"
import type { ModelPolicy } from "../ModelPolicy.ts"
import * as PolicyRegistry from "../PolicyRegistry.ts"

/**
 * The `policy` object of a case: window and output limit, and where given
 * the keep-recent and reserve tokens, all in tokens.
 *
 * @category schemas
 */
export const CasePolicy = Schema.Struct({
  contextWindow: Schema.Number,
  maxOutputTokens: Schema.Number,
  keepRecentTokens: Schema.optionalKey(Schema.Number),
  reserveTokens: Schema.optionalKey(Schema.Number)
})
/** @category models */
export type CasePolicy = typeof CasePolicy.Type

/**
 * Maps a case's `policy` to a validated {@link ModelPolicy} for a model the
 * registry does not know (`PolicyRegistry.fallback` with the case's
 * numbers): fields the case leaves out are derived as for any model; for C04
 * (128,000 / 16,000) that reserves the 16,000 output tokens the case speaks of.
 *
 * @category constructors
 */
export const policy = (casePolicy: CasePolicy, model = "case"): Effect.Effect<ModelPolicy, PolicyInvalid> =>
  PolicyRegistry.fallback(model, {
    contextWindowTokens: casePolicy.contextWindow,
    maxOutputTokens: casePolicy.maxOutputTokens,
    ...(casePolicy.keepRecentTokens !== undefined ? { keepRecentTokens: casePolicy.keepRecentTokens } : {}),
    ...(casePolicy.reserveTokens !== undefined ? { reserveTokens: casePolicy.reserveTokens } : {})
  })

/**
 * Synchronous {@link policy}: returns the policy or throws `PolicyInvalid`.
 *
 * @example
 * ```ts
 * import { Cases } from "@context-engine/core/testing"
 * const policy = Cases.policySync({ contextWindow: 20_000, maxOutputTokens: 2_000 })
 * policy.contextWindowTokens // 20000
 * ```
 *
 * @category constructors
 */
export const policySync = (casePolicy: CasePolicy, model = "case"): ModelPolicy => {
  const exit = Effect.runSyncExit(policy(casePolicy, model))
  if (Exit.isSuccess(exit)) return exit.value
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail")
  throw failure ? failure.error : exit.cause
}

/**
 * A loader of the cases in `directory`: `load("C07")` parses the file whose
 * name starts with `C07-`. Throws an `Error` naming the directory when no
 * file matches. The JSON is returned as is (typed by the caller).
 *
 * @example
 * ```ts
 * import { Cases } from "@context-engine/core/testing"
 * const loadCase = Cases.loader("../shared/cases")
 * const c01 = loadCase<{ messages: Array<unknown>; policy: Cases.CasePolicy }>("C01")
 * ```
 *
 * @category constructors
 */
export const loader =
  (directory: string) =>
  <A = Record<string, unknown>>(id: string): A => {
    const file = readdirSync(directory).find((name) => name.startsWith(`${id}-`))
    if (!file) throw new Error(`no case ${id} in ${directory}`)
    return JSON.parse(readFileSync(join(directory, file), "utf8")) as A
  }

/**
 * A `{{blob:NAME}}` generator of a case (the cases' `blobRule`): `base64` —
 * `prefix` followed by the encoding of SHA-256(seed:0) || SHA-256(seed:1) || …
 * cut to `length` characters; `lines` — `count` lines from `templates` with
 * `{i}`, `{a}` = (i × 7919) mod 1000, `{b}` = (i × 104729) mod 100000 and
 * `{t}` = 09:00:00 + 11 × i seconds, joined with `\n`.
 *
 * @category models
 */
export type Blob =
  | {
      readonly kind: "base64"
      readonly prefix: string
      readonly alphabet: "base64" | "base64url"
      readonly seed: string
      readonly length: number
    }
  | { readonly kind: "lines"; readonly count: number; readonly templates: ReadonlyArray<string> }

const clock = (seconds: number): string =>
  [Math.floor(seconds / 3600) % 24, Math.floor(seconds / 60) % 60, seconds % 60]
    .map((part) => String(part).padStart(2, "0"))
    .join(":")

/**
 * The text of one blob (see {@link Blob}).
 *
 * @category constructors
 */
export const blobText = (blob: Blob): string => {
  if (blob.kind === "lines")
    return Array.from({ length: blob.count }, (_, index) => {
      const i = index + 1
      return blob.templates[index % blob.templates.length]!.replaceAll("{i}", String(i))
        .replaceAll("{a}", String((i * 7919) % 1000))
        .replaceAll("{b}", String((i * 104729) % 100000))
        .replaceAll("{t}", clock(9 * 3600 + 11 * i))
    }).join("\n")
  const chars = blob.length - blob.prefix.length
  const bytes = Buffer.alloc(Math.ceil(chars / 4) * 3 + 32)
  for (let block = 0, offset = 0; offset < bytes.length; block++, offset += 32)
    createHash("sha256").update(`${blob.seed}:${block}`).digest().copy(bytes, offset)
  return `${blob.prefix}${bytes.toString(blob.alphabet).slice(0, chars)}`
}

/**
 * A value with every `{{blob:NAME}}` placeholder in its strings replaced by
 * the blob's text (a new value; the input is not changed).
 *
 * @category constructors
 */
export const expandBlobs = <A>(value: A, blobs: Readonly<Record<string, Blob>>): A => {
  const texts = new Map<string, string>()
  const text = (name: string): string => {
    const known = texts.get(name)
    if (known !== undefined) return known
    const blob = blobs[name]
    if (!blob) throw new Error(`no blob ${name}`)
    const made = blobText(blob)
    texts.set(name, made)
    return made
  }
  const walk = (item: unknown): unknown =>
    typeof item === "string"
      ? item.replace(/\{\{blob:(\w+)\}\}/g, (_, name: string) => text(name))
      : Array.isArray(item)
        ? item.map(walk)
        : typeof item === "object" && item !== null
          ? Object.fromEntries(Object.entries(item).map(([key, inner]) => [key, walk(inner)]))
          : item
  return walk(value) as A
}
