/**
 * A transcript store over any {@link TranscriptBackend.Backend}: validation,
 * idempotent appends, the checkpoint compare-and-set, lenient/strict reads
 * and view reconstruction, written once for every backend.
 *
 * Inside the backend's exclusive write section the store first catches up
 * on records other processes wrote since it last looked (a per-session index
 * of entry ids, content digests and checkpoint generations), then checks the
 * new entries against that state and writes them durably. Writes of one
 * session are also serialized inside the process. A compaction commit
 * (`commitCompaction`) is one backend write: one transaction on SQL
 * backends (`atomicWrites`), one checksummed batch record on JSONL.
 *
 * Failures never acknowledge: when a write fails (disk full, connection
 * lost, constraint violation) the session's index is dropped and rebuilt
 * from storage by the next writer, so a retry writes instead of answering
 * "already stored".
 *
 * @since 0.1.0
 */
import { Effect, Stream } from "effect"
import * as ActiveView from "./ActiveView.ts"
import type { CheckpointEntry, Entry } from "./Entry.ts"
import { make as makeEntry } from "./Entry.ts"
import { CheckpointConflict, InvalidInput, TranscriptCorrupt, TranscriptStoreFailed } from "./Errors.ts"
import type { Backend, Transaction } from "./TranscriptBackend.ts"
import { makeMutex } from "./TranscriptBackend.ts"
import * as TranscriptIndex from "./TranscriptIndex.ts"
import type * as TranscriptLog from "./TranscriptLog.ts"
import { encodeBatch, encodeEntry, makeDecoder } from "./TranscriptLog.ts"
import {
  type AppendResult,
  checkSessionId,
  type LoadedTranscript,
  type ReadOptions,
  type Service
} from "./TranscriptStore.ts"

type SessionIndex = TranscriptIndex.SessionIndex

const describe = (value: unknown): string =>
  value === null ? "null" : Array.isArray(value) ? "an array" : typeof value

type Typed = InvalidInput | CheckpointConflict | TranscriptCorrupt | TranscriptStoreFailed

/** Maps a rejection to the typed errors `expected` of an operation, anything else to TranscriptStoreFailed. */
const failure =
  <E extends Typed = never>(
    source: string,
    operation: string,
    expected: ReadonlyArray<abstract new (...args: never) => E> = []
  ) =>
  (error: unknown): E | TranscriptStoreFailed =>
    error instanceof TranscriptStoreFailed || expected.some((type) => error instanceof type)
      ? (error as E | TranscriptStoreFailed)
      : new TranscriptStoreFailed({ source, operation, reason: error instanceof Error ? error.message : String(error) })

const warn = (issues: ReadonlyArray<TranscriptLog.TranscriptIssue>) =>
  Effect.forEach(
    issues,
    (issue) => Effect.logWarning(`transcript ${issue.source} line ${issue.line}: ${issue.kind}: ${issue.reason}`),
    { discard: true }
  )

/**
 * Builds a transcript store over a backend.
 *
 * @category constructors
 */
