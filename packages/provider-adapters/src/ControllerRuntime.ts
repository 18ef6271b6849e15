/**
 * What the parts of a context controller share: the engine (Effect and
 * Promise faces), the circuit breaker, the provider-native engine when it is
 * one, the rollout mode, the event handler, the per-session state the
 * request path keeps, and the one assembly of a request ({@link assemble}).
 *
 * @since 0.3.0
 */
import {
  ContextEngine,
  type ContextView,
  Entry,
  Errors,
  type Message,
  type ModelPolicy,
  PluginGuard,
  Telemetry
} from "@context-engine/core"
import { ProviderNativeEngine } from "@context-engine/engines"
import { type ContextEvent, emit } from "./ContextEvent.ts"
import type { ControllerOptions, ModelRef } from "./ControllerOptions.ts"
import * as IdleReturn from "./IdleReturn.ts"
import * as PromptAlignment from "./PromptAlignment.ts"
import * as ProviderProfile from "./ProviderProfile.ts"
import type * as RolloutMode from "./RolloutMode.ts"
import type * as Session from "./Session.ts"

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
  /**
   * Messages to send (without ephemeral system instructions): the view's messages, except that a position the
   * view did not change holds the application's own message object (matched by value with the session's).
   */
  readonly messages: ReadonlyArray<Message.Message>
  /** Whether `messages` differ from what the application passed. */
  readonly rewritten: boolean
  /** Provider options a provider-native engine asks for, already keyed by provider. */
  readonly providerOptions?: Message.ProviderOptions
}

/**
 * The controller's shared parts.
 *
 * @category models
 */
export interface Runtime {
  readonly options: ControllerOptions
  readonly engine: ContextEngine.ContextEngine
  readonly asyncEngine: ContextEngine.AsyncContextEngine
  readonly breaker: PluginGuard.CircuitBreaker
  readonly native: ProviderNativeEngine.ProviderNativeEngine | undefined
  readonly mode: RolloutMode.RolloutMode
  readonly emit: (event: ContextEvent) => void
  readonly policyFor: (model: ModelRef, session?: Session.Session) => Promise<ModelPolicy.ModelPolicy>
  /** Sessions whose next `prepare` compacts locally because native compaction failed on their route (C19). */
  readonly nativeDueSessions: WeakSet<Session.Session>
  /** The time of a session's last request before this one (`IdleReturn`), from its entries. */
  readonly lastRequestOf: (session: Session.Session) => ReturnType<typeof IdleReturn.makeLastRequestTracker>
}

