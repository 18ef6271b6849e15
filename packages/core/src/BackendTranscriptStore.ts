/**
 * A transcript store over any {@link TranscriptBackend.Backend}: validation,
 * idempotent appends, the checkpoint compare-and-set, lenient/strict reads
 * and view reconstruction, written once for every backend.
 *
 * Inside the backend's exclusive write section the store first catches up
 * on records other processes wrote since it last looked (a per-session index
 * of entry ids, content digests and checkpoint generations), then checks the
 * new entries against that state and writes them durably. Writes of one
 * session are also serialized inside the process.
 *
 * @since 0.1.0
 */
import { Effect, Stream } from "effect"
import * as ActiveView from "./ActiveView.ts"
import * as ContentHash from "./ContentHash.ts"
import type { CheckpointEntry, Entry } from "./Entry.ts"
import { CURRENT_SCHEMA_VERSION } from "./Entry.ts"
import { CheckpointConflict, InvalidInput, TranscriptCorrupt, TranscriptStoreFailed } from "./Errors.ts"
import type { Backend, Cursor, Transaction } from "./TranscriptBackend.ts"
import { makeMutex } from "./TranscriptBackend.ts"
import * as TranscriptLog from "./TranscriptLog.ts"
import type { AppendResult, LoadedTranscript, ReadOptions, Service } from "./TranscriptStore.ts"

interface SessionIndex {
  cursor: Cursor
  ids: Set<string>
  decoder: TranscriptLog.Decoder
  /** Entry id → content hash of its stored text (`ContentHash.text`; identical retries are no-ops). */
  digests: Map<string, string>
  checkpointIds: Set<string>
  generations: Map<number, string>
  maxGeneration: number
  lastEntryId: string | null
}

const emptyIndex = (source: string): SessionIndex => {
  const ids = new Set<string>()
  return {
    cursor: { offset: 0, line: 0 },
    ids,
    decoder: TranscriptLog.makeDecoder(source, ids),
    digests: new Map(),
    checkpointIds: new Set(),
    generations: new Map(),
    maxGeneration: 0,
    lastEntryId: null
  }
}

