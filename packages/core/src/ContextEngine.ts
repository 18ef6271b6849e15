/**
 * The `ContextEngine` interface (DESIGN.md "The request path"):
 * measure → shouldCompact → plan → compact → validate → assembleContext, and
 * recordOutcome after the model answers. Engines live in packages/engines.
 *
 * Every method returns an `Effect`; {@link toAsync} gives the plain
 * Promise-based face for callers who do not use Effect.
 *
 * @since 0.1.0
 */
import { Context, Effect } from "effect"
import type { Budget } from "./Budget.ts"
import type { Checkpoint, ValidationReport } from "./Checkpoint.ts"
import type { ContextView, ToolDefinition } from "./ContextView.ts"
import type { Entry } from "./Entry.ts"
import {
  BudgetExceeded,
  type ContextOverflow,
  type FixedOverheadExceedsBudget,
  type InvalidInput,
  type PolicyInvalid,
  type SummarizerFailed,
  type ValidationFailed
} from "./Errors.ts"
import type { Measurement } from "./Measurement.ts"
import type { Message } from "./Message.ts"
import type { ModelPolicy } from "./ModelPolicy.ts"
import type { PluginFailed } from "./PluginGuard.ts"
import * as Telemetry from "./Telemetry.ts"
import type { ViewEdit } from "./ViewEdit.ts"

/**
 * What an engine works on: a session's entries (the transcript, never
 * modified), the tools offered to the model, and the model's policy.
 *
 * @category models
 */
export interface EngineInput {
  readonly entries: ReadonlyArray<Entry>
  readonly tools?: ReadonlyArray<ToolDefinition>
  readonly policy: ModelPolicy
  /** Compaction was requested explicitly (e.g. `/compact`). */
  readonly manual?: boolean
  /**
   * Instructions for the summary (`/compact <instructions>`): handed to the
   * summarizer apart from the conversation, to steer what the checkpoint
   * keeps; never the goal, an ask or a next step (shared case C18).
   * Summarizers that cannot follow instructions (the offline one) ignore them.
   */
  readonly compactInstructions?: string
  /**
   * Run only the deterministic tiers (no summarizer, hook or memory-extractor
   * call, no checkpoint): the `advisory` rollout mode, and an automatic
   * compaction on a route whose circuit breaker is open (provider-adapters
   * `GuardedCompaction`). Engines without a summarizer ignore it.
   */
  readonly deterministicOnly?: boolean
  /**
   * The caller's signal (AI SDK `abortSignal`). Plug-ins (summarizer, hooks,
   * memory extractor) receive it; when it fires they are abandoned and the
   * previous valid context stays in force.
   */
  readonly signal?: AbortSignal
  /**
   * The generation a checkpoint written now must carry, when `entries` are
   * one branch of a session whose other branches hold checkpoints too: the
   * store installs only the highest generation on any branch + 1
   * (`TranscriptStore.installCheckpoint`, compare-and-set), and a rewritten
   * history continues on a branch that does not hold them (provider-adapters
   * `Session.nextGeneration`). Default and floor: the active view's
   * `ActiveView.nextGeneration` of `entries`.
   */
  readonly nextGeneration?: number
}

/**
 * Why compaction is (or is not) needed. `threshold`: the input is over the
 * budget (its `bindingLimit` names the token limit that bound);
 * `request-bytes`: the serialized body is over the route's
 * `maxRequestBodyBytes` (C20).
 *
 * @category models
 */
export type CompactionReason = "threshold" | "request-bytes" | "overflow" | "manual" | "fixed-overhead-exceeded"

/** @category models */
export interface CompactionDecision {
  readonly compact: boolean
  readonly reasons: ReadonlyArray<CompactionReason>
  readonly measurement: Measurement
  readonly budget: Budget
}

/**
 * Per-stage report of a pipeline run.
 *
 * @category models
 */
