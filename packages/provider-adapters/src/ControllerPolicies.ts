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
import { Errors, type ModelPolicy, PluginGuard, PolicyLimits, PolicyRegistry } from "@context-engine/core"
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

/** The policy for `model` from fields given for it (`override`) and the registry (see {@link resolve}). */
const fromFields = async (
  registry: PolicyRegistry.PolicyRegistry,
  override: Partial<ModelPolicy.ModelPolicy>,
  model: ModelRef
): Promise<ModelPolicy.ModelPolicy> => {
  const profile = ProviderProfile.forProvider(model.provider)
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
  const fallback = ProviderProfile.fallbackPolicy(profile, modelId, fields)
  const problem = PolicyLimits.check(fallback)
  if (problem) throw new Errors.PolicyInvalid({ model: modelId, ...problem })
  return fallback
}

/** Why a policy function's answer is not a partial policy (an object), or undefined. */
const notAPolicy = (value: unknown): string | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value)
    ? undefined
    : `it returned ${Array.isArray(value) ? "an array" : value === null ? "null" : typeof value}, not a partial policy object`

/**
 * The policy a policy function gives for `model`, guarded like any plug-in
 * (`PluginGuard.guardPromise`, kind `"policy"`, the default plug-in
 * deadline): a throw, a rejection or a hang rejects with `PluginFailed`
 * (`threw`, `timeout`), and an answer that is no object or an impossible
 * policy (its `PolicyInvalid`, numbers as given, in `detail`) with
 * `PluginFailed` `malformed`.
 */
const fromFunction = async (
  option: Extract<PolicyOption, (model: ModelRef) => unknown>,
  model: ModelRef
): Promise<ModelPolicy.ModelPolicy> => {
  const guard = { plugin: `policy function for ${routeOf(model)}`, kind: "policy" as const }
  const answered = await Effect.runPromiseExit(
    PluginGuard.guardPromise({ ...guard, run: () => option(model), validate: notAPolicy })
  )
  if (Exit.isFailure(answered)) throw Cause.squash(answered.cause)
  try {
    return await fromFields(PolicyRegistry.builtin, answered.value, model)
  } catch (error) {
    if ((error as { _tag?: string })._tag !== "PolicyInvalid") throw error
    throw new PluginGuard.PluginFailed({
      ...guard,
      failure: "malformed",
      timeoutMs: PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS,
      detail: (error as Errors.PolicyInvalid).message
    })
  }
}

/**
 * The policy for a model from the option, the registry and the provider
 * profile (no learned window). A model the registry does not know gets the
 * profile's fallback policy; an impossible policy object rejects with
 * `PolicyInvalid`. A policy function is a plug-in: when it fails, or gives
 * an impossible policy, this rejects with `PluginFailed` of kind `"policy"`
 * ({@link isPolicyFailure}).
 *
 * @category constructors
 */
export const resolve = async (option: PolicyOption | undefined, model: ModelRef): Promise<ModelPolicy.ModelPolicy> => {
  if (typeof option === "function") return fromFunction(option, model)
  if (isRegistry(option)) return fromFields(option, {}, model)
  return fromFields(PolicyRegistry.builtin, option ?? {}, model)
}

/**
 * Whether `error` is a policy function's failure (`PluginFailed` of kind
 * `"policy"`): the request goes out as the application sent it, since no
 * context can be measured or compacted without a policy.
 *
 * @category guards
 */
export const isPolicyFailure = (error: unknown): error is PluginGuard.PluginFailed =>
  error instanceof PluginGuard.PluginFailed && error.kind === "policy"

/**
 * Throws what a plain policy object gets wrong for every model, when the
 * controller is made rather than at its first request: an impossible number
 * or fields that contradict each other whatever the model
 * (`PolicyLimits.checkPartial`: `reserveTokens` 9,000 in a 4,000-token
 * window) and, when it names its `model`, any `PolicyInvalid` its
 * resolution fails with. An unknown `model` is not an error here (the
 * request's provider profile gives its fallback policy).
 */
const checkEarly = (option: PolicyOption | undefined): void => {
  if (option === undefined || typeof option === "function" || isRegistry(option)) return
  const problem = PolicyLimits.checkPartial(option)
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
