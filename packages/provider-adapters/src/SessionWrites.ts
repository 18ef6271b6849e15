/**
 * What a session writes to its store, and how a store that fails is met
 * (`Session`): entries the session holds are stored in the order it wrote
 * them; when the store refuses a write for any reason but a stale write (an
 * outage: connection refused, disk full) the entries stay held as unstored,
 * the failure is reported ({@link OnStoreFailure}), and every later write
 * stores the unstored entries first — nothing is lost and no request waits
 * for the store. A compaction's commit (a write with a checkpoint) is the
 * exception: it is stored before the session holds it
 * (`storeFirst`), so a refused compaction never takes
 * effect and counts as failed.
 *
 * @since 0.3.0
 */
import { type Entry, PluginGuard } from "@context-engine/core"

/**
 * Where entries are persisted. Structurally a subset of core's
 * `AsyncTranscriptStore` (`TranscriptStore.toAsync`), so any store built there
 * can be passed as is. Entries that carry a checkpoint (a compaction's
 * edits, memory entries and checkpoint) go through `commitCompaction` when
 * the store has it (one atomic unit, compare-and-set on the generation), else
 * through `installCheckpoint` for the checkpoint and `append` for the rest.
 *
 * @category models
 */
export interface SessionStore {
  readonly load: (sessionId: string) => Promise<{ readonly entries: ReadonlyArray<Entry.Entry> }>
  readonly append: (sessionId: string, entries: ReadonlyArray<Entry.Entry>) => Promise<unknown>
  readonly installCheckpoint?: (sessionId: string, entry: Entry.CheckpointEntry) => Promise<unknown>
  readonly commitCompaction?: (sessionId: string, entries: ReadonlyArray<Entry.Entry>) => Promise<unknown>
}

/**
 * Whether `error` is a store write refused because the store holds entries
 * the session did not read: an id stored with other content or a parent it
 * does not hold (`InvalidInput` on an entry), or a checkpoint generation
 * already installed (`CheckpointConflict`) — what another process writing
 * the same session causes (`TranscriptIndex.plan`). Reading the session
 * again resolves it; any other store error is an outage.
 *
 * @category guards
 */
export const isStaleWrite = (error: unknown): boolean => {
  const { _tag, what } = (error ?? {}) as { readonly _tag?: unknown; readonly what?: unknown }
  return _tag === "CheckpointConflict" || (_tag === "InvalidInput" && what === "entry")
}

/**
 * A store write that failed for another reason than a stale write (an
 * outage: connection refused, disk full), as the plug-in failure the
 * controller reports (`PluginGuard.PluginFailed`, kind `"store"`): the one
 * constructor for the sync path (`store-failed` event) and the compaction
 * path (`compaction-failed`). No deadline applies to store writes, so
 * `timeoutMs` is `Infinity`.
 *
 * @category constructors
 */
export const storeFailure = (error: unknown): PluginGuard.PluginFailed =>
  new PluginGuard.PluginFailed({
    plugin: "transcript store",
    kind: "store",
    failure: "threw",
    timeoutMs: Number.POSITIVE_INFINITY,
    detail: error instanceof Error ? error.message : String(error)
  })

/**
 * Called when the store refused a write the session holds anyway (an
 * outage): `failure` says why, `unstoredEntries` how many entries the
 * session now holds that the store does not (stored first by the next
 * write, oldest first).
 *
 * @category models
 */
export type OnStoreFailure = (failure: PluginGuard.PluginFailed, unstoredEntries: number) => void

/**
 * A session's writer to its store.
 *
 * @category models
 */
export interface SessionWrites {
  /**
   * Stores entries the session already holds, after the unstored ones. On an outage they join the unstored ones
   * and `onStoreFailure` is called; it resolves. A stale write ({@link isStaleWrite}) rejects: the controller
   * reads the session again.
   */
  readonly storeHeld: (held: ReadonlyArray<Entry.Entry>) => Promise<void>
  /** Stores the unstored entries, then `entries` (not yet held); rejects with the store's error when it refuses. */
  readonly storeFirst: (entries: ReadonlyArray<Entry.Entry>) => Promise<void>
}

/**
 * The writer of session `sessionId` to `store` (none: every write is a
 * no-op). Entries that carry a checkpoint (a compaction's edits, memory
 * entries and checkpoint) go through `commitCompaction` when the store has
 * it, else `installCheckpoint` for the checkpoint and `append` for the rest.
 *
 * @category constructors
 */
export const make = (
  sessionId: string,
  store: SessionStore | undefined,
  onStoreFailure?: OnStoreFailure
): SessionWrites => {
  const persist = async (entries: ReadonlyArray<Entry.Entry>): Promise<void> => {
    if (!store || entries.length === 0) return
    if (store.commitCompaction && entries.filter((entry) => entry.kind === "checkpoint").length === 1) {
      await store.commitCompaction(sessionId, entries)
      return
    }
    let batch: Array<Entry.Entry> = []
    for (const entry of entries) {
      if (entry.kind === "checkpoint" && store.installCheckpoint) {
        if (batch.length > 0) await store.append(sessionId, batch)
        batch = []
        await store.installCheckpoint(sessionId, entry)
      } else batch.push(entry)
    }
    if (batch.length > 0) await store.append(sessionId, batch)
  }

  // Entries the session holds that the store refused (an outage), oldest first: every later write stores them first.
  let unstored: Array<Entry.Entry> = []
  const storeUnstored = async (): Promise<void> => {
    if (unstored.length === 0) return
    await persist(unstored)
    unstored = []
  }
  /**
   * Stores entries the session already holds, after the unstored ones; an outage keeps them unstored and is
   * reported, a stale write (another worker) rejects — the controller reads the session again.
   */
  const storeHeld = async (held: ReadonlyArray<Entry.Entry>): Promise<void> => {
    try {
      await storeUnstored()
      await persist(held)
    } catch (error) {
      if (isStaleWrite(error)) throw error
      unstored = [...unstored, ...held]
      onStoreFailure?.(storeFailure(error), unstored.length)
    }
  }
  const storeFirst = async (entries: ReadonlyArray<Entry.Entry>): Promise<void> => {
    await storeUnstored()
    await persist(entries)
  }
  return { storeHeld, storeFirst }
}