export interface StageReport {
  readonly stage: string
  readonly tokensBefore: number
  readonly tokensAfter: number
  readonly edits: number
  readonly durationMs: number
  /** `applied`, `skipped` (freed less than its minimum, or nothing to do) or `not-needed` (already fit). */
  readonly status: "applied" | "skipped" | "not-needed"
  readonly note?: string
}

/**
 * What compaction intends to do, before doing it.
 *
 * @category models
 */
export interface CompactionPlan {
  readonly reasons: ReadonlyArray<CompactionReason>
  readonly targetTokens: number
  readonly stages: ReadonlyArray<string>
  /** Cut point for a checkpoint, when the engine summarizes. */
  readonly cutPoint?: {
    readonly firstKeptEntryId: string | null
    readonly coveredFromEntryId: string | null
    readonly coveredToEntryId: string
    readonly splitTurn: boolean
  }
}

/**
 * The outcome of a compaction. `entriesToAppend` are the edit and checkpoint
 * entries the caller appends to the transcript to make the result durable.
 *
 * @category models
 */
export interface CompactionResult {
  readonly view: ContextView
  readonly edits: ReadonlyArray<ViewEdit>
  readonly checkpoint?: Checkpoint
  readonly entriesToAppend: ReadonlyArray<Entry>
  readonly stages: ReadonlyArray<StageReport>
  /**
   * The request before compaction as the decision measured it
   * (`CompactionDecision.measurement`): the request that would have been
   * sent, after the normalize stage's pairing repair — not the raw view,
   * which the first stage report (`normalize`) starts from.
   */
  readonly before: Measurement
  readonly after: Measurement
  readonly fits: boolean
  /**
   * Failures the engine recovered from without failing the compaction: a
   * summarizer that threw, a summary that failed validation. The result then
   * holds the previous checkpoint and a deterministic reduction.
   */
  readonly failures?: ReadonlyArray<SummarizerFailed | ValidationFailed | PluginFailed>
}

/**
 * What the provider said about the last request.
 *
 * @category models
 */
export interface Outcome {
  /** `usage.inputTokens` of the response, when the request succeeded. */
  readonly inputTokens?: number
  readonly outputTokens?: number
  /** Cached input tokens reported by the provider. */
  readonly cachedInputTokens?: number
  /** The last view item the request contained (anchors later measurements). */
  readonly lastEntryId?: string
  /** Set when the provider rejected the request as too long. */
  readonly overflow?: ContextOverflow
}

/**
 * The assembled request context.
 *
 * @category models
 */
export interface AssembledContext {
  readonly messages: ReadonlyArray<Message>
  readonly view: ContextView
  readonly measurement: Measurement
  /**
   * What was dropped to make the request's shape valid for the provider,
   * with reasons: trailing assistant messages where the model has no
   * prefill (`RequestShape`). Absent when nothing was dropped. (Pairing
   * repair and empty-message removal also apply to every request; `compact`
   * reports them as edits of its normalize stage.) The transcript keeps every
   * original.
   */
  readonly repairs?: ReadonlyArray<ViewEdit>
}

/** @category errors */
export type CompactionError =
  | InvalidInput
  | PolicyInvalid
  | FixedOverheadExceedsBudget
  | BudgetExceeded
  | SummarizerFailed
  | ValidationFailed

/**
 * The best-effort reduction a `BudgetExceeded` carries (`fits: false`), or
 * `undefined` for any other error or when the engine could not make the
 * request smaller.
 *
 * @category getters
 */
export const bestEffortOf = (error: unknown): CompactionResult | undefined =>
  error instanceof BudgetExceeded ? (error.bestEffort as CompactionResult | undefined) : undefined

/**
 * Bad engine input: a malformed entry, a duplicate id, an impossible policy
 * (`EngineInput.validate`, which every engine method runs first).
 *
 * @category errors
 */
export type InputError = InvalidInput | PolicyInvalid

