/**
 * One request of the controller, prepared (`ContextController.prepare`):
 * sync the application's messages into the session, offload large tool
 * results as they arrive, ask the engine whether to compact (as a manual
 * compaction when native compaction just failed on the route, or on an idle
 * return), commit what the rollout mode allows, and assemble what to send.
 * A failed compaction leaves the previous valid view in force and the
 * request still goes out (DESIGN.md invariants); a failed policy function
 * is reported and rejects `prepare`, and the adapters send the request as
 * the application passed it.
 *
 * @since 0.3.0
 */
import {
  ArrayLineage,
  Budget,
  type ContextEngine,
  type ContextView,
  Entry,
  type Message,
  type ModelPolicy,
  Telemetry,
  Tokenizers
} from "@context-engine/core"
import { Offload } from "@context-engine/strategies"
import { Effect } from "effect"
import * as ContextEvent from "./ContextEvent.ts"
import { type ModelRef, routeOf } from "./ControllerOptions.ts"
import * as ControllerPolicies from "./ControllerPolicies.ts"
import { assemble, ephemeralEntries, type Prepared, type Runtime } from "./ControllerRuntime.ts"
import * as GuardedCompaction from "./GuardedCompaction.ts"
import * as IdleReturn from "./IdleReturn.ts"
import * as ProviderProfile from "./ProviderProfile.ts"
import * as RolloutMode from "./RolloutMode.ts"
import * as Session from "./Session.ts"

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
  // the policy's rank table may not be loaded yet on an edge runtime (Tokenizers.ready)
  if (offload.countTokens === undefined) await Effect.runPromise(Tokenizers.ready(policy.tokenizer))
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

// Each session's last engine-input snapshot and the active-path array it was taken from.
const snapshots = new WeakMap<
  Session.Session,
  { readonly path: ReadonlyArray<Entry.Entry>; readonly snapshot: ReadonlyArray<Entry.Entry> }
>()

/**
 * The session's entries for an engine input: a copy (the engine keeps what
 * it is given; the session's active path grows in place), built as the
 * previous snapshot extended by the entries appended since
 * (`ArrayLineage.extend`) when the active path is the same array, grown
 * (`Session` appends to it in place and replaces it on a branch). The engine
 * then knows the earlier entries are the same without comparing them
 * (`EngineInput`, `IncrementalActiveView`).
 */
const snapshotOf = (current: Session.Session): ReadonlyArray<Entry.Entry> => {
  const path = current.entries()
  const last = snapshots.get(current)
  const length = last?.snapshot.length ?? 0
  const appended =
    last !== undefined &&
    last.path === path &&
    path.length >= length &&
    (length === 0 || path[length - 1] === last.snapshot[length - 1])
  const snapshot = appended ? ArrayLineage.extend(last.snapshot, path.slice(length)) : ArrayLineage.extend([], path)
  snapshots.set(current, { path, snapshot })
  return snapshot
}

// Each shadow-mode session's last snapshot and its shadow-applied copy.
const shadowViews = new WeakMap<
  Session.Session,
  { readonly snapshot: ReadonlyArray<Entry.Entry>; readonly applied: ReadonlyArray<Entry.Entry> }
>()

/**
 * A shadow-mode session's entries as an active session would hold them
 * (`RolloutMode.applied`), for the engine's decisions: extended from the
 * previous step's when the snapshot extends the previous one, so the engine
 * still knows the earlier entries are the same (`ArrayLineage`).
 */
const shadowApplied = (current: Session.Session, snapshot: ReadonlyArray<Entry.Entry>): ReadonlyArray<Entry.Entry> => {
  const last = shadowViews.get(current)
  const applied =
    last !== undefined && ArrayLineage.isExtensionOf(snapshot, last.snapshot)
      ? ArrayLineage.extend(last.applied, RolloutMode.applied(snapshot.slice(last.snapshot.length)))
      : ArrayLineage.extend([], RolloutMode.applied(snapshot))
  shadowViews.set(current, { snapshot, applied })
  return applied
}

