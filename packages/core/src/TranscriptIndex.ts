/**
 * What a transcript store's writer knows about one session: the ids it has
 * stored, a digest of each stored entry (identical retries are no-ops), the
 * checkpoint generations installed, and where it stopped reading. Built by
 * catching up on stored records inside the exclusive write section and
 * checked against before anything is written ({@link plan}).
 *
 * The index is a cache of storage, never ahead of it: a store updates it
 * only after a write committed, and forgets it when a write failed (the next
 * writer rebuilds it from storage), so a failed commit is never answered
 * "already stored" on retry.
 *
 * @since 0.1.0
 */
import * as ContentHash from "./ContentHash.ts"
import type { Entry } from "./Entry.ts"
import { CheckpointConflict, InvalidInput } from "./Errors.ts"
import type { Cursor, RawRecord } from "./TranscriptBackend.ts"
import * as TranscriptLog from "./TranscriptLog.ts"

/**
 * The writer's knowledge of one session.
 *
 * @category models
 */
export interface SessionIndex {
  cursor: Cursor
  readonly ids: Set<string>
  readonly decoder: TranscriptLog.Decoder
  /** Entry id → digest of its stored text ({@link digest}). */
  readonly digests: Map<string, string>
  readonly checkpointIds: Set<string>
  /** Generation → checkpoint entry id. */
  readonly generations: Map<number, string>
  maxGeneration: number
  lastEntryId: string | null
}

/**
 * An index of nothing stored yet.
 *
 * @category constructors
 */
export const empty = (source: string): SessionIndex => {
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

/**
 * The digest of a stored text (`ContentHash.text`).
 *
 * @category getters
 */
export const digest = (text: string): string => ContentHash.text(text)

/**
 * Records an entry stored with `text`.
 *
 * @category mutations
 */
export const record = (index: SessionIndex, entry: Entry, text: string): void => {
  index.ids.add(entry.id)
  index.digests.set(entry.id, digest(text))
  index.lastEntryId = entry.id
  if (entry.kind === "checkpoint") {
    index.checkpointIds.add(entry.id)
    index.generations.set(entry.checkpoint.generation, entry.id)
    index.maxGeneration = Math.max(index.maxGeneration, entry.checkpoint.generation)
  }
}

/**
 * Decodes one stored record (a batch record into its entries) with `decoder`
 * and returns the entries with their texts and the issues found. A batch
 * whose checksum fails yields no entry and one `invalid-batch` issue.
 *
 * @category decoding
 */
export const decodeRecord = (
  decoder: TranscriptLog.Decoder,
  source: string,
  raw: RawRecord
): {
  readonly entries: ReadonlyArray<{ readonly entry: Entry; readonly text: string }>
  readonly issues: ReadonlyArray<TranscriptLog.TranscriptIssue>
} => {
  const expanded = raw.torn ? { texts: [raw.text] } : TranscriptLog.expandRecord(raw.text)
  if ("invalid" in expanded) {
    return { entries: [], issues: [{ source, line: raw.line, kind: "invalid-batch", reason: expanded.invalid }] }
  }
  const entries: Array<{ entry: Entry; text: string }> = []
  const issues: Array<TranscriptLog.TranscriptIssue> = []
  for (const text of expanded.texts) {
    const decoded = decoder.decode(text, raw.line, raw.torn)
    for (const issue of decoded.issues) issues.push(issue)
    if (decoded.entry) entries.push({ entry: decoded.entry, text })
  }
  return { entries, issues }
}

/**
 * The entries of a write that are not stored yet, after checking them
 * against the index: an id already stored with identical content is skipped
 * (a retry); with different content, a `parentId` that names nothing stored
 * or earlier in the write, or a checkpoint whose references are not stored
 * fail with `InvalidInput`; a checkpoint whose generation is not the highest
 * installed + 1 fails with `CheckpointConflict` (compare-and-set).
 *
 * @throws InvalidInput | CheckpointConflict
 * @category validation
 */
export const plan = (
  index: SessionIndex,
  sessionId: string,
  entries: ReadonlyArray<Entry>,
  texts: ReadonlyArray<string>
): ReadonlyArray<{ readonly entry: Entry; readonly text: string }> => {
  const fresh: Array<{ entry: Entry; text: string }> = []
  const batch = new Set<string>()
  const known = (id: string) => index.digests.has(id) || batch.has(id)
  entries.forEach((entry, position) => {
    const text = texts[position]!
    const stored = index.digests.get(entry.id)
    if (stored !== undefined || batch.has(entry.id)) {
      if (stored === digest(text)) return
      throw new InvalidInput({
        what: "entry",
        path: `[${position}].id`,
        detail: `id ${entry.id} is already stored with different content`
      })
    }
    if (entry.kind === "checkpoint") {
      checkCheckpoint(index, sessionId, entry, entries.length === 1 ? "" : `[${position}].`, known)
    } else if (entry.parentId !== null && !known(entry.parentId)) {
      throw new InvalidInput({
        what: "entry",
        path: `[${position}].parentId`,
        detail: `parent ${entry.parentId} is not stored in session ${sessionId}`
      })
    }
    batch.add(entry.id)
    fresh.push({ entry, text })
  })
  return fresh
}

const checkCheckpoint = (
  index: SessionIndex,
  sessionId: string,
  entry: Extract<Entry, { kind: "checkpoint" }>,
  pathPrefix: string,
  known: (id: string) => boolean
): void => {
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
  const references: Array<[string, string | null]> = [
    ["parentId", entry.parentId],
    ["checkpoint.coveredRange.toEntryId", coveredRange.toEntryId],
    ["checkpoint.firstKeptEntryId", firstKeptEntryId]
  ]
  for (const [path, id] of references) {
    if (id !== null && !known(id)) {
      throw new InvalidInput({
        what: "checkpoint entry",
        path: `${pathPrefix}${path}`,
        detail: `${id} is not stored in session ${sessionId}`
      })
    }
  }
}
