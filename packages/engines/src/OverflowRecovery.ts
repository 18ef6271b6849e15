/**
 * Overflow recovery (DESIGN.md "Budget and triggers": "an overflow recovery
 * path (provider says 'too long') that compacts aggressively and retries
 * exactly once"). Engine-agnostic: works with any {@link ContextEngine}.
 *
 * Given the request that the provider rejected and the classified
 * {@link Errors.ContextOverflow}, {@link recover}:
 * 1. derives the effective window from what the error reports
 *    ({@link effectiveWindow}) and a policy shrunk to it ({@link recoveryPolicy});
 * 2. records the overflow with `engine.recordOutcome` (separately from
 *    threshold compactions: the outcome carries `overflow`), before
 *    compacting, so an engine that keeps a pending overflow clears it there;
 * 3. plans and compacts with reason `"overflow"` against that policy;
 * 4. assembles the context for the single retry.
 *
 * The caller (the AI SDK middleware's `wrapGenerate` / `wrapStream`) sends the
 * retry once and surfaces the original error if it fails again — this module
 * never loops. Shared case C11.
 *
 * @since 0.1.0
 */
import {
  type ContextEngine,
  type Entry,
  type Errors,
  type ModelPolicy,
  OverflowEvent,
  PluginGuard
} from "@context-engine/core"
import { Effect } from "effect"

/**
 * What is known about the rejected request besides the error.
 *
 * @category models
 */
export interface RejectedRequest {
  /** Our measured input tokens of the rejected request. */
  readonly measuredInputTokens: number
  /** Tokens over the limit, when the provider reports only the excess (Ollama). */
  readonly excessTokens?: number
  /** The provider's count of the input alone, when it splits input and output (Anthropic). */
  readonly providerInputTokens?: number
  /** The output size the request asked for (`max_tokens`), when the provider reports it. */
  readonly requestedOutputTokens?: number
  /**
   * System prompt + memory + tool schemas of the rejected request, in our
   * tokens. {@link recover} measures it with the engine when absent.
   */
  readonly fixedOverheadTokens?: number
}

/**
 * Share of the rejected request's size kept when the error reports no
 * numbers at all: aggressive, because a second rejection surfaces the error.
 *
 * @category constants
 */
export const BLIND_SHRINK_RATIO = 0.6

/**
 * Largest believable ratio of the provider's input count to ours. Our exact
 * tokenizers (o200k / cl100k) are within a few percent of the provider and
 * the estimators within about 25 % on text (`bench/calibrate-estimator.ts`);
 * 2× leaves room for media and provider framing. A provider count above it
 * (e.g. "60000 > 20000" for a request we measured at 3K) contradicts the
 * request we sent — it describes another request, or was misparsed — and is
 * not used to scale the limit (own choice).
 *
 * @category constants
 */
export const MAX_UNDERCOUNT_RATIO = 2

/**
 * Conversation room (tokens) a learned window always keeps beyond the fixed
 * overhead and the output reserve: the latest user turn, a checkpoint and a
 * short tail. Below it every step would compact (own choice).
 *
 * @category constants
 */
export const MIN_CONVERSATION_TOKENS = 4_096

/**
 * The smallest window overflow recovery may learn:
 * `fixedOverheadTokens + reserveTokens + MIN_CONVERSATION_TOKENS`, never more
 * than the policy's window. Error numbers that would learn less are wrong
 * for this session (a window that holds no conversation cannot be the
 * model's real one), so the floor wins.
 *
 * @category recovery
 */
export const minimumWindow = (policy: ModelPolicy.ModelPolicy, fixedOverheadTokens = 0): number =>
  Math.min(
    policy.contextWindowTokens,
    Math.max(0, Math.floor(fixedOverheadTokens)) + policy.reserveTokens + MIN_CONVERSATION_TOKENS
  )

const positive = (value: number | undefined): value is number =>
  value !== undefined && Number.isFinite(value) && value > 0

/**
 * The window, in our own token units, that the provider actually enforces:
 *
 * - limit reported (`limitTokens`): the limit, scaled down by our undercount
 *   when the provider counted more input than we measured
 *   (`limit × measured / providerInput`). A provider input count more than
 *   {@link MAX_UNDERCOUNT_RATIO} × ours contradicts the measured request and
 *   is ignored (the limit is used unscaled);
 * - only the excess reported: `measured − excess`, when that leaves a
 *   positive window; an excess at least as large as the whole measured
 *   request contradicts it and is ignored (blind shrink below);
 * - nothing usable reported: {@link BLIND_SHRINK_RATIO} of the rejected
 *   request (input + reserved output).
 *
 * Never larger than the policy's window; never smaller than
 * {@link minimumWindow} (fixed overhead + reserve + {@link MIN_CONVERSATION_TOKENS}).
 * Non-finite or non-positive numbers in the error are treated as absent.
 *
 * @category recovery
 */
