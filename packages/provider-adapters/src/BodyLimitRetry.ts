/**
 * The controller's one retry after the request body was refused as too
 * large (HTTP 413; `OverflowClassifier.classifyBodyTooLarge`, shared case
 * C20). Not a token overflow: the remedy is fewer bytes. The route's byte cap
 * is learned (`RequestBytes.learnedCap` of the refused size, or the
 * configured cap if smaller) and kept for later requests of the route
 * (`ControllerPolicies`); the engine compacts under it (reason
 * `request-bytes`: old media become text references, `ByteCap`) and the
 * context for the single retry is assembled.
 *
 * @since 0.3.0
 */
import { type ContextEngine, RequestBytes } from "@context-engine/core"
import * as ContextEvent from "./ContextEvent.ts"
import { routeOf } from "./ControllerOptions.ts"
import { assemble, type Prepared, type Runtime } from "./ControllerRuntime.ts"
import * as GuardedCompaction from "./GuardedCompaction.ts"
import * as OverflowClassifier from "./OverflowClassifier.ts"
import { commitCompaction } from "./PrepareRequest.ts"

/**
 * The context for the retry, or `undefined` when `error` is not a body-size
 * refusal (or recovery is off).
 *
 * @category constructors
 */
export const recover = async (
  runtime: Runtime,
  prepared: Prepared,
  error: unknown,
  learnedBodyBytes: Map<string, number>
): Promise<Prepared | undefined> => {
  if (runtime.options.overflowRecovery === false) return undefined
  if (OverflowClassifier.classifyBodyTooLarge(error) === undefined) return undefined
  const current = prepared.session
  const route = routeOf(prepared.model)
  const rejectedBytes = RequestBytes.viewBytes(prepared.assembled.view)
  const learnedCapBytes = Math.min(
    RequestBytes.learnedCap(rejectedBytes),
    prepared.input.policy.maxRequestBodyBytes ?? Number.POSITIVE_INFINITY
  )
  learnedBodyBytes.set(route, learnedCapBytes)
  runtime.emit({ type: "body-too-large", sessionId: current.sessionId, route, rejectedBytes, learnedCapBytes })
  const input: ContextEngine.EngineInput = {
    ...prepared.input,
    policy: await runtime.policyFor(prepared.model, current)
  }
  const before = current.entries().length
  const outcome = await GuardedCompaction.run({
    engine: runtime.engine,
    input,
    route,
    breaker: runtime.breaker,
    timeoutMs: runtime.options.compactionTimeoutMs
  })
  if (outcome._tag === "Compacted")
    await commitCompaction(runtime, current, input, outcome.result, outcome.decision.reasons)
  else if (outcome._tag === "Failed")
    runtime.emit(ContextEvent.compactionFailed(current.sessionId, outcome.error, outcome.route))
  const entries = [...prepared.input.entries, ...current.entries().slice(before)]
  return assemble(runtime, current, prepared.model, { ...input, entries }, prepared.rewritten ? [] : prepared.messages)
}
