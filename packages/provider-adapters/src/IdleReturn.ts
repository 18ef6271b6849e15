/**
 * Idle return: a chat that comes back after its provider's prompt cache
 * expired pays full price for every input token of the next request. When
 * that request would carry at least {@link DEFAULT_THRESHOLD_TOKENS}, the
 * controller compacts before sending — at most once per cache window,
 * remembered across restarts by an {@link IDLE_COMPACTION_EVENT} entry.
 *
 * The cache window is measured from the last request: every entry's
 * timestamp is the time of the request that appended it, so the newest
 * timestamp before this request's messages are synced is when the cache
 * was last used (a read refreshes the provider's TTL). The TTL is the
 * provider profile's `promptCache.ttlMs` (Anthropic and OpenAI: 5 minutes).
 *
 * @since 0.1.0
 */
import { Entry } from "@context-engine/core"

/**
 * Name of the event entry recording an idle-return compaction. `data`:
 * `{ lastRequestAt: ISO string, idleMs, inputTokens }`.
 *
 * @category constants
 */
export const IDLE_COMPACTION_EVENT = "context-engine.idle-compaction"

/**
 * Smallest request, in tokens, worth compacting after the cache expired
 * (issue #15: "at least a threshold (default 100K tokens)"; at Anthropic's
 * prices an uncached 100K-token request costs ten times its cached read).
 *
 * @category constants
 */
export const DEFAULT_THRESHOLD_TOKENS = 100_000

/**
 * Options.
 *
 * @category models
 */
export interface Options {
  /** Smallest request that is compacted after an idle return (default {@link DEFAULT_THRESHOLD_TOKENS}). */
  readonly thresholdTokens?: number
}

/**
 * Time of the last request (newest entry timestamp), in epoch milliseconds,
 * or undefined for an empty or undated transcript.
 *
 * @category getters
 */
export const lastRequestMs = (entries: ReadonlyArray<Entry.Entry>): number | undefined => {
  let newest: number | undefined
  for (const entry of entries) {
    const time = Date.parse(entry.timestamp)
    if (Number.isFinite(time) && (newest === undefined || time > newest)) newest = time
  }
  return newest
}

/**
 * {@link lastRequestMs} over one session's append-only entry log, parsing
 * only the entries added since the previous call (a per-step cost that does
 * not grow with the session). A log that is not the previous one extended
 * (shorter, or its last seen entry replaced) is scanned whole.
 *
 * @category constructors
 */
export const makeLastRequestTracker = (): ((entries: ReadonlyArray<Entry.Entry>) => number | undefined) => {
  let count = 0
  let last: Entry.Entry | undefined
  let newest: number | undefined
  return (entries) => {
    if (entries.length < count || (count > 0 && entries[count - 1] !== last)) {
      count = 0
      newest = undefined
    }
    const added = lastRequestMs(entries.slice(count))
    if (added !== undefined && (newest === undefined || added > newest)) newest = added
    count = entries.length
    last = entries.at(-1)
    return newest
  }
}

/**
 * Whether the request should be compacted before it is sent: the cache
 * expired (`nowMs − lastMs ≥ ttlMs`, `ttlMs > 0`), the request carries at
 * least the threshold, and this cache window (identified by `lastMs`) was
 * not compacted for idleness before.
 *
 * @category predicates
 */
export const isDue = (input: {
  readonly entries: ReadonlyArray<Entry.Entry>
  readonly lastMs: number | undefined
  readonly nowMs: number
  readonly ttlMs: number
  readonly inputTokens: number
  readonly thresholdTokens?: number
}): boolean => {
  if (input.lastMs === undefined || input.ttlMs <= 0) return false
  if (input.nowMs - input.lastMs < input.ttlMs) return false
  if (input.inputTokens < (input.thresholdTokens ?? DEFAULT_THRESHOLD_TOKENS)) return false
  const window = new Date(input.lastMs).toISOString()
  return !input.entries.some(
    (entry) =>
      entry.kind === "event" &&
      entry.event.name === IDLE_COMPACTION_EVENT &&
      (entry.event.data as { readonly lastRequestAt?: unknown } | undefined)?.lastRequestAt === window
  )
}

/**
 * The event entry that records an idle-return compaction.
 *
 * @category constructors
 */
export const event = (input: {
  readonly id: string
  readonly parentId: string | null
  readonly lastMs: number
  readonly nowMs: number
  readonly inputTokens: number
}): Entry.EventEntry =>
  Entry.make(
    { id: input.id, parentId: input.parentId, timestamp: new Date(input.nowMs).toISOString() },
    {
      kind: "event",
      event: {
        name: IDLE_COMPACTION_EVENT,
        data: {
          lastRequestAt: new Date(input.lastMs).toISOString(),
          idleMs: input.nowMs - input.lastMs,
          inputTokens: input.inputTokens
        }
      }
    }
  )
