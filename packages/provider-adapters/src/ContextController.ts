/**
 * The request-path driver shared by the AI SDK middleware and the
 * `prepareStep` helper: syncs the session transcript with the messages the
 * application sends, asks the engine whether to compact, compacts, assembles
 * the context to send, records the provider's outcome, recovers once from a
 * context overflow, and (for provider-native engines) builds provider options
 * and reads applied edits / compaction items back.
 *
 * Plain async throughout; the engine's Effects are run with `toAsync`.
 *
 * @since 0.1.0
 */
import {
  ContextEngine,
  type ContextView,
  Entry,
  Errors,
  type Message,
  type ModelPolicy,
  PluginGuard,
  PolicyRegistry,
  Telemetry,
  Tokenizers
} from "@context-engine/core"
import { OverflowRecovery, ProviderNativeEngine } from "@context-engine/engines"
import { Offload } from "@context-engine/strategies"
import { Cause, Effect, Exit } from "effect"
import * as GuardedCompaction from "./GuardedCompaction.ts"
import * as IdleReturn from "./IdleReturn.ts"
import * as NativeFallback from "./NativeFallback.ts"
import type * as OverflowClassifier from "./OverflowClassifier.ts"
import * as ProviderProfile from "./ProviderProfile.ts"
import * as RolloutMode from "./RolloutMode.ts"
import * as Session from "./Session.ts"

/**
 * The model a request goes to (`LanguageModelV4.provider` / `.modelId`).
 *
 * @category models
 */
export interface ModelRef {
  readonly provider: string
  readonly modelId: string
}

/**
 * How the policy for a model is found:
 *
 * - a `PolicyRegistry` (e.g. from `PolicyFile.loadPolicyFilePromise` of
 *   `@context-engine/core/node`): its
 *   lookup of the model id;
 * - a partial policy, or a function of the model returning one: resolved
 *   with core's built-in registry (`PolicyRegistry.resolve`: catalog facts,
 *   derived reserves, the given fields on top);
 * - nothing: the built-in registry's lookup of the model id.
 *
 * A model the registry does not know gets the provider profile's fallback
 * policy ({@link ProviderProfile.fallbackPolicy}) with the given fields, and
 * the profile's tokenizer unless one is given. An impossible policy rejects
 * with core's `PolicyInvalid`. The window learned after an overflow is
 * applied on top.
 *
 * @category models
 */
export type PolicyOption =
  | Partial<ModelPolicy.ModelPolicy>
  | PolicyRegistry.PolicyRegistry
  | ((model: ModelRef) => Partial<ModelPolicy.ModelPolicy> | Promise<Partial<ModelPolicy.ModelPolicy>>)

const isRegistry = (option: PolicyOption | undefined): option is PolicyRegistry.PolicyRegistry =>
  typeof option === "object" && option !== null && "lookup" in option && typeof option.lookup === "function"

/**
 * What happened, for logs and example output. Handlers run synchronously and
 * in order; a handler that throws is ignored.
 *
 * @category models
 */
export type ContextEvent =
  | {
      readonly type: "request"
      readonly sessionId: string
      readonly model: ModelRef
      /** Measured input tokens of what is sent. */
      readonly inputTokens: number
      /** The largest input the policy allows. */
      readonly budgetTokens: number
      readonly contextWindowTokens: number
      readonly messagesSent: number
      readonly messagesInTranscript: number
      /** Whether what is sent differs from what the application passed. */
      readonly rewritten: boolean
    }
  | {
      readonly type: "compaction"
      readonly sessionId: string
      readonly reasons: ReadonlyArray<ContextEngine.CompactionReason>
      readonly tokensBefore: number
      readonly tokensAfter: number
      readonly stages: ReadonlyArray<ContextEngine.StageReport>
      readonly checkpointId?: string
      /** The rollout mode; in `shadow` (and `advisory` with a checkpoint) the checkpoint was recorded, not applied. */
      readonly mode?: RolloutMode.RolloutMode
      /** Id of the shadow entry holding what was withheld. */
      readonly shadowEntryId?: string
    }
  | {
      readonly type: "compaction-failed"
      readonly sessionId: string
      readonly error: GuardedCompaction.Failure
      /** Failures in a row on this route, this one included. */
      readonly consecutiveFailures: number
      /** The circuit opened: later automatic compactions on this route are skipped. */
      readonly circuitOpen: boolean
    }
  | { readonly type: "compaction-skipped"; readonly sessionId: string; readonly reason: string }
  | {
      readonly type: "overflow"
      readonly sessionId: string
      readonly overflow: Errors.ContextOverflow
      readonly learnedWindowTokens: number
    }
  | {
      readonly type: "usage"
      readonly sessionId: string
      readonly inputTokens?: number
      readonly outputTokens?: number
      readonly cachedInputTokens?: number
    }
  | { readonly type: "native"; readonly sessionId: string; readonly entries: ReadonlyArray<Entry.Entry> }
  | {
      /** Native compaction does not work on this route (C19): it is off for the route, compaction is local. */
      readonly type: "native-unavailable"
      readonly sessionId: string
      /** `provider:modelId`. */
      readonly route: string
      readonly reason: NativeFallback.Reason
      /** The native threshold that was sent, in tokens. */
      readonly thresholdTokens?: number
    }