export const effectiveWindow = (
  policy: ModelPolicy.ModelPolicy,
  overflow: Errors.ContextOverflow,
  request: RejectedRequest
): number => {
  const measured = Math.max(1, Number.isFinite(request.measuredInputTokens) ? request.measuredInputTokens : 1)
  const reportedInput = request.providerInputTokens ?? overflow.requestedTokens
  const providerInput = positive(reportedInput) ? reportedInput : undefined
  const blind = Math.floor((measured + policy.reserveTokens) * BLIND_SHRINK_RATIO)
  let window: number
  if (positive(overflow.limitTokens)) {
    const consistent = providerInput !== undefined && providerInput <= measured * MAX_UNDERCOUNT_RATIO
    const undercount = consistent && providerInput > measured ? measured / providerInput : 1
    window = Math.floor(overflow.limitTokens * undercount)
  } else if (positive(request.excessTokens) && request.excessTokens < measured) {
    window = measured - request.excessTokens
  } else {
    window = blind
  }
  const floor = minimumWindow(policy, request.fixedOverheadTokens)
  return Math.max(floor, Math.min(policy.contextWindowTokens, window))
}

/**
 * A policy shrunk to a smaller window: the output reserve raised to
 * `requestedOutputTokens` when given (never more than a quarter of the new
 * window); tool-loop reserve and safety margin scaled with the window (margin
 * at least 2 % of it); keep-recent tokens capped at a third of what remains so
 * the engine has something to cut.
 *
 * @category recovery
 */
export const shrinkPolicy = (
  policy: ModelPolicy.ModelPolicy,
  windowTokens: number,
  requestedOutputTokens = 0
): ModelPolicy.ModelPolicy => {
  const window = Math.max(1, Math.min(policy.contextWindowTokens, Math.floor(windowTokens)))
  const ratio = window / policy.contextWindowTokens
  const reserveTokens = Math.min(Math.max(policy.reserveTokens, requestedOutputTokens), Math.floor(window / 4))
  const toolLoopReserveTokens = Math.floor(policy.toolLoopReserveTokens * ratio)
  const safetyMarginTokens = Math.max(Math.floor(policy.safetyMarginTokens * ratio), Math.floor(window * 0.02))
  const available = window - reserveTokens - toolLoopReserveTokens - safetyMarginTokens
  return {
    ...policy,
    contextWindowTokens: window,
    // A valid policy never promises more output than its window holds (PolicyLimits.check).
    maxOutputTokens: Math.min(policy.maxOutputTokens, window),
    reserveTokens,
    toolLoopReserveTokens,
    safetyMarginTokens,
    keepRecentTokens: Math.max(0, Math.min(policy.keepRecentTokens, Math.floor(available / 3)))
  }
}

/**
 * The policy to compact with after an overflow: {@link shrinkPolicy} to the
 * {@link effectiveWindow}, reserving the `max_tokens` the provider reported.
 *
 * @category recovery
 */
export const recoveryPolicy = (
  policy: ModelPolicy.ModelPolicy,
  overflow: Errors.ContextOverflow,
  request: RejectedRequest
): ModelPolicy.ModelPolicy =>
  shrinkPolicy(policy, effectiveWindow(policy, overflow, request), request.requestedOutputTokens)

/**
 * A recovery: what to append to the transcript and what to send once more.
 *
 * @category models
 */
export interface Recovery {
  /** The shrunk policy the retry was compacted for (its window is the learned one). */
  readonly policy: ModelPolicy.ModelPolicy
  /** Entries to append: the compaction's edits / checkpoint plus one `context-overflow` event. */
  readonly entriesToAppend: ReadonlyArray<Entry.Entry>
  /** The context to send in the single retry. */
  readonly assembled: ContextEngine.AssembledContext
  /** The compaction result; absent when the engine could not compact (the retry still goes out once). */
  readonly compaction?: ContextEngine.CompactionResult
  /** Why compaction failed, when it did. */
  readonly compactionError?: ContextEngine.CompactionError | PluginGuard.PluginFailed
}

/**
 * Options for {@link recover}.
 *
 * @category models
 */
