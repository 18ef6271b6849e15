/**
 * The policy a controller uses for a model (see `ControllerOptions.PolicyOption`):
 * resolved once per model from the option, the registry and the provider
 * profile; the window learned after an overflow applied on top; native
 * compaction turned off on a route where it was found unavailable (C19);
 * the byte cap learned from a 413 applied on its route (C20).
 *
 * Policies are cached per model, per learned window and per native-off
 * policy when the option is not a function (a function may answer
 * differently each call): the same policy object each step keeps the
 * engine's caches (validated input, measurement) warm.
 *
 * @since 0.3.0
 */
import { Errors, type ModelPolicy, PolicyLimits, PolicyRegistry } from "@context-engine/core"
import { OverflowRecovery } from "@context-engine/engines"
import { Cause, Effect, Exit } from "effect"
import { isRegistry, type ModelRef, type PolicyOption, routeOf } from "./ControllerOptions.ts"
import type * as NativeFallback from "./NativeFallback.ts"
import * as ProviderProfile from "./ProviderProfile.ts"
import type * as Session from "./Session.ts"

const NATIVE_OFF: ModelPolicy.NativeCompaction = {
  anthropicContextEditing: false,
  anthropicCompaction: false,
  openaiResponsesCompaction: false
}

/**
 * The policy for a model from the option, the registry and the provider
 * profile (no learned window). A model the registry does not know gets the
 * profile's fallback policy; an impossible policy rejects with `PolicyInvalid`.
 *
 * @category constructors
 */
export const resolve = async (option: PolicyOption | undefined, model: ModelRef): Promise<ModelPolicy.ModelPolicy> => {
  const profile = ProviderProfile.forProvider(model.provider)
  const registry = isRegistry(option) ? option : PolicyRegistry.builtin
  const override: Partial<ModelPolicy.ModelPolicy> =
    typeof option === "function" ? await option(model) : isRegistry(option) ? {} : (option ?? {})
  const modelId = override.model ?? model.modelId
  const known = Exit.isSuccess(await Effect.runPromiseExit(registry.lookup(modelId)))
  const fields =
    known || override.tokenizer !== undefined ? override : { ...override, tokenizer: profile.tokenizer(modelId) }
  const resolved = await Effect.runPromiseExit(
    registry.resolve({ ...fields, model: modelId } as PolicyRegistry.PolicyOverride)
  )
  if (Exit.isSuccess(resolved)) return resolved.value
  const error = Cause.squash(resolved.cause)
  if ((error as { _tag?: string })._tag !== "UnknownModel") throw error
  return ProviderProfile.fallbackPolicy(profile, modelId, fields)
}

/**
 * Throws what a plain policy object gets wrong for every model, when the
 * controller is made rather than at its first request: an impossible number
 * (`PolicyLimits.checkNumbers`) and, when it names its `model`, any
 * `PolicyInvalid` its resolution fails with. An unknown `model` is not an
 * error here (the request's provider profile gives its fallback policy).
 */
const checkEarly = (option: PolicyOption | undefined): void => {
  if (option === undefined || typeof option === "function" || isRegistry(option)) return
  const problem = PolicyLimits.checkNumbers(option)
  if (problem) throw new Errors.PolicyInvalid({ model: option.model ?? "(any model)", ...problem })
  if (option.model === undefined) return
  const resolved = Effect.runSyncExit(PolicyRegistry.resolve(option as PolicyRegistry.PolicyOverride))
  const error = Exit.isFailure(resolved) ? Cause.squash(resolved.cause) : undefined
  if ((error as { _tag?: string } | undefined)?._tag === "PolicyInvalid") throw error
}

/**
 * `policyFor(model, session?)`: the policy used for a model, learned window
 * applied, native compaction off on a route in `nativeRoutes`. A plain
 * policy object whose numbers are impossible throws `PolicyInvalid` here,
 * at construction.
 *
 * @category constructors
 */
export const make = (
  option: PolicyOption | undefined,
  sessionOf: (model: ModelRef) => Promise<Session.Session>,
  nativeRoutes: NativeFallback.Routes,
  learnedBodyBytes: ReadonlyMap<string, number> = new Map()
): ((model: ModelRef, current?: Session.Session) => Promise<ModelPolicy.ModelPolicy>) => {
  checkEarly(option)
  const cacheable = typeof option !== "function"
  const basePolicies = new Map<string, ModelPolicy.ModelPolicy>()
  const learnedPolicies = new Map<string, ModelPolicy.ModelPolicy>()
  // A route where native compaction failed gets its policy without native features (one object per policy).
  const localPolicies = new WeakMap<ModelPolicy.ModelPolicy, Map<string, ModelPolicy.ModelPolicy>>()

  const routePolicy = async (model: ModelRef, current?: Session.Session): Promise<ModelPolicy.ModelPolicy> => {
    const baseKey = `${model.provider}\u0000${model.modelId}`
    let base = cacheable ? basePolicies.get(baseKey) : undefined
    if (base === undefined) {
      base = await resolve(option, model)
      if (cacheable) basePolicies.set(baseKey, base)
    }
    const learned = (current ?? (await sessionOf(model))).learnedWindow(base.model)
    if (learned === undefined) return base
    const key = `${baseKey}\u0000${learned}`
    let policy = cacheable ? learnedPolicies.get(key) : undefined
    if (policy === undefined) {
      policy = OverflowRecovery.applyLearnedWindow(base, learned)
      if (cacheable) learnedPolicies.set(key, policy)
    }
    return policy
  }

  return async (model, current) => {
    const policy = await routePolicy(model, current)
    const nativeOff = nativeRoutes.reasonFor(routeOf(model)) !== undefined
    const bytes = learnedBodyBytes.get(routeOf(model))
    if (!nativeOff && bytes === undefined) return policy
    const key = `${nativeOff}:${bytes}`
    let byKey = localPolicies.get(policy)
    if (byKey === undefined) {
      byKey = new Map()
      localPolicies.set(policy, byKey)
    }
    let local = byKey.get(key)
    if (local === undefined) {
      local = {
        ...policy,
        ...(nativeOff ? { nativeCompaction: NATIVE_OFF } : {}),
        ...(bytes !== undefined ? { maxRequestBodyBytes: Math.min(bytes, policy.maxRequestBodyBytes ?? bytes) } : {})
      }
      byKey.set(key, local)
    }
    return local
  }
}