/**
 * Controller options.
 *
 * @category models
 */
export interface ControllerOptions {
  /** Any engine implementing the `ContextEngine` interface (Effect or Promise face). */
  readonly engine: ContextEngine.ContextEngine | ContextEngine.AsyncContextEngine
  readonly policy?: PolicyOption
  /** Persists the transcript; in memory when absent. */
  readonly store?: Session.SessionStore
  /** Session id, or a function of the model. Default `"default"`. */
  readonly sessionId?: string | ((model: ModelRef) => string)
  readonly onEvent?: (event: ContextEvent) => void
  /** Compact-and-retry once on a classified context overflow. Default `true`. */
  readonly overflowRecovery?: boolean
  /**
   * Rollout mode (`RolloutMode.ts`): `shadow` records what compaction would
   * do and sends the request unchanged; `advisory` applies only the
   * deterministic tiers; `active` (default) applies everything.
   */
  readonly mode?: RolloutMode.RolloutMode
  /**
   * Offload large tool results as they arrive (`Offload`: head + tail + a
   * pointer in the view, original in the transcript). Default on with
   * `Offload.defaults` (20,000 tokens, in the policy's tokenizer); `false`
   * turns it off.
   */
  readonly offload?: Offload.Options | false
  /**
   * Idle return (`IdleReturn`): after the provider's prompt cache expired, a
   * request of at least `thresholdTokens` (default 100,000) is compacted
   * (as a manual compaction) before it is sent, once per cache window.
   * Default on; `false` turns it off.
   */
  readonly idleReturn?: IdleReturn.Options | false
  /** Clock (default `() => new Date()`), for the idle-return check. */
  readonly now?: () => Date
  /** Deadline of one compaction in ms (default `GuardedCompaction.DEFAULT_COMPACTION_TIMEOUT_MS`). */
  readonly compactionTimeoutMs?: number
  /**
   * Consecutive failed compactions after which automatic compaction stops on
   * a route (default `PluginGuard.DEFAULT_MAX_CONSECUTIVE_FAILURES`, 3).
   */
  readonly maxConsecutiveCompactionFailures?: number
  /**
   * Deadline in ms for the first content part of a response to a request
   * that carries native compaction options; past it the request is aborted
   * and the route falls back to local compaction (`NativeFallback`, C19).
   * Default `NativeFallback.DEFAULT_RESPONSE_TIMEOUT_MS` (300,000).
   */
  readonly nativeResponseTimeoutMs?: number
}

/**
 * One prepared request: what was sent and what it was built from.
 *
 * @category models
 */
export interface Prepared {
  readonly session: Session.Session
  readonly model: ModelRef
  readonly profile: ProviderProfile.ProviderProfile
  readonly input: ContextEngine.EngineInput
  readonly assembled: ContextEngine.AssembledContext
  /** Messages to send (without ephemeral system instructions). */
  readonly messages: ReadonlyArray<Message.Message>
  /** Whether `messages` differ from what the application passed. */
  readonly rewritten: boolean
  /** Provider options a provider-native engine asks for, already keyed by provider. */
  readonly providerOptions?: Message.ProviderOptions
}