const record = (index: SessionIndex, entry: Entry, text: string): void => {
  index.ids.add(entry.id)
  index.digests.set(entry.id, ContentHash.text(text))
  index.lastEntryId = entry.id
  if (entry.kind === "checkpoint") {
    index.checkpointIds.add(entry.id)
    index.generations.set(entry.checkpoint.generation, entry.id)
    index.maxGeneration = Math.max(index.maxGeneration, entry.checkpoint.generation)
  }
}

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

  /** Serializes writes of one session inside this process, then enters the backend's exclusive section. */
  const exclusive = <A>(sessionId: string, body: (transaction: Transaction, index: SessionIndex) => Promise<A>) => {
    let mutex = mutexes.get(sessionId)
    if (mutex === undefined) {
      mutex = makeMutex()
      mutexes.set(sessionId, mutex)
    }
    return mutex(() =>
      backend.exclusive(sessionId, async (transaction) => {
        const issues = await catchUp(sessionId, transaction)
        const index = indexes.get(sessionId)!
        return { value: await body(transaction, index), issues }
      })
    )
  }

  const catchUp = async (sessionId: string, transaction: Transaction) => {
    let index = indexes.get(sessionId) ?? emptyIndex(backend.describe(sessionId))
    let result = await transaction.readSince(index.cursor)
    if (result.reset) {
      index = emptyIndex(backend.describe(sessionId))
      result = await transaction.readSince(index.cursor)
    }
    const issues: Array<TranscriptLog.TranscriptIssue> = result.repaired ? [result.repaired] : []
    for (const raw of result.records) {
      const decoded = index.decoder.decode(raw.text, raw.line, raw.torn)
      issues.push(...decoded.issues)
      if (decoded.entry) record(index, decoded.entry, raw.text)
    }
    index.cursor = result.cursor
    indexes.set(sessionId, index)
    return issues
  }

  const runWrite = <A, E extends Typed>(
    sessionId: string,
    operation: string,
    expected: ReadonlyArray<abstract new (...args: never) => E>,
    body: (transaction: Transaction, index: SessionIndex) => Promise<A>
  ) =>
    Effect.tryPromise({
      try: () => exclusive(sessionId, body),
      catch: failure(backend.describe(sessionId), operation, expected)
    }).pipe(
      Effect.tap(({ issues }) => warn(issues)),
      Effect.map(({ value }) => value)
    )

  const checkSession = (sessionId: string) =>
    sessionId.length === 0
      ? Effect.fail(new InvalidInput({ what: "session id", path: "", detail: "must be a non-empty string" }))
      : Effect.void

  const encode = (entries: ReadonlyArray<Entry>) =>
    Effect.try({
      try: () => entries.map((entry) => TranscriptLog.encodeEntry(entry)),
      catch: (error) =>
        error instanceof InvalidInput
          ? error
          : new InvalidInput({
              what: "entry",
              path: "",
              detail: error instanceof Error ? error.message : String(error)
            })
    })

  const append: Service["append"] = (sessionId, entries) =>
    Effect.gen(function* () {
      yield* checkSession(sessionId)
      const checkpointAt = entries.findIndex((entry) => entry.kind === "checkpoint")
      if (checkpointAt !== -1) {
        return yield* Effect.fail(
          new InvalidInput({
            what: "entry",
            path: `[${checkpointAt}].kind`,
            detail: "checkpoints are installed with installCheckpoint (compare-and-set on the generation)"
          })
        )
      }
      const texts = yield* encode(entries)
      return yield* runWrite(sessionId, "append", [InvalidInput], async (transaction, index): Promise<AppendResult> => {
        const fresh: Array<string> = []
        const batch = new Set<string>()
        entries.forEach((entry, position) => {
          const stored = index.digests.get(entry.id)
          if (stored !== undefined || batch.has(entry.id)) {
            if (stored === ContentHash.text(texts[position]!)) return
            throw new InvalidInput({
              what: "entry",
              path: `[${position}].id`,
              detail: `id ${entry.id} is already stored with different content`
            })
          }
          if (entry.parentId !== null && !index.digests.has(entry.parentId) && !batch.has(entry.parentId)) {
            throw new InvalidInput({
              what: "entry",
              path: `[${position}].parentId`,
              detail: `parent ${entry.parentId} is not stored in session ${sessionId}`
            })
          }
          batch.add(entry.id)
          fresh.push(texts[position]!)
        })
        if (fresh.length > 0) {
          index.cursor = await transaction.write(index.cursor, fresh)
          entries.forEach((entry, position) => {
            if (!index.digests.has(entry.id)) record(index, entry, texts[position]!)
          })
        }
        return { appended: fresh.length, skipped: entries.length - fresh.length }
      })
    })

  const installCheckpoint: Service["installCheckpoint"] = (sessionId, entry) =>
    Effect.gen(function* () {
      yield* checkSession(sessionId)
      if ((entry as Entry).kind !== "checkpoint") {
        return yield* Effect.fail(
          new InvalidInput({ what: "checkpoint entry", path: "kind", detail: 'expected "checkpoint"' })
        )
      }
      const [text] = yield* encode([entry])
      yield* runWrite<void, InvalidInput | CheckpointConflict>(
        sessionId,
        "installCheckpoint",
        [InvalidInput, CheckpointConflict],
        async (transaction, index) => {
          const stored = index.digests.get(entry.id)
          if (stored === ContentHash.text(text!)) return
          const { generation, coveredRange, firstKeptEntryId } = entry.checkpoint
          if (generation !== index.maxGeneration + 1) {
            const winner = index.generations.get(generation) ?? index.generations.get(index.maxGeneration)
            throw new CheckpointConflict({
              sessionId,
              checkpointId: entry.checkpoint.id,
              attemptedGeneration: generation,
              installedGeneration: index.maxGeneration,
              ...(winner === undefined ? {} : { winnerCheckpointId: winner })
            })
          }
          if (stored !== undefined) {
            throw new InvalidInput({ what: "checkpoint entry", path: "id", detail: `id ${entry.id} is already stored` })
          }
          const references: Array<[string, string | null]> = [
            ["parentId", entry.parentId],
            ["checkpoint.coveredRange.toEntryId", coveredRange.toEntryId],
            ["checkpoint.firstKeptEntryId", firstKeptEntryId]
          ]
          for (const [path, id] of references) {
            if (id !== null && !index.digests.has(id)) {
              throw new InvalidInput({
                what: "checkpoint entry",
                path,
                detail: `${id} is not stored in session ${sessionId}`
              })
            }
          }
          index.cursor = await transaction.write(index.cursor, [text!])
          record(index, entry, text!)
        }
      )
    })

  async function* decodeRecords(sessionId: string, options: ReadOptions | undefined) {
    const decoder = TranscriptLog.makeDecoder(backend.describe(sessionId))
    for await (const raw of backend.records(sessionId)) {
      const decoded = decoder.decode(raw.text, raw.line, raw.torn)
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
      Stream.mapEffect((decoded) => Effect.as(warn(decoded.issues), decoded.entry)),
      Stream.filter((entry): entry is Entry => entry !== undefined)
    )

  const load: Service["load"] = (sessionId, options) =>
    Effect.tryPromise({
      try: async (): Promise<LoadedTranscript> => {
        const entries: Array<Entry> = []
        const issues: Array<TranscriptLog.TranscriptIssue> = []
        for await (const decoded of decodeRecords(sessionId, options)) {
          issues.push(...decoded.issues)
          if (decoded.entry) entries.push(decoded.entry)
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
      yield* runWrite(sessionId, "rollback", [InvalidInput], async (transaction, index) => {
        if (!index.checkpointIds.has(checkpointEntryId)) {
          throw new InvalidInput({
            what: "rollback",
            path: "checkpointEntryId",
            detail: `${checkpointEntryId} is not a checkpoint stored in session ${sessionId}`
          })
        }
        const event: Entry = {
          id: `rollback-${crypto.randomUUID()}`,
          parentId: index.lastEntryId,
          timestamp: new Date().toISOString(),
          schemaVersion: CURRENT_SCHEMA_VERSION,
          kind: "event",
          event: { name: ActiveView.ROLLBACK_EVENT, data: { checkpointEntryId } }
        }
        const eventText = TranscriptLog.encodeEntry(event)
        index.cursor = await transaction.write(index.cursor, [eventText])
        record(index, event, eventText)
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
    activeView,
    rollback,
    listSessions: () =>
      Effect.tryPromise({ try: () => backend.listSessions(), catch: failure(backend.kind, "listSessions") })
  }
}