export const make = (backend: Backend): Service => {
  const indexes = new Map<string, SessionIndex>()
  const mutexes = new Map<string, <A>(body: () => Promise<A>) => Promise<A>>()

  /**
   * Serializes writes of one session inside this process, then enters the
   * backend's exclusive section. When the section fails after a write was
   * attempted, the session's index is forgotten: it may hold entries whose
   * commit failed, and the next writer rebuilds it from storage.
   */
  const exclusive = async <A>(
    sessionId: string,
    body: (write: Transaction["write"], index: SessionIndex) => Promise<A>
  ) => {
    let mutex = mutexes.get(sessionId)
    if (mutex === undefined) {
      mutex = makeMutex()
      mutexes.set(sessionId, mutex)
    }
    let attempted = false
    try {
      return await mutex(() =>
        backend.exclusive(sessionId, async (transaction) => {
          const issues = await catchUp(sessionId, transaction)
          const index = indexes.get(sessionId)!
          const write: Transaction["write"] = (cursor, texts) => {
            attempted = true
            return transaction.write(cursor, texts)
          }
          return { value: await body(write, index), issues }
        })
      )
    } catch (error) {
      if (attempted) indexes.delete(sessionId)
      throw error
    }
  }

  const catchUp = async (sessionId: string, transaction: Transaction) => {
    const source = backend.describe(sessionId)
    let index = indexes.get(sessionId) ?? TranscriptIndex.empty(source)
    let result = await transaction.readSince(index.cursor)
    if (result.reset) {
      index = TranscriptIndex.empty(source)
      result = await transaction.readSince(index.cursor)
    }
    const issues: Array<TranscriptLog.TranscriptIssue> = result.repaired ? [result.repaired] : []
    for (const raw of result.records) {
      const decoded = TranscriptIndex.decodeRecord(index.decoder, source, raw)
      for (const issue of decoded.issues) issues.push(issue)
      for (const { entry, text } of decoded.entries) TranscriptIndex.record(index, entry, text)
    }
    index.cursor = result.cursor
    indexes.set(sessionId, index)
    return issues
  }

  const runWrite = <A, E extends Typed>(
    sessionId: string,
    operation: string,
    expected: ReadonlyArray<abstract new (...args: never) => E>,
    body: (write: Transaction["write"], index: SessionIndex) => Promise<A>
  ) =>
    Effect.tryPromise({
      try: () => exclusive(sessionId, body),
      catch: failure(backend.describe(sessionId), operation, expected)
    }).pipe(
      Effect.tap(({ issues }) => warn(issues)),
      Effect.map(({ value }) => value)
    )

  const checkSession = (sessionId: string) => {
    const problem = checkSessionId(sessionId)
    return problem === undefined ? Effect.void : Effect.fail(problem)
  }

  // Each entry's problem is named by its index in the caller's array: `[3].parentId`.
  const encode = (entries: ReadonlyArray<Entry>) => {
    let index = 0
    return Effect.try({
      try: () =>
        entries.map((entry, at) => {
          index = at
          return encodeEntry(entry)
        }),
      catch: (error) =>
        error instanceof InvalidInput
          ? new InvalidInput({
              what: "entries",
              path: `[${index}]${error.path ? `.${error.path}` : ""}`,
              detail: error.detail
            })
          : new InvalidInput({
              what: "entries",
              path: `[${index}]`,
              detail: error instanceof Error ? error.message : String(error)
            })
    })
  }

  /** The argument is an array of objects (a typed error naming the bad index, never a raw TypeError). */
  const checkEntries = (entries: unknown): Effect.Effect<void, InvalidInput> => {
    if (!Array.isArray(entries))
      return Effect.fail(
        new InvalidInput({
          what: "entries",
          path: "",
          detail: `expected an array of entries, got ${describe(entries)}`
        })
      )
    const bad = entries.findIndex((entry) => typeof entry !== "object" || entry === null || Array.isArray(entry))
    return bad === -1
      ? Effect.void
      : Effect.fail(
          new InvalidInput({
            what: "entries",
            path: `[${bad}]`,
            detail: `expected an entry object, got ${describe(entries[bad])}`
          })
        )
  }

  /**
   * Checks `entries` against the index and writes the fresh ones: as one
   * record per entry, or — when `atomic` and the backend cannot commit
   * several records at once — as one batch record.
   */
  const writeFresh = (sessionId: string, operation: string, entries: ReadonlyArray<Entry>, atomic: boolean) =>
    Effect.flatMap(encode(entries), (texts) =>
      runWrite<AppendResult, InvalidInput | CheckpointConflict>(
        sessionId,
        operation,
        [InvalidInput, CheckpointConflict],
        async (write, index): Promise<AppendResult> => {
          const fresh = TranscriptIndex.plan(index, sessionId, entries, texts)
          if (fresh.length > 0) {
            const records = fresh.map(({ text }) => text)
            const framed = atomic && !backend.atomicWrites && records.length > 1 ? [encodeBatch(records)] : records
            index.cursor = await write(index.cursor, framed)
            for (const { entry, text } of fresh) TranscriptIndex.record(index, entry, text)
          }
          return { appended: fresh.length, skipped: entries.length - fresh.length }
        }
      )
    )

  const append: Service["append"] = (sessionId, entries) =>
    Effect.gen(function* () {
      yield* checkSession(sessionId)
      yield* checkEntries(entries)
      const checkpointAt = entries.findIndex((entry) => entry.kind === "checkpoint")
      if (checkpointAt !== -1) {
        return yield* Effect.fail(
          new InvalidInput({
            what: "entry",
            path: `[${checkpointAt}].kind`,
            detail: "checkpoints are installed with installCheckpoint or commitCompaction (compare-and-set)"
          })
        )
      }
      return yield* writeFresh(sessionId, "append", entries, false) as Effect.Effect<
        AppendResult,
        InvalidInput | TranscriptStoreFailed
      >
    })

  const commitCompaction: Service["commitCompaction"] = (sessionId, entries) =>
    Effect.gen(function* () {
      yield* checkSession(sessionId)
      yield* checkEntries(entries)
      const checkpoints = entries.filter((entry) => entry.kind === "checkpoint").length
      if (checkpoints > 1) {
        return yield* Effect.fail(
          new InvalidInput({
            what: "compaction",
            path: "",
            detail: `${checkpoints} checkpoints; at most one per commit`
          })
        )
      }
      return yield* writeFresh(sessionId, "commitCompaction", entries, true)
    })

  const installCheckpoint: Service["installCheckpoint"] = (sessionId, entry) =>
    Effect.gen(function* () {
      yield* checkSession(sessionId)
      yield* checkEntries([entry])
      if ((entry as Entry).kind !== "checkpoint") {
        return yield* Effect.fail(
          new InvalidInput({ what: "checkpoint entry", path: "kind", detail: 'expected "checkpoint"' })
        )
      }
      yield* writeFresh(sessionId, "installCheckpoint", [entry], true)
    })

  async function* decodeRecords(sessionId: string, options: ReadOptions | undefined) {
    const source = backend.describe(sessionId)
    const decoder = makeDecoder(source)
    for await (const raw of backend.records(sessionId)) {
      const decoded = TranscriptIndex.decodeRecord(decoder, source, raw)
      for (const issue of decoded.issues) {
        if (options?.strict && issue.kind !== "torn-line") {
          throw new TranscriptCorrupt({
            source: issue.source,
            line: issue.line,
            reason: `${issue.kind}: ${issue.reason}`
          })
        }
      }
      yield decoded
    }
  }

  const read: Service["read"] = (sessionId, options) =>
    Stream.fromAsyncIterable(
      decodeRecords(sessionId, options),
      failure(backend.describe(sessionId), "read", [TranscriptCorrupt])
    ).pipe(
      Stream.mapEffect((decoded) => Effect.as(warn(decoded.issues), decoded.entries)),
      Stream.flatMap((entries) => Stream.fromIterable(entries.map(({ entry }) => entry)))
    )

  const load: Service["load"] = (sessionId, options) =>
    checkSessionId(sessionId) !== undefined
      ? Effect.fail(
          new TranscriptStoreFailed({
            source: String(sessionId).slice(0, 80),
            operation: "load",
            reason: checkSessionId(sessionId)!.message
          })
        )
      : loadValid(sessionId, options)

  const loadValid: Service["load"] = (sessionId, options) =>
    Effect.tryPromise({
      try: async (): Promise<LoadedTranscript> => {
        const entries: Array<Entry> = []
        const issues: Array<TranscriptLog.TranscriptIssue> = []
        for await (const decoded of decodeRecords(sessionId, options)) {
          for (const issue of decoded.issues) issues.push(issue)
          for (const { entry } of decoded.entries) entries.push(entry)
        }
        return { sessionId, entries, issues }
      },
      catch: failure(backend.describe(sessionId), "load", [TranscriptCorrupt])
    }).pipe(Effect.tap((loaded) => warn(loaded.issues)))

  const lenient = (sessionId: string) =>
    load(sessionId).pipe(
      Effect.catchTag("TranscriptCorrupt", (error) =>
        Effect.fail(new TranscriptStoreFailed({ source: error.source, operation: "load", reason: error.message }))
      )
    )

  const activeView: Service["activeView"] = (sessionId, options) =>
    Effect.gen(function* () {
      const loaded = yield* lenient(sessionId)
      const view = ActiveView.reconstruct(loaded.entries, options)
      yield* Effect.forEach(
        view.skippedCheckpoints.filter((skipped) => skipped.reason !== ActiveView.ROLLED_BACK),
        (skipped) =>
          Effect.logWarning(
            `transcript ${backend.describe(sessionId)}: checkpoint ${skipped.entryId} ignored: ${skipped.reason}`
          ),
        { discard: true }
      )
      return { ...view, issues: loaded.issues }
    })

  const rollback: Service["rollback"] = (sessionId, checkpointEntryId) =>
    Effect.gen(function* () {
      yield* checkSession(sessionId)
      yield* runWrite(sessionId, "rollback", [InvalidInput], async (write, index) => {
        if (!index.checkpointIds.has(checkpointEntryId)) {
          throw new InvalidInput({
            what: "rollback",
            path: "checkpointEntryId",
            detail: `${checkpointEntryId} is not a checkpoint stored in session ${sessionId}`
          })
        }
        const event: Entry = makeEntry(
          { id: `rollback-${crypto.randomUUID()}`, parentId: index.lastEntryId, timestamp: new Date().toISOString() },
          { kind: "event", event: { name: ActiveView.ROLLBACK_EVENT, data: { checkpointEntryId } } }
        )
        const eventText = encodeEntry(event)
        index.cursor = await write(index.cursor, [eventText])
        TranscriptIndex.record(index, event, eventText)
      })
    })

  return {
    kind: backend.kind,
    append,
    read,
    load,
    latestCheckpoint: (sessionId) =>
      Effect.map(activeView(sessionId), (view): CheckpointEntry | undefined => view.checkpoint),
    installCheckpoint,
    commitCompaction,
    activeView,
    rollback,
    listSessions: () =>
      Effect.tryPromise({ try: () => backend.listSessions(), catch: failure(backend.kind, "listSessions") })
  }
}