/**
 * Provider usage as the controller records it.
 *
 * @category models
 */
export interface Usage {
  readonly inputTokens?: number | undefined
  readonly outputTokens?: number | undefined
  readonly cachedInputTokens?: number | undefined
}

/**
 * The controller.
 *
 * @category models
 */
export interface ContextController {
  readonly engine: ContextEngine.ContextEngine
  /** The session for a model (opened on first use). */
  readonly session: (model: ModelRef) => Promise<Session.Session>
  /** The policy used for a model, learned window applied. */
  readonly policyFor: (model: ModelRef, session?: Session.Session) => Promise<ModelPolicy.ModelPolicy>
  /**
   * Syncs `messages` into the transcript, compacts when the engine says so,
   * and assembles what to send. `ephemeralSystem` (e.g. `prepareStep`
   * instructions) is measured but not stored or returned.
   */
  readonly prepare: (
    model: ModelRef,
    messages: ReadonlyArray<Message.Message>,
    tools: ReadonlyArray<ContextView.ToolDefinition>,
    ephemeralSystem?: ReadonlyArray<Message.Message>,
    /** The caller's abort signal (AI SDK `abortSignal`): compaction stops when it fires. */
    signal?: AbortSignal
  ) => Promise<Prepared>
  /** Records a successful response's usage and reads provider-native items back. */
  readonly recordSuccess: (
    prepared: Prepared,
    usage: Usage,
    response?: ProviderNativeEngine.NativeResponse
  ) => Promise<void>
  /**
   * On a classified overflow: compacts against the reported limit, records
   * the overflow, learns the window and returns the context for the single
   * retry. Returns `undefined` when `error` is not an overflow (or recovery
   * is off) — the caller rethrows it.
   */
  readonly recoverOverflow: (prepared: Prepared, error: unknown) => Promise<Prepared | undefined>
  /** Routes (`provider:modelId`) on which native compaction was found unavailable. */
  readonly nativeRoutes: NativeFallback.Routes
  /**
   * Native compaction failed on the prepared request's route (C19): turns it
   * off for the route, records an `provider-native-unavailable` event entry,
   * emits `native-unavailable`, and makes the session's next `prepare`
   * compact locally (as a manual compaction).
   */
  readonly nativeUnavailable: (
    prepared: Prepared,
    reason: NativeFallback.Reason,
    thresholdTokens: number | undefined
  ) => Promise<void>
}

const toEffectEngine = (
  engine: ContextEngine.ContextEngine | ContextEngine.AsyncContextEngine
): ContextEngine.ContextEngine => {
  const effectEngine =
    "engine" in engine && typeof engine.engine === "object" ? engine.engine : (engine as ContextEngine.ContextEngine)
  const version: unknown = effectEngine.specificationVersion
  if (version !== ContextEngine.SPECIFICATION_VERSION)
    throw new Errors.InvalidInput({
      what: "context engine",
      path: "engine.specificationVersion",
      detail: `engine "${effectEngine.name}" implements specificationVersion ${JSON.stringify(version)}; this middleware runs ${ContextEngine.SPECIFICATION_VERSION}`
    })
  return effectEngine
}

const emit = (options: ControllerOptions, event: ContextEvent): void => {
  try {
    options.onEvent?.(event)
  } catch {
    // Event handlers are observers; they never break a request.
  }
}

const EPHEMERAL_PREFIX = "ephemeral:"

const NATIVE_OFF: ModelPolicy.NativeCompaction = {
  anthropicContextEditing: false,
  anthropicCompaction: false,
  openaiResponsesCompaction: false
}

/** Entries for the per-request system messages: never stored, chained from the root at time 0. */
const ephemeralEntries = (messages: ReadonlyArray<Message.Message>): ReadonlyArray<Entry.Entry> =>
  Entry.chain(
    null,
    new Date(0).toISOString(),
    messages.map((message, index) => ({
      id: `${EPHEMERAL_PREFIX}${index}`,
      body: { kind: "message" as const, message }
    }))
  )