const toEffectEngine = (
  engine: ContextEngine.ContextEngine | ContextEngine.AsyncContextEngine
): ContextEngine.ContextEngine => {
  if (typeof engine !== "object" || engine === null)
    throw new Errors.InvalidInput({
      what: "context engine",
      path: "options.engine",
      detail: `${JSON.stringify(engine) ?? String(engine)} is not an engine; pass one, e.g. TieredSummaryEngine.make()`
    })
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

/**
 * The shared parts for `options`; throws `InvalidInput` when the engine
 * implements another `specificationVersion`.
 *
 * @category constructors
 */
export const make = (options: ControllerOptions, policyFor: Runtime["policyFor"]): Runtime => {
  const engine = toEffectEngine(options.engine)
  const lastRequestTrackers = new WeakMap<Session.Session, ReturnType<typeof IdleReturn.makeLastRequestTracker>>()
  return {
    options,
    engine,
    asyncEngine: ContextEngine.toAsync(engine),
    breaker: PluginGuard.makeCircuitBreaker(options.maxConsecutiveCompactionFailures),
    native: ProviderNativeEngine.isProviderNative(engine) ? engine : undefined,
    mode: options.mode ?? "active",
    emit: (event) => emit(options.onEvent, event),
    policyFor,
    nativeDueSessions: new WeakSet(),
    lastRequestOf: (current) => {
      let tracker = lastRequestTrackers.get(current)
      if (tracker === undefined) {
        tracker = IdleReturn.makeLastRequestTracker()
        lastRequestTrackers.set(current, tracker)
      }
      return tracker
    }
  }
}

const EPHEMERAL_PREFIX = "ephemeral:"

/**
 * Entries for the per-request system messages: never stored, chained from
 * the root at time 0, ids prefixed `ephemeral:`.
 *
 * @category constructors
 */
export const ephemeralEntries = (messages: ReadonlyArray<Message.Message>): ReadonlyArray<Entry.Entry> =>
  Entry.chain(
    null,
    new Date(0).toISOString(),
    messages.map((message, index) => ({
      id: `${EPHEMERAL_PREFIX}${index}`,
      body: { kind: "message" as const, message }
    }))
  )

// Each session's last request, aligned with its prompt (PromptAlignment.align), for the next request.
const alignments = new WeakMap<Session.Session, PromptAlignment.Alignment<Message.Message>>()

/**
 * The messages of `items` to send: `original` itself when each item's
 * message is, position by position, the application's message or the
 * session's message synced from it (nothing rewritten); else the view's
 * messages, where each one the view kept (the session's message synced from
 * an application message, found by `PromptAlignment.near` across the
 * messages the view dropped or inserted) is the application's own object. A
 * request whose offloaded tool results are rewritten is then the
 * application's array but for them: `PromptConversion.makeToPrompt` keeps
 * those objects without reading or converting them. A request that extends
 * the session's previous one is aligned from there (`PromptAlignment.align`).
 */
const toSend = (
  current: Session.Session,
  items: ReadonlyArray<ContextView.ViewItem>,
  original: ReadonlyArray<Message.Message>,
  synced: ReadonlyArray<Message.Message>
): ReadonlyArray<Message.Message> => {
  const { request, alignment } = PromptAlignment.align(items, original, synced, alignments.get(current))
  if (alignment === undefined) alignments.delete(current)
  else alignments.set(current, alignment)
  return request
}

/**
 * Assembles what to send for `input` (ephemeral system messages left out),
 * decides whether it differs from what the application passed (`original`,
 * matched against the session's synced entries), and reports the request.
 *
 * @category constructors
 */
export const assemble = async (
  runtime: Runtime,
  current: Session.Session,
  model: ModelRef,
  input: ContextEngine.EngineInput,
  original: ReadonlyArray<Message.Message>
): Promise<Prepared> => {
  const startMs = Date.now()
  const assembled = await runtime.asyncEngine.assembleContext(input)
  // The measure step of this request: what it sends, per category (README "Rollout and telemetry").
  Telemetry.recordMeasureSpan(runtime.engine.name, input, assembled.measurement, { startMs })
  // Ephemeral entries come first in the input (`ephemeralEntries`); without them every item is the session's.
  const items = input.entries[0]?.id.startsWith(EPHEMERAL_PREFIX)
    ? assembled.view.items.filter((item) => !item.entryId.startsWith(EPHEMERAL_PREFIX))
    : assembled.view.items
  // What was synced is the session's messages (the AI SDK's new objects were matched to them): array reads only.
  const synced = current.messages()
  const sent = toSend(current, items, original, synced)
  const rewritten = sent !== original
  const providerOptions = runtime.native?.providerOptions(input)
  runtime.emit({
    type: "request",
    sessionId: current.sessionId,
    model,
    inputTokens: assembled.measurement.inputTokens,
    budgetTokens: assembled.measurement.budgetTokens,
    contextWindowTokens: input.policy.contextWindowTokens,
    messagesSent: items.length,
    messagesInTranscript: synced.length,
    rewritten
  })
  return {
    session: current,
    model,
    profile: ProviderProfile.forProvider(model.provider),
    input,
    assembled,
    messages: sent,
    rewritten,
    ...(providerOptions !== undefined ? { providerOptions } : {})
  }
}