/** Commits what the rollout mode allows of a compaction and reports it. */
export const commitCompaction = async (
  runtime: Runtime,
  current: Session.Session,
  input: ContextEngine.EngineInput,
  result: ContextEngine.CompactionResult,
  reasons: ReadonlyArray<ContextEngine.CompactionReason>
): Promise<void> => {
  const { mode } = runtime
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
    const reduced = await Effect.runPromise(Effect.result(runtime.engine.compact(deterministic)))
    committed = reduced._tag === "Success" ? reduced.success.entriesToAppend : []
  }
  // The shadow entry continues after what was committed, so the branch (ActiveView.branch) keeps the edits.
  const linked = shadow && committed.length > 0 ? Entry.withParent(shadow, committed.at(-1)!.id) : shadow
  await current.append(linked ? [...committed, linked] : committed)
  runtime.emit({
    type: "compaction",
    sessionId: current.sessionId,
    reasons,
    tokensBefore: result.before.inputTokens,
    tokensAfter: result.after.inputTokens,
    stages: result.stages,
    ...(result.checkpoint ? { checkpointId: result.checkpoint.id } : {}),
    mode,
    ...(shadow ? { shadowEntryId: shadow.id } : {}),
    ...(result.failures?.length ? { failures: result.failures } : {})
  })
}

interface Decided {
  readonly outcome: GuardedCompaction.Outcome
  /** The compaction is an idle return's (`IdleReturn`). */
  readonly idle: boolean
  readonly nowMs: number
}

/**
 * Runs the engine's decision and compaction under the guard: as a manual
 * compaction when native compaction failed on the route (C19); again as a
 * manual compaction when nothing was needed but an idle return is due.
 */
const decide = async (
  runtime: Runtime,
  current: Session.Session,
  model: ModelRef,
  input: ContextEngine.EngineInput,
  lastMs: number | undefined
): Promise<Decided> => {
  const { options } = runtime
  const guard = (compactInput: ContextEngine.EngineInput) =>
    GuardedCompaction.run({
      engine: runtime.engine,
      input: compactInput,
      route: routeOf(model),
      breaker: runtime.breaker,
      timeoutMs: options.compactionTimeoutMs
    })
  // Native compaction failed on this route (C19): the compaction it was to do is done locally now.
  const nativeDue = runtime.nativeDueSessions.delete(current)
  const outcome = await guard(nativeDue ? { ...input, manual: true } : input)
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
  return { outcome: idle ? await guard({ ...input, manual: true }) : outcome, idle, nowMs }
}

/** Commits a compaction (and the idle event after it) or reports why there is none; true when entries were appended. */
const settle = async (
  runtime: Runtime,
  current: Session.Session,
  model: ModelRef,
  input: ContextEngine.EngineInput,
  decided: Decided,
  lastMs: number | undefined,
  startMs: number
): Promise<boolean> => {
  const { outcome, idle, nowMs } = decided
  if (outcome._tag === "Compacted") {
    const { result, decision } = outcome
    Telemetry.recordCompactionSpan(runtime.engine.name, input, result, { mode: runtime.mode, startMs })
    try {
      await commitCompaction(runtime, current, input, result, decision.reasons)
    } catch (error) {
      // Another worker wrote first: the controller reads the session again and prepares once more.
      if (Session.isStaleWrite(error)) throw error
      // The store failed (an outage): a failed compaction — the previous context stays, the request still goes out.
      const failure = Session.storeFailure(error)
      runtime.emit(ContextEvent.compactionFailed(current.sessionId, failure, runtime.breaker.state(routeOf(model))))
      return false
    }
    // Sent over the budget (the best reduction the engine could make): the app is told, as of any failure.
    if (outcome.shortfall !== undefined)
      runtime.emit(ContextEvent.compactionFailed(current.sessionId, outcome.shortfall.error, outcome.shortfall.route))
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
    return true
  }
  const decision = outcome._tag === "Failed" ? undefined : outcome.decision
  const overhead =
    decision &&
    Budget.fixedOverheadError(decision.budget, { toolSchemaTokens: decision.measurement.byCategory.toolSchemas })
  if (overhead !== undefined && outcome._tag !== "Failed") {
    // No compaction can make it fit (the engine's decision says so); the request still goes out, and the app is told.
    runtime.emit({
      type: "compaction-skipped",
      sessionId: current.sessionId,
      reason: overhead.message,
      error: overhead
    })
  } else if (outcome._tag === "Failed") {
    // The previous valid view stays in force (DESIGN.md invariants); the request still goes out.
    runtime.emit(ContextEvent.compactionFailed(current.sessionId, outcome.error, outcome.route))
  } else if (outcome._tag === "CircuitOpen" && outcome.decision?.compact !== false) {
    // Open circuit: the deterministic reduction was due and failed (or the decision did) — the request goes out as it is.
    const reduction = outcome.error ? `; the deterministic reduction failed too: ${outcome.error.message}` : ""
    runtime.emit({
      type: "compaction-skipped",
      sessionId: current.sessionId,
      reason: `automatic compaction is off for ${model.provider}:${model.modelId} after ${outcome.route.consecutiveFailures} consecutive failures (cap ${runtime.breaker.maxConsecutiveFailures}); a manual compaction or a new controller retries${reduction}`
    })
  }
  return false
}