/**
 * Appends one offload edit entry per newly arrived tool result over the
 * threshold (counted with the policy's tokenizer unless the options give a
 * counter).
 */
const offloadArrivals = async (
  current: Session.Session,
  arrived: ReadonlyArray<Entry.Entry>,
  policy: ModelPolicy.ModelPolicy,
  offload: Offload.Options
): Promise<void> => {
  if (!arrived.some((entry) => entry.kind === "message" && entry.message.role === "tool")) return
  const countTokens = offload.countTokens ?? Tokenizers.forPolicy(policy).count
  const edits = Offload.editsFor(arrived, { ...offload, countTokens })
  if (edits.length === 0) return
  const timestamp = new Date().toISOString()
  const entries = Entry.chain(
    current.entries().at(-1)?.id ?? null,
    timestamp,
    edits.map((edit) => ({ id: current.nextId(), body: { kind: "edit" as const, edit } }))
  )
  await current.append(entries)
}

/**
 * Builds a controller.
 *
 * @category constructors
 */
export const make = (options: ControllerOptions): ContextController => {
  const engine = toEffectEngine(options.engine)
  const asyncEngine = ContextEngine.toAsync(engine)
  const breaker = PluginGuard.makeCircuitBreaker(options.maxConsecutiveCompactionFailures)
  const native = ProviderNativeEngine.isProviderNative(engine) ? engine : undefined
  const sessions = new Map<string, Promise<Session.Session>>()
  // Requests of one session are prepared one at a time, so concurrent calls never interleave their transcript syncs.
  const locks = new Map<string, Promise<unknown>>()
  const exclusive = <A>(sessionId: string, task: () => Promise<A>): Promise<A> => {
    const previous = locks.get(sessionId) ?? Promise.resolve()
    const next = previous.then(task, task)
    locks.set(
      sessionId,
      next.catch(() => undefined)
    )
    return next
  }

  const session = (model: ModelRef): Promise<Session.Session> => {
    const id = typeof options.sessionId === "function" ? options.sessionId(model) : (options.sessionId ?? "default")
    let opened = sessions.get(id)
    if (opened === undefined) {
      opened = Session.make(id, options.store)
      sessions.set(id, opened)
    }
    return opened
  }

  // Policies per model (before the learned window) and per learned window, when the option is not a
  // function (a function may answer differently each call). The same policy object each step also keeps
  // the engine's caches (validated input, measurement) warm.
  const basePolicies = new Map<string, ModelPolicy.ModelPolicy>()
  const learnedPolicies = new Map<string, ModelPolicy.ModelPolicy>()
  const nativeRoutes = NativeFallback.makeRoutes()
  const routeOf = (model: ModelRef): string => `${model.provider}:${model.modelId}`
  // A route where native compaction failed gets its policy without native features (one object per policy).
  const localPolicies = new WeakMap<ModelPolicy.ModelPolicy, ModelPolicy.ModelPolicy>()
  const policyFor = async (model: ModelRef, current?: Session.Session): Promise<ModelPolicy.ModelPolicy> => {
    const policy = await routePolicy(model, current)
    if (nativeRoutes.reasonFor(routeOf(model)) === undefined) return policy
    let local = localPolicies.get(policy)
    if (local === undefined) {
      local = { ...policy, nativeCompaction: NATIVE_OFF }
      localPolicies.set(policy, local)
    }
    return local
  }
  const routePolicy = async (model: ModelRef, current?: Session.Session): Promise<ModelPolicy.ModelPolicy> => {
    const cacheable = typeof options.policy !== "function"
    const baseKey = `${model.provider}\u0000${model.modelId}`
    let base = cacheable ? basePolicies.get(baseKey) : undefined
    if (base === undefined) {
      base = await resolvePolicy(model)
      if (cacheable) basePolicies.set(baseKey, base)
    }
    const learned = (current ?? (await session(model))).learnedWindow(base.model)
    if (learned === undefined) return base
    const key = `${baseKey}\u0000${learned}`
    let policy = cacheable ? learnedPolicies.get(key) : undefined
    if (policy === undefined) {
      policy = OverflowRecovery.applyLearnedWindow(base, learned)
      if (cacheable) learnedPolicies.set(key, policy)
    }
    return policy
  }

  /** The policy for a model from the option, the registry and the provider profile (no learned window). */
  const resolvePolicy = async (model: ModelRef): Promise<ModelPolicy.ModelPolicy> => {
    const profile = ProviderProfile.forProvider(model.provider)
    const option = options.policy
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

  const assemble = async (
    current: Session.Session,
    model: ModelRef,
    input: ContextEngine.EngineInput,
    original: ReadonlyArray<Message.Message>
  ): Promise<Prepared> => {
    const assembled = await asyncEngine.assembleContext(input)
    const items = assembled.view.items.filter((item) => !item.entryId.startsWith(EPHEMERAL_PREFIX))
    const messages = items.map((item) => item.message)
    // What was synced is the session's message entries (the AI SDK's new objects were matched to them).
    const synced = current.messageEntries()
    const rewritten =
      messages.length !== original.length ||
      messages.some((message, index) => message !== original[index] && message !== synced[index]?.message)
    const providerOptions = native?.providerOptions(input)
    emit(options, {
      type: "request",
      sessionId: current.sessionId,
      model,
      inputTokens: assembled.measurement.inputTokens,
      budgetTokens: assembled.measurement.budgetTokens,
      contextWindowTokens: input.policy.contextWindowTokens,
      messagesSent: messages.length,
      messagesInTranscript: synced.length,
      rewritten
    })
    return {
      session: current,
      model,
      profile: ProviderProfile.forProvider(model.provider),
      input,
      assembled,
      messages: rewritten ? messages : original,
      rewritten,
      ...(providerOptions !== undefined ? { providerOptions } : {})
    }
  }

  const mode = options.mode ?? "active"

  /** Commits what the mode allows of a compaction and reports it. */
  const commitIn = async (
    current: Session.Session,
    input: ContextEngine.EngineInput,
    result: ContextEngine.CompactionResult,
    reasons: ReadonlyArray<ContextEngine.CompactionReason>
  ): Promise<void> => {
    const last = current.entries().at(-1)
    const { commit, shadow } = RolloutMode.split(mode, result, reasons, {
      id: current.nextId(),
      parentId: last?.id ?? null,
      timestamp: new Date().toISOString()
    })
    let committed = commit
    if (mode === "advisory" && result.checkpoint !== undefined) {
      // The checkpoint is recorded as a shadow; what is applied is the deterministic reduction.
      const deterministic = { ...input, deterministicOnly: true }
      const reduced = await Effect.runPromise(Effect.result(engine.compact(deterministic)))
      committed = reduced._tag === "Success" ? reduced.success.entriesToAppend : []
    }
    // The shadow entry continues after what was committed, so the branch (ActiveView.branch) keeps the edits.
    const linked = shadow && committed.length > 0 ? { ...shadow, parentId: committed.at(-1)!.id } : shadow
    await current.append(linked ? [...committed, linked] : committed)
    emit(options, {
      type: "compaction",
      sessionId: current.sessionId,
      reasons,
      tokensBefore: result.before.inputTokens,
      tokensAfter: result.after.inputTokens,
      stages: result.stages,
      ...(result.checkpoint ? { checkpointId: result.checkpoint.id } : {}),
      mode,
      ...(shadow ? { shadowEntryId: shadow.id } : {})
    })
  }

  const prepare: ContextController["prepare"] = async (model, messages, tools, ephemeralSystem = [], signal) => {
    const current = await session(model)
    return exclusive(current.sessionId, () => prepareIn(current, model, messages, tools, ephemeralSystem, signal))
  }

  const nativeDueSessions = new WeakSet<Session.Session>()
  const nativeUnavailable: ContextController["nativeUnavailable"] = async (prepared, reason, thresholdTokens) => {
    const route = routeOf(prepared.model)
    nativeRoutes.disable(route, reason)
    nativeDueSessions.add(prepared.session)
    const current = prepared.session
    await current.append([
      Entry.make(
        { id: current.nextId(), parentId: current.entries().at(-1)?.id ?? null, timestamp: new Date().toISOString() },
        {
          kind: "event",
          event: {
            name: NativeFallback.EVENT_UNAVAILABLE,
            data: NativeFallback.eventData(route, reason, thresholdTokens)
          }
        }
      )
    ])
    emit(options, {
      type: "native-unavailable",
      sessionId: current.sessionId,
      route,
      reason,
      ...(thresholdTokens !== undefined ? { thresholdTokens } : {})
    })
  }

  const lastRequestTrackers = new WeakMap<Session.Session, ReturnType<typeof IdleReturn.makeLastRequestTracker>>()
  const lastRequestOf = (current: Session.Session) => {
    let tracker = lastRequestTrackers.get(current)
    if (tracker === undefined) {
      tracker = IdleReturn.makeLastRequestTracker()
      lastRequestTrackers.set(current, tracker)
    }
    return tracker
  }

  const prepareIn = async (
    current: Session.Session,
    model: ModelRef,
    messages: ReadonlyArray<Message.Message>,
    tools: ReadonlyArray<ContextView.ToolDefinition>,
    ephemeralSystem: ReadonlyArray<Message.Message>,
    signal: AbortSignal | undefined
  ): Promise<Prepared> => {
    const lastMs = lastRequestOf(current)(current.entries())
    const arrived = await current.sync(messages)
    const policy = await policyFor(model, current)
    if (options.offload !== false) await offloadArrivals(current, arrived, policy, options.offload ?? {})
    const ephemeral = ephemeralEntries(ephemeralSystem)
    const entriesFor = (): ReadonlyArray<Entry.Entry> =>
      ephemeral.length === 0 ? [...current.entries()] : [...ephemeral, ...current.entries()]
    const input: ContextEngine.EngineInput = {
      entries: entriesFor(),
      tools,
      policy,
      ...(signal !== undefined ? { signal } : {})
    }
    let assembleInput = input
    const startMs = Date.now()
    const guard = (compactInput: ContextEngine.EngineInput) =>
      GuardedCompaction.run({
        engine,
        input: compactInput,
        route: `${model.provider}:${model.modelId}`,
        breaker,
        timeoutMs: options.compactionTimeoutMs
      })
    // Native compaction failed on this route (C19): the compaction it was to do is done locally now.
    const nativeDue = nativeDueSessions.delete(current)
    let outcome = await guard(nativeDue ? { ...input, manual: true } : input)
    // Idle return: the cache expired and the request is large — compact (as a manual compaction) before sending.
    const nowMs = (options.now?.() ?? new Date()).getTime()
    const idle =
      outcome._tag === "NotNeeded" &&
      outcome.decision !== undefined &&
      options.idleReturn !== false &&
      IdleReturn.isDue({
        entries: current.entries(),
        lastMs,
        nowMs,
        ttlMs: ProviderProfile.forProvider(model.provider).promptCache.ttlMs,
        inputTokens: outcome.decision.measurement.inputTokens,
        ...(options.idleReturn?.thresholdTokens !== undefined
          ? { thresholdTokens: options.idleReturn.thresholdTokens }
          : {})
      })
    if (idle) outcome = await guard({ ...input, manual: true })
    if (outcome._tag === "Compacted") {
      const { result, decision } = outcome
      Telemetry.recordCompactionSpan(engine.name, input, result, { mode, startMs })
      await commitIn(current, input, result, decision.reasons)
      // The idle event follows the compaction's entries (the path stays one chain).
      if (idle)
        await current.append([
          IdleReturn.event({
            id: current.nextId(),
            parentId: current.entries().at(-1)?.id ?? null,
            lastMs: lastMs!,
            nowMs,
            inputTokens: decision.measurement.inputTokens
          })
        ])
      assembleInput = { ...input, entries: entriesFor() }
    } else if (outcome._tag === "Failed") {
      // The previous valid view stays in force (DESIGN.md invariants); the request still goes out.
      emit(options, {
        type: "compaction-failed",
        sessionId: current.sessionId,
        error: outcome.error,
        consecutiveFailures: outcome.route.consecutiveFailures,
        circuitOpen: outcome.route.open
      })
    } else if (outcome._tag === "CircuitOpen") {
      emit(options, {
        type: "compaction-skipped",
        sessionId: current.sessionId,
        reason: `automatic compaction is off for ${model.provider}:${model.modelId} after ${outcome.route.consecutiveFailures} consecutive failures (cap ${breaker.maxConsecutiveFailures}); a manual compaction or a new controller retries`
      })
    }
    // Same input object when nothing was appended, so the engine reuses what it derived for shouldCompact.
    if (mode === "shadow") {
      const prepared = await assemble(current, model, assembleInput, messages)
      return { ...prepared, messages, rewritten: false }
    }
    return assemble(current, model, assembleInput, messages)
  }

  const recordSuccess: ContextController["recordSuccess"] = async (prepared, usage, response) => {
    const lastEntryId = prepared.assembled.view.items.at(-1)?.entryId
    const outcome: ContextEngine.Outcome = {
      ...(usage.inputTokens !== undefined ? { inputTokens: usage.inputTokens } : {}),
      ...(usage.outputTokens !== undefined ? { outputTokens: usage.outputTokens } : {}),
      ...(usage.cachedInputTokens !== undefined ? { cachedInputTokens: usage.cachedInputTokens } : {}),
      ...(lastEntryId !== undefined ? { lastEntryId } : {})
    }
    await asyncEngine.recordOutcome(prepared.input, outcome)
    emit(options, { type: "usage", sessionId: prepared.session.sessionId, ...outcome })
    if (native && response) {
      const entries = native.readResponse(prepared.input, response, {
        nextId: prepared.session.nextId,
        timestamp: new Date().toISOString()
      })
      if (entries.length > 0) {
        await prepared.session.append(entries)
        emit(options, { type: "native", sessionId: prepared.session.sessionId, entries })
      }
    }
  }

  const recoverOverflow: ContextController["recoverOverflow"] = async (prepared, error) => {
    if (options.overflowRecovery === false) return undefined
    const details: OverflowClassifier.OverflowDetails | undefined = prepared.profile.classifyOverflow(error)
    if (details === undefined) return undefined
    const current = prepared.session
    const recovery = await Effect.runPromise(
      OverflowRecovery.recover(
        engine,
        prepared.input,
        details.overflow,
        {
          measuredInputTokens: prepared.assembled.measurement.inputTokens,
          ...(details.excessTokens !== undefined ? { excessTokens: details.excessTokens } : {}),
          ...(details.inputTokens !== undefined ? { providerInputTokens: details.inputTokens } : {}),
          ...(details.outputTokens !== undefined ? { requestedOutputTokens: details.outputTokens } : {})
        },
        {
          eventId: current.nextId(),
          timestamp: new Date().toISOString(),
          compactionTimeoutMs: options.compactionTimeoutMs
        }
      )
    )
    await current.append(recovery.entriesToAppend)
    current.learn(prepared.input.policy.model, recovery.policy.contextWindowTokens)
    emit(options, {
      type: "overflow",
      sessionId: current.sessionId,
      overflow: details.overflow,
      learnedWindowTokens: recovery.policy.contextWindowTokens
    })
    if (recovery.compaction) {
      emit(options, {
        type: "compaction",
        sessionId: current.sessionId,
        reasons: ["overflow"],
        tokensBefore: recovery.compaction.before.inputTokens,
        tokensAfter: recovery.compaction.after.inputTokens,
        stages: recovery.compaction.stages,
        ...(recovery.compaction.checkpoint ? { checkpointId: recovery.compaction.checkpoint.id } : {})
      })
    } else if (recovery.compactionError) {
      const route = breaker.recordFailure(`${prepared.model.provider}:${prepared.model.modelId}`)
      emit(options, {
        type: "compaction-failed",
        sessionId: current.sessionId,
        error: recovery.compactionError,
        consecutiveFailures: route.consecutiveFailures,
        circuitOpen: route.open
      })
    }
    const input: ContextEngine.EngineInput = {
      ...prepared.input,
      policy: recovery.policy,
      entries: [...prepared.input.entries, ...recovery.entriesToAppend]
    }
    const original = prepared.rewritten ? [] : prepared.messages
    return assemble(current, prepared.model, input, original)
  }

  return { engine, session, policyFor, prepare, recordSuccess, recoverOverflow, nativeRoutes, nativeUnavailable }
}
