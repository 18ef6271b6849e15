/**
 * The controller's one retry after a context overflow
 * (`ContextController.recoverOverflow`): classify the provider's error,
 * compact against the reported limit (`OverflowRecovery.recover`), record
 * the overflow, learn the window, and assemble the context for the single
 * retry.
 *
 * @since 0.3.0
 */
import type { ContextEngine } from "@context-engine/core"
import { OverflowRecovery } from "@context-engine/engines"
import { Effect } from "effect"
import * as ContextEvent from "./ContextEvent.ts"
import { routeOf } from "./ControllerOptions.ts"
import { assemble, type Prepared, type Runtime } from "./ControllerRuntime.ts"
import type * as OverflowClassifier from "./OverflowClassifier.ts"

/**
 * The context for the retry, or `undefined` when `error` is not a classified
 * overflow (or recovery is off) — the caller rethrows it.
 *
 * @category constructors
 */
export const recover = async (runtime: Runtime, prepared: Prepared, error: unknown): Promise<Prepared | undefined> => {
  if (runtime.options.overflowRecovery === false) return undefined
  const details: OverflowClassifier.OverflowDetails | undefined = prepared.profile.classifyOverflow(error)
  if (details === undefined) return undefined
  const current = prepared.session
  const recovery = await Effect.runPromise(
    OverflowRecovery.recover(
      runtime.engine,
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
        compactionTimeoutMs: runtime.options.compactionTimeoutMs
      }
    )
  )
  await current.append(recovery.entriesToAppend)
  current.learn(prepared.input.policy.model, recovery.policy.contextWindowTokens)
  runtime.emit({
    type: "overflow",
    sessionId: current.sessionId,
    overflow: details.overflow,
    learnedWindowTokens: recovery.policy.contextWindowTokens
  })
  if (recovery.compaction) {
    runtime.emit({
      type: "compaction",
      sessionId: current.sessionId,
      reasons: ["overflow"],
      tokensBefore: recovery.compaction.before.inputTokens,
      tokensAfter: recovery.compaction.after.inputTokens,
      stages: recovery.compaction.stages,
      ...(recovery.compaction.checkpoint ? { checkpointId: recovery.compaction.checkpoint.id } : {}),
      ...(recovery.compaction.failures?.length ? { failures: recovery.compaction.failures } : {})
    })
  } else if (recovery.compactionError) {
    const route = runtime.breaker.recordFailure(routeOf(prepared.model))
    runtime.emit(ContextEvent.compactionFailed(current.sessionId, recovery.compactionError, route))
  }
  const input: ContextEngine.EngineInput = {
    ...prepared.input,
    policy: recovery.policy,
    entries: [...prepared.input.entries, ...recovery.entriesToAppend]
  }
  const original = prepared.rewritten ? [] : prepared.messages
  return assemble(runtime, current, prepared.model, input, original)
}
