/**
 * Regression cases in the shared case-file format (`../shared/cases`, one
 * JSON file per case named `<id>-<slug>.json`): the loader, and the mapping
 * of a case's `policy` object to a validated {@link ModelPolicy}. The case
 * format is a test input, not part of core's main API.
 *
 * @since 0.2.0
 */
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
