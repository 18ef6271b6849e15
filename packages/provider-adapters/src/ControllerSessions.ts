/**
 * The controller's sessions, one per session id, opened on first use, and
 * what happens when the store's load fails. The store is a plug-in, and a
 * failing plug-in never stops the agent's request (DESIGN.md invariants):
 *
 * - The first request of a session waits for the load, at most
 *   `Session.STORE_LOAD_TIMEOUT_MS` (60 s, the plug-in deadline).
 * - When the load fails (throws, times out, answers with no transcript —
 *   `Session.make` rejects with `PluginFailed` of kind `"store"`), the
 *   session is opened in memory, without the store: the AI SDK sends the
 *   whole history every step, so the request is still synced, compacted and
 *   sized to the window. The app is told (`store-load-failed`). Nothing is
 *   written to the store while the session is held in memory.
 * - The failure is not kept: the load is tried again in the background, so
 *   no later request waits for a store that hangs. The first retry starts at
 *   once (a single dropped connection is the common transient failure, and
 *   the retry holds no request); the n-th after it waits
 *   {@link loadRetryDelayMs} from the failure before it (1 s × 1.6ⁿ⁻¹, at
 *   most 120 s, gRPC's connection backoff) and is started by the first
 *   request after that time; one load per session is in flight at most.
 * - A load that works after failed ones is reported (`store-load-recovered`,
 *   with the failed loads and the outage's length), once per outage, when it
 *   settles. The first request after it uses the stored session: its
 *   sync finds the longest prefix of the prompt that the stored transcript
 *   holds and appends the rest, so the messages the in-memory session held
 *   are stored once each, in order. What only the in-memory session held
 *   (checkpoints of compactions made meanwhile, offload edits, events) is
 *   not carried over; a compaction the loaded session needs runs again.
 *
 * @since 0.6.0
 */
import type { ContextEvent } from "./ContextEvent.ts"
import type { ControllerOptions } from "./ControllerOptions.ts"
import * as Session from "./Session.ts"

/**
 * Delay before the first retry that waits (the second retry), in ms: gRPC's
 * `INITIAL_BACKOFF` (1 s; grpc/grpc `doc/connection-backoff.md`).
 *
 * @category constants
 */
export const LOAD_RETRY_INITIAL_MS = 1_000

/**
 * Growth of the retry delay from one failed load to the next: gRPC's
 * `MULTIPLIER` (1.6; `doc/connection-backoff.md`).
 *
 * @category constants
 */
export const LOAD_RETRY_MULTIPLIER = 1.6

/**
 * Largest retry delay, in ms: gRPC's `MAX_BACKOFF` (120 s;
 * `doc/connection-backoff.md`) — a store that stays down is asked for the
 * session about twice a minute.
 *
 * @category constants
 */
export const LOAD_RETRY_MAX_MS = 120_000

/**
 * How long after its `consecutiveFailures`-th failed load in a row (≥ 1) a
 * session's load is tried again, in ms (whole ms): 0 after the first (the
 * retry runs in the background at once), then
 * `min(LOAD_RETRY_MAX_MS, LOAD_RETRY_INITIAL_MS × LOAD_RETRY_MULTIPLIER^(n − 2))`
 * — gRPC's connection backoff without its jitter (retries here are started
 * by the requests of one session, which workers do not send in step).
 *
 * @category utils
 */
export const loadRetryDelayMs = (consecutiveFailures: number): number =>
  consecutiveFailures <= 1
    ? 0
    : Math.round(
        Math.min(LOAD_RETRY_MAX_MS, LOAD_RETRY_INITIAL_MS * LOAD_RETRY_MULTIPLIER ** (consecutiveFailures - 2))
      )

/**
 * The sessions of one controller.
 *
 * @category models
 */
export interface ControllerSessions {
  /**
   * The session `sessionId`: the stored one, or the in-memory one while its
   * load fails (which may start a retry in the background; see the module
   * notes). Resolves even when the store fails.
   */
  readonly get: (sessionId: string) => Promise<Session.Session>
  /** Forgets the session (the store holds writes it has not read): the next `get` loads it again. */
  readonly reload: (sessionId: string) => void
}

/** A session held in memory because its load failed. */
interface Fallback {
  consecutiveFailures: number
  /** When the next retry may start, in ms since the epoch (the controller's clock). */
  retryAtMs: number
  /** A retry is in flight. */
  retrying: boolean
  /** When the first load of this outage failed, in ms since the epoch (the controller's clock). */
  readonly firstFailedAtMs: number
}

/**
 * The sessions of a controller built from `options` (its store, message
 * ids, history check and clock `now`); `emit` reports `store-failed`,
 * `store-load-failed` and `store-load-recovered`.
 *
 * @category constructors
 */
export const make = (options: ControllerOptions, emit: (event: ContextEvent) => void): ControllerSessions => {
  const sessions = new Map<string, Promise<Session.Session>>()
  const fallbacks = new Map<string, Fallback>()
  const nowMs = (): number => (options.now?.() ?? new Date()).getTime()

  const open = (sessionId: string, store: Session.SessionStore | undefined): Promise<Session.Session> =>
    Session.make(sessionId, store, options.messageId, options.historyCheck, (error, unstoredEntries) =>
      emit({ type: "store-failed", sessionId, error, unstoredEntries })
    )

  const loadFailed = (sessionId: string, fallback: Fallback, error: unknown): void => {
    fallback.consecutiveFailures++
    const retryAfterMs = loadRetryDelayMs(fallback.consecutiveFailures)
    fallback.retryAtMs = nowMs() + retryAfterMs
    emit({
      type: "store-load-failed",
      sessionId,
      error: Session.storeFailure(error),
      consecutiveFailures: fallback.consecutiveFailures,
      retryAfterMs
    })
    if (retryAfterMs === 0) retry(sessionId, fallback)
  }

  // A retry in the background: on success the stored session replaces the in-memory one for the next request.
  const retry = (sessionId: string, fallback: Fallback): void => {
    fallback.retrying = true
    open(sessionId, options.store).then(
      (loaded) => {
        if (fallbacks.get(sessionId) !== fallback) return
        fallbacks.delete(sessionId)
        sessions.set(sessionId, Promise.resolve(loaded))
        emit({
          type: "store-load-recovered",
          sessionId,
          failedLoads: fallback.consecutiveFailures,
          outageMs: Math.max(0, nowMs() - fallback.firstFailedAtMs)
        })
      },
      (error: unknown) => {
        if (fallbacks.get(sessionId) !== fallback) return
        fallback.retrying = false
        loadFailed(sessionId, fallback, error)
      }
    )
  }

  const first = async (sessionId: string): Promise<Session.Session> => {
    try {
      return await open(sessionId, options.store)
    } catch (error) {
      const memory = await open(sessionId, undefined)
      const fallback: Fallback = { consecutiveFailures: 0, retryAtMs: 0, retrying: false, firstFailedAtMs: nowMs() }
      fallbacks.set(sessionId, fallback)
      loadFailed(sessionId, fallback, error)
      return memory
    }
  }

  const get = (sessionId: string): Promise<Session.Session> => {
    const fallback = fallbacks.get(sessionId)
    if (fallback !== undefined && !fallback.retrying && nowMs() >= fallback.retryAtMs) retry(sessionId, fallback)
    let opened = sessions.get(sessionId)
    if (opened === undefined) {
      opened = first(sessionId)
      sessions.set(sessionId, opened)
    }
    return opened
  }

  return {
    get,
    reload: (sessionId) => {
      sessions.delete(sessionId)
      fallbacks.delete(sessionId)
    }
  }
}
