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
 * effect and counts as failed. A write that has not settled within
 * {@link STORE_WRITE_TIMEOUT_MS} is an outage too (`timeout`): a hung store
 * holds no request. The load that opens a session goes through the same
 * guard ({@link load}); the controller meets its failure
 * (`ControllerSessions`).
 *
 * @since 0.6.0
 */
import { EngineInput, type Entry, PluginGuard } from "@context-engine/core"
import { Cause, Effect, Exit } from "effect"

/**
 * Deadline of one store write: 60,000 ms, the plug-in deadline
 * (`PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`) — the store is a plug-in, and a
 * write that has not settled by then (a hung connection) is met as an
 * outage: the entries stay unstored and are written again first by the next
 * write. A late write that did land is not stored twice by a store built on
 * `TranscriptIndex.plan` (an entry already held with the same content is
 * skipped).
 *
 * @category constants
 */
export const STORE_WRITE_TIMEOUT_MS = PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS

/**
 * Deadline of the load that opens a session: 60,000 ms, the plug-in
 * deadline (`PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`), as for a write. A load
 * reads the whole session, more than a write does, so it gets no shorter
 * deadline (a slow but healthy store's load of a long session is not cut
 * off); and no longer one, since the first request of a session waits for
 * it against a hung store. Later loads run in the background and hold no
 * request (`ControllerSessions`).
 *
 * @category constants
 */
export const STORE_LOAD_TIMEOUT_MS = PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS

const STORE_PLUGIN = "transcript store"

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
 * outage: connection refused, disk full), or a failed load, as the plug-in
 * failure the controller reports (`PluginGuard.PluginFailed`, kind
 * `"store"`): the one constructor for the sync path (`store-failed` event),
 * the load ({@link load}, `store-load-failed`) and the compaction path
 * (`compaction-failed`): a guarded call's own failure (`threw`, `malformed`,
 * or `timeout` after {@link STORE_WRITE_TIMEOUT_MS} /
 * {@link STORE_LOAD_TIMEOUT_MS}) as it is, any other error as `threw`.
 *
 * @category constructors
 */
export const storeFailure = (error: unknown): PluginGuard.PluginFailed =>
  error instanceof PluginGuard.PluginFailed && error.kind === "store"
    ? error
    : new PluginGuard.PluginFailed({
        plugin: STORE_PLUGIN,
        kind: "store",
        failure: "threw",
        timeoutMs: STORE_WRITE_TIMEOUT_MS,
        detail: error instanceof Error ? error.message : String(error)
      })

/** Why a load's answer is not a transcript (`{ entries: Array }`), or undefined when it is one. */
const loadProblem = (loaded: { readonly entries: ReadonlyArray<Entry.Entry> }): string | undefined =>
  typeof loaded === "object" && loaded !== null && Array.isArray(loaded.entries)
    ? undefined
    : "load did not return { entries: Array }"

/**
 * The entries of session `sessionId` in `store`, read within
 * {@link STORE_LOAD_TIMEOUT_MS} (`PluginGuard.guardPromise`). Rejects with
 * `PluginFailed` of kind `"store"` ({@link storeFailure}): `threw` (the
 * store's error in `detail`), `timeout`, or `malformed` (the answer is not
 * `{ entries: Array }`).
 *
 * @category constructors
 */
export const load = async (store: SessionStore, sessionId: string): Promise<ReadonlyArray<Entry.Entry>> => {
  const exit = await Effect.runPromiseExit(
    PluginGuard.guardPromise({
      plugin: STORE_PLUGIN,
      kind: "store",
      timeoutMs: STORE_LOAD_TIMEOUT_MS,
      run: () => store.load(sessionId),
      validate: loadProblem
    })
  )
  if (Exit.isFailure(exit)) throw storeFailure(Cause.squash(exit.cause))
  return exit.value.entries
}

/**
 * Checks the active path of a session read by {@link load} (`path`, taken
 * from `entries` in the order of the load) with the engine's entry checks
 * (`EngineInput.entriesProblem`: the `Entry` schema, repeated ids): an entry
 * the engine would refuse on every request (a row mapped without
 * `schemaVersion`, a corrupt row) throws `PluginFailed` of kind `"store"`,
 * `malformed`, naming it as `entries[i]` of the load — the load failed, so
 * the controller opens the session in memory and tries again later. Entries
 * off the active path are not sent to the engine and are not checked.
 *
 * @category constructors
 */
export const checkLoaded = (entries: ReadonlyArray<Entry.Entry>, path: ReadonlyArray<Entry.Entry>): void => {
  const problem = EngineInput.entriesProblem(path)
  if (problem === undefined) return
  const at = /^entries\[(\d+)\]/.exec(problem.path)
  const where =
    at === null ? problem.path : `entries[${entries.indexOf(path[Number(at[1])]!)}]${problem.path.slice(at[0].length)}`
  throw new PluginGuard.PluginFailed({
    plugin: STORE_PLUGIN,
    kind: "store",
    failure: "malformed",
    timeoutMs: STORE_LOAD_TIMEOUT_MS,
    detail: `load answered an entry the engine refuses at ${where}: ${problem.detail}`
  })
}

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

const noWrites: SessionWrites = { storeHeld: async () => {}, storeFirst: async () => {} }

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
  // No store: nothing to write, so no guard either (its deadline timer and Effect run cost ≈ 70 µs on every step).
  if (store === undefined) return noWrites
  const persist = async (entries: ReadonlyArray<Entry.Entry>): Promise<void> => {
    if (entries.length === 0) return
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

  /** `persist` within {@link STORE_WRITE_TIMEOUT_MS} (`PluginGuard.guardPromise`); a stale write rejects as the store's error. */
  const persistGuarded = async (entries: ReadonlyArray<Entry.Entry>): Promise<void> => {
    let stale: { readonly error: unknown } | undefined
    const exit = await Effect.runPromiseExit(
      PluginGuard.guardPromise({
        plugin: STORE_PLUGIN,
        kind: "store",
        timeoutMs: STORE_WRITE_TIMEOUT_MS,
        run: () =>
          persist(entries).catch((error: unknown) => {
            if (!isStaleWrite(error)) throw error
            stale = { error }
          })
      })
    )
    if (stale !== undefined) throw stale.error
    if (Exit.isFailure(exit)) throw Cause.squash(exit.cause)
  }

  // Entries the session holds that the store refused (an outage), oldest first: every later write stores them first.
  let unstored: Array<Entry.Entry> = []
  const storeUnstored = async (): Promise<void> => {
    if (unstored.length === 0) return
    await persistGuarded(unstored)
    unstored = []
  }
  /**
   * Stores entries the session already holds, after the unstored ones; an outage keeps them unstored and is
   * reported, a stale write (another worker) rejects — the controller reads the session again.
   */
  const storeHeld = async (held: ReadonlyArray<Entry.Entry>): Promise<void> => {
    try {
      await storeUnstored()
      await persistGuarded(held)
    } catch (error) {
      if (isStaleWrite(error)) throw error
      unstored = [...unstored, ...held]
      onStoreFailure?.(storeFailure(error), unstored.length)
    }
  }
  const storeFirst = async (entries: ReadonlyArray<Entry.Entry>): Promise<void> => {
    await storeUnstored()
    await persistGuarded(entries)
  }
  return { storeHeld, storeFirst }
}
