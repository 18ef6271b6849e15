/**
 * The events a context controller reports (`ControllerOptions.onEvent`):
 * requests, compactions and their failures, overflows, usage,
 * provider-native items and store failures.
 *
 * @since 0.3.0
 */
import type { ContextEngine, Entry, Errors, PluginGuard } from "@context-engine/core"
import type { ModelRef } from "./ControllerOptions.ts"
import type * as GuardedCompaction from "./GuardedCompaction.ts"
import type * as NativeFallback from "./NativeFallback.ts"
import type * as RolloutMode from "./RolloutMode.ts"

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
      /**
       * What the engine recovered from in this compaction (`CompactionResult.failures`): a summarizer that
       * failed, a summary that failed validation, a plug-in that threw. The compaction then kept the previous
       * checkpoint and reduced deterministically. Absent when nothing failed.
       */
      readonly failures?: ContextEngine.CompactionResult["failures"]
    }
  | {
      readonly type: "compaction-failed"
      readonly sessionId: string
      readonly error: GuardedCompaction.Failure
      /** Failures in a row on this route, this one included. */
      readonly consecutiveFailures: number
      /** The circuit opened: later automatic compactions on this route run only the deterministic reduction. */
      readonly circuitOpen: boolean
    }
  | {
      /**
       * The request went out uncompacted although it does not fit: the
       * route's circuit is open and the deterministic reduction failed too,
       * or the decision did (`reason` says which); or the fixed overhead
       * (system messages + tool schemas) alone exceeds the input budget, so
       * no compaction can help — then `error` carries the numbers and
       * `reason` is its message. Or the policy function failed (threw,
       * rejected, hung or gave an impossible policy): the request went out
       * as the application passed it, unmeasured — `error` is its
       * `PluginFailed` of kind `"policy"`. Once per such request.
       */
      readonly type: "compaction-skipped"
      readonly sessionId: string
      readonly reason: string
      /**
       * The fixed overhead exceeds the input budget (`Budget.fixedOverheadError`), or the policy function
       * failed (`PluginFailed`, kind `"policy"`).
       */
      readonly error?: Errors.FixedOverheadExceedsBudget | PluginGuard.PluginFailed
    }
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
      /**
       * The store refused a write the session holds anyway (an outage while the step's messages, an offload
       * edit or an event were stored): the request still goes out, built from what the session holds, and each
       * later write stores the unstored entries first, in order (`Session`). A compaction the store refused is
       * `compaction-failed` instead (its `error` also of kind `"store"`).
       */
      readonly type: "store-failed"
      readonly sessionId: string
      /** `PluginFailed` of kind `"store"` (`Session.storeFailure`): the store's error in `detail`, or `timeout` (`Session.STORE_WRITE_TIMEOUT_MS`). */
      readonly error: PluginGuard.PluginFailed
      /** Entries the session holds that the store does not, after this failure. */
      readonly unstoredEntries: number
    }
  | {
      /**
       * The store's load of the session failed (it threw, did not settle within `Session.STORE_LOAD_TIMEOUT_MS`,
       * or answered with no transcript): the request still goes out, prepared from a session held in memory (the
       * AI SDK sends the whole history each step), and nothing is written to the store until a load works. The
       * load is tried again in the background, `retryAfterMs` after this failure at the earliest; the first
       * request after a load that worked uses the stored session and appends the prompt's messages to it
       * (`ControllerSessions`). Once per failed load.
       */
      readonly type: "store-load-failed"
      readonly sessionId: string
      /** `PluginFailed` of kind `"store"` (`Session.storeFailure`): `threw` (the store's error in `detail`), `timeout` or `malformed`. */
      readonly error: PluginGuard.PluginFailed
      /** Failed loads of this session in a row, this one included. */
      readonly consecutiveFailures: number
      /** Ms from this failure until a request may start the next load (`ControllerSessions.loadRetryDelayMs`; 0: started at once). */
      readonly retryAfterMs: number
    }
  | {
      /**
       * A background load of the session worked after failed ones (`store-load-failed`): the next request uses the
       * stored session and appends the prompt's messages to it, once each (`ControllerSessions`). What only the
       * in-memory session held meanwhile (checkpoints, offload edits, events) is not carried over; a compaction the
       * stored session needs runs again. Once per outage, when the load settles.
       */
      readonly type: "store-load-recovered"
      readonly sessionId: string
      /** Failed loads of this outage, in a row, before this one worked (≥ 1). */
      readonly failedLoads: number
      /** Ms from the outage's first failed load to this load's success (the controller's clock `now`). */
      readonly outageMs: number
    }
  | {
      /** The request body was refused as too large (HTTP 413, C20): the route's byte cap is learned. */
      readonly type: "body-too-large"
      readonly sessionId: string
      readonly route: string
      /** Bytes of the refused body, by `RequestBytes.viewBytes`. */
      readonly rejectedBytes: number
      /** The cap later requests on the route keep under (`RequestBytes.learnedCap`). */
      readonly learnedCapBytes: number
    }
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
 * Calls the handler with `event`; a handler that throws is ignored (handlers
 * are observers and never break a request).
 *
 * @category utils
 */
export const emit = (onEvent: ((event: ContextEvent) => void) | undefined, event: ContextEvent): void => {
  try {
    onEvent?.(event)
  } catch {
    // Event handlers are observers; they never break a request.
  }
}

/**
 * The `compaction-failed` event: a compaction on `sessionId` failed with
 * `error`, and its route now stands at `route` (failures in a row; whether
 * the circuit opened). One constructor for the scheduled, overflow and
 * byte-cap paths.
 *
 * @category constructors
 */
export const compactionFailed = (
  sessionId: string,
  error: GuardedCompaction.Failure,
  route: PluginGuard.RouteState
): ContextEvent => ({
  type: "compaction-failed",
  sessionId,
  error,
  consecutiveFailures: route.consecutiveFailures,
  circuitOpen: route.open
})