export interface RecoverOptions {
  /** Id for the `context-overflow` event entry. */
  readonly eventId: string
  /** ISO 8601 timestamp for the event entry. */
  readonly timestamp: string
  /**
   * Deadline of the recovery's compaction in milliseconds; default
   * {@link DEFAULT_RECOVERY_COMPACTION_TIMEOUT_MS}. With the input's
   * `signal`, a compaction that hangs, throws or is aborted becomes a
   * `PluginFailed` in `compactionError` and the retry still goes out.
   */
  readonly compactionTimeoutMs?: number | undefined
}

/**
 * Default deadline of the recovery's compaction: 3 × the plug-in deadline
 * (`PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`), the same as the middleware's
 * guarded compaction (a compaction may run a summarizer with one retry and a
 * fallback).
 *
 * @category constants
 */
export const DEFAULT_RECOVERY_COMPACTION_TIMEOUT_MS = 3 * PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS

/**
 * Compacts aggressively against the limit the overflow reports and assembles
 * the context for exactly one retry. Records the overflow with
 * `engine.recordOutcome`. A compaction failure does not fail the recovery:
 * the retry goes out with what the engine assembles under the shrunk policy,
 * and `compactionError` says why nothing was compacted.
 *
 * Fails only when the engine cannot assemble a context at all: its input is
 * invalid (`InvalidInput` / `PolicyInvalid`).
 *
 * @category recovery
 */
export const recover = (
  engine: ContextEngine.ContextEngine,
  input: ContextEngine.EngineInput,
  overflow: Errors.ContextOverflow,
  request: RejectedRequest,
  options: RecoverOptions
): Effect.Effect<Recovery, ContextEngine.InputError> =>
  Effect.gen(function* () {
    let fixedOverheadTokens = request.fixedOverheadTokens
    if (fixedOverheadTokens === undefined) {
      const measured = (yield* engine.measure(input)).byCategory
      fixedOverheadTokens = measured.system + measured.memory + measured.toolSchemas
    }
    const policy = recoveryPolicy(input.policy, overflow, { ...request, fixedOverheadTokens })
    const shrunk: ContextEngine.EngineInput = { ...input, policy }
    // Record first: engines that keep a pending overflow clear it when the compaction below runs.
    yield* engine.recordOutcome(shrunk, { overflow })
    const plan = yield* engine.plan(shrunk)
    const overflowPlan: ContextEngine.CompactionPlan = {
      ...plan,
      reasons: [...new Set<ContextEngine.CompactionReason>(["overflow", ...plan.reasons])]
    }
    const compacted = yield* Effect.result(
      PluginGuard.guardEffect(
        Effect.suspend(() => engine.compact(shrunk, overflowPlan)),
        {
          plugin: engine.name,
          kind: "strategy",
          timeoutMs: options.compactionTimeoutMs ?? DEFAULT_RECOVERY_COMPACTION_TIMEOUT_MS,
          signal: input.signal
        }
      )
    )
    const compactionEntries = compacted._tag === "Success" ? compacted.success.entriesToAppend : []
    const last = compactionEntries.at(-1) ?? input.entries.at(-1)
    const event = OverflowEvent.make(
      { id: options.eventId, parentId: last?.id ?? null, timestamp: options.timestamp },
      {
        provider: overflow.provider,
        model: input.policy.model,
        providerMessage: overflow.providerMessage,
        limitTokens: overflow.limitTokens ?? null,
        requestedTokens: overflow.requestedTokens ?? null,
        measuredInputTokens: request.measuredInputTokens,
        learnedWindowTokens: policy.contextWindowTokens,
        compacted: compacted._tag === "Success"
      }
    )
    const entriesToAppend = [...compactionEntries, event]
    const assembled = yield* engine.assembleContext({ ...shrunk, entries: [...input.entries, ...entriesToAppend] })
    return {
      policy,
      entriesToAppend,
      assembled,
      ...(compacted._tag === "Success" ? { compaction: compacted.success } : { compactionError: compacted.failure })
    }
  })

/**
 * Caps a policy's window at a learned effective window (no-op when none is
 * learned, it is not a positive finite number, or it is not smaller),
 * shrinking the other sizes as {@link shrinkPolicy} does. The window is never
 * capped below {@link minimumWindow} of the policy (reserve +
 * {@link MIN_CONVERSATION_TOKENS}), so a collapsed value persisted by an
 * older build cannot starve the session.
 *
 * @category recovery
 */
export const applyLearnedWindow = (
  policy: ModelPolicy.ModelPolicy,
  learnedWindowTokens: number | undefined
): ModelPolicy.ModelPolicy => {
  if (!positive(learnedWindowTokens) || learnedWindowTokens >= policy.contextWindowTokens) return policy
  return shrinkPolicy(policy, Math.max(learnedWindowTokens, minimumWindow(policy)))
}