/**
 * The version of the {@link ContextEngine} contract (and of the
 * `Strategy` contract, `Strategy.SPECIFICATION_VERSION`) this release
 * defines. Like the AI SDK's `specificationVersion: "v4"` on
 * `LanguageModelV4`, it is a literal that changes only when the contract
 * breaks, so a caller can tell an engine written against another contract
 * from a bug (the middleware rejects one with `InvalidInput`).
 *
 * @category constants
 */
export const SPECIFICATION_VERSION = "v1" as const

/**
 * A context engine.
 *
 * @category models
 */
export interface ContextEngine {
  /** The contract version this engine implements: {@link SPECIFICATION_VERSION}. */
  readonly specificationVersion: typeof SPECIFICATION_VERSION
  readonly name: string
  readonly measure: (input: EngineInput) => Effect.Effect<Measurement, InputError>
  readonly shouldCompact: (input: EngineInput) => Effect.Effect<CompactionDecision, InputError>
  readonly plan: (input: EngineInput) => Effect.Effect<CompactionPlan, InputError>
  /**
   * Compacts. On failure the caller keeps its previous valid view: nothing
   * is appended and the error says why.
   */
  readonly compact: (input: EngineInput, plan?: CompactionPlan) => Effect.Effect<CompactionResult, CompactionError>
  readonly validate: (input: EngineInput, result: CompactionResult) => Effect.Effect<ValidationReport, InputError>
  /** The messages to send: the current view with the latest checkpoint and edits applied. */
  readonly assembleContext: (input: EngineInput) => Effect.Effect<AssembledContext, InputError>
  readonly recordOutcome: (input: EngineInput, outcome: Outcome) => Effect.Effect<void, InputError>
}

/**
 * The Promise face of a {@link ContextEngine}: same methods, plain async;
 * failures reject with the typed error.
 *
 * @category models
 */
export type AsyncContextEngine = {
  readonly [K in Exclude<keyof ContextEngine, "name" | "specificationVersion">]: ContextEngine[K] extends (
    ...args: infer A
  ) => Effect.Effect<infer R, infer _E>
    ? (...args: A) => Promise<R>
    : never
} & {
  readonly specificationVersion: typeof SPECIFICATION_VERSION
  readonly name: string
  readonly engine: ContextEngine
}

/**
 * Service tag for the session's {@link ContextEngine}, provided by an
 * engine's `layer` (e.g. `TieredSummaryEngine.layer`, which builds the
 * engine from the summarizer and measurer services in context).
 *
 * @example
 * ```ts
 * import { ContextEngine } from "@context-engine/core"
 * import { Effect } from "effect"
 * const shouldCompact = (input: ContextEngine.EngineInput) =>
 *   Effect.gen(function* () {
 *     const engine = yield* ContextEngine.ContextEngineService
 *     return yield* engine.shouldCompact(input)
 *   })
 * ```
 *
 * @category services
 */
export class ContextEngineService extends Context.Service<ContextEngineService, ContextEngine>()(
  "@context-engine/core/ContextEngine"
) {}

/**
 * Wraps an engine in its Promise face. `measure` and `compact` run inside
 * OpenTelemetry spans (`Telemetry.ts`; no-ops until a tracer provider is
 * registered).
 *
 * @category constructors
 */
export const toAsync = (engine: ContextEngine): AsyncContextEngine => ({
  specificationVersion: engine.specificationVersion,
  name: engine.name,
  engine,
  measure: (input) => Telemetry.measureSpan(engine.name, input, () => Effect.runPromise(engine.measure(input))),
  shouldCompact: (input) => Effect.runPromise(engine.shouldCompact(input)),
  plan: (input) => Effect.runPromise(engine.plan(input)),
  compact: (input, plan) =>
    Telemetry.compactSpan(engine.name, input, () => Effect.runPromise(engine.compact(input, plan))),
  validate: (input, result) => Effect.runPromise(engine.validate(input, result)),
  assembleContext: (input) => Effect.runPromise(engine.assembleContext(input)),
  recordOutcome: (input, outcome) => Effect.runPromise(engine.recordOutcome(input, outcome))
})