/**
 * The policy of this request. A policy function that fails (throws, rejects,
 * hangs, gives an impossible policy) is reported as `compaction-skipped`
 * with its `PluginFailed` (kind `"policy"`) and rethrown: without a policy
 * nothing can be measured or compacted, so the adapters send the request as
 * the application passed it (`ControllerPolicies.isPolicyFailure`). The
 * messages are synced already: the transcript stays complete.
 */
const policyOf = async (runtime: Runtime, current: Session.Session, model: ModelRef) => {
  try {
    return await runtime.policyFor(model, current)
  } catch (error) {
    if (ControllerPolicies.isPolicyFailure(error))
      runtime.emit({ type: "compaction-skipped", sessionId: current.sessionId, reason: error.message, error })
    throw error
  }
}

/**
 * Prepares one request of `current` (see the module notes). `ephemeralSystem`
 * is measured but not stored or returned.
 *
 * @category constructors
 */
export const prepare = async (
  runtime: Runtime,
  current: Session.Session,
  model: ModelRef,
  messages: ReadonlyArray<Message.Message>,
  tools: ReadonlyArray<ContextView.ToolDefinition>,
  ephemeralSystem: ReadonlyArray<Message.Message>,
  signal: AbortSignal | undefined
): Promise<Prepared> => {
  const { options } = runtime
  const lastMs = runtime.lastRequestOf(current)(current.entries())
  const arrived = await current.sync(messages)
  const policy = await policyOf(runtime, current, model)
  if (options.offload !== false) await offloadArrivals(current, arrived, policy, options.offload ?? {})
  const ephemeral = ephemeralEntries(ephemeralSystem)
  const entriesFor = (): ReadonlyArray<Entry.Entry> =>
    ephemeral.length === 0 ? snapshotOf(current) : [...ephemeral, ...current.entries()]
  // Shadow mode decides on the transcript as if its shadow compactions had been applied (`RolloutMode.applied`).
  const shadowMode = runtime.mode === "shadow"
  const input: ContextEngine.EngineInput = {
    entries: shadowMode ? shadowApplied(current, entriesFor()) : entriesFor(),
    tools,
    policy,
    nextGeneration: current.nextGeneration(),
    ...(signal !== undefined ? { signal } : {})
  }
  const startMs = Date.now()
  const decided = await decide(runtime, current, model, input, lastMs)
  const appended = await settle(runtime, current, model, input, decided, lastMs, startMs)
  if (shadowMode) {
    // What goes out is the application's request: measured on the transcript without the edits the controller
    // recorded (the offload of large tool results; no shadow applied), so the request event reports what was sent.
    const sent = entriesFor().filter((entry) => entry.kind !== "edit")
    const prepared = await assemble(runtime, current, model, { ...input, entries: sent }, messages)
    return { ...prepared, messages, rewritten: false }
  }
  // Same input object when nothing was appended, so the engine reuses what it derived for shouldCompact.
  const assembleInput = appended ? { ...input, entries: entriesFor() } : input
  return assemble(runtime, current, model, assembleInput, messages)
}
