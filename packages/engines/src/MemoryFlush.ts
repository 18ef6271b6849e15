/**
 * The memory flush: once per compaction cycle, before the checkpoint that
 * ends the cycle is written, the extractor reads the originals of the range
 * that checkpoint will cover and the flush turns its proposals into memory
 * entries plus one {@link Memory.MEMORY_FLUSH_EVENT} entry naming the cycle
 * (DESIGN.md "Durable memory").
 *
 * The failure kinds of OpenClaw's memory flush this rules out:
 * - skipped on the reactive overflow path (openclaw#114081): the flush is
 *   part of the checkpoint commit itself, so every path that writes a
 *   checkpoint (threshold, manual, overflow recovery) flushes;
 * - run after compaction on the stub summary (#128016): the extractor reads
 *   the covered originals, never a summary, and its entries precede the
 *   checkpoint in `entriesToAppend`;
 * - every other cycle, or never (#47143, #12590, #99958): the cycle is the
 *   checkpoint generation, recorded durably by the event entry, so each
 *   generation flushes exactly once — also across a restart between the
 *   flush and the checkpoint install;
 * - a flush–compaction loop (#66058): the flush never triggers a
 *   compaction; what it adds is capped by the memory budget and measured in
 *   the request it is committed with.
 *
 * @since 0.1.0
 */
import { Entry, Memory, PluginGuard } from "@context-engine/core"
import { Effect } from "effect"
import type { MemoryExtractor } from "./MemoryExtractor.ts"
import type { CoveredItem } from "./Summarizer.ts"

/**
 * What a flush needs.
 *
 * @category models
 */
export interface FlushRequest {
  /** The active path the compaction ran on. */
  readonly entries: ReadonlyArray<Entry.Entry>
  /** The cycle: the generation of the checkpoint about to be written. */
  readonly cycle: number
  /** Originals of the range that checkpoint covers. */
  readonly covered: ReadonlyArray<CoveredItem>
  /**
   * Covered messages the next request keeps verbatim beside the checkpoint
   * (`Checkpoint.keptUserEntryIds`). The extractor does not read them: their
   * words are in the request as they were, and a record would send them
   * twice. When a later checkpoint stops keeping one, that checkpoint covers
   * it again (`KeptUsers.continuation`) and its flush reads it.
   */
  readonly keptEntryIds?: ReadonlyArray<string> | undefined
  readonly extractor: MemoryExtractor
  /** Entry timestamp (ISO 8601). */
  readonly timestamp: string
  /** Id of the entry the first flush entry follows. */
  readonly parentId: string | null
  /** The caller's signal, passed to the extractor; an abort skips the flush. */
  readonly signal?: AbortSignal | undefined
  /** Deadline of the extractor in ms (default `PluginGuard.DEFAULT_PLUGIN_TIMEOUT_MS`). */
  readonly timeoutMs?: number | undefined
}

/** Why extracted candidates cannot be written (undefined when they can). */
const malformedCandidates = (candidates: unknown): string | undefined => {
  if (!Array.isArray(candidates)) return "expected a list of memory candidates"
  for (const [index, candidate] of candidates.entries()) {
    const record = candidate as { text?: unknown; sourceEntryIds?: unknown } | null
    if (typeof record !== "object" || record === null || typeof record.text !== "string")
      return `candidate ${index} has no text`
    if (!Array.isArray(record.sourceEntryIds)) return `candidate ${index} has no sourceEntryIds`
  }
  return undefined
}

/**
 * What a flush produced: entries to append before the checkpoint (memory
 * records, then the flush event); `skipped` says why nothing was written.
 *
 * @category models
 */
export interface FlushResult {
  readonly entries: ReadonlyArray<Entry.Entry>
  readonly skipped?: "already-flushed" | "nothing-covered" | "extractor-failed"
  /** The extractor's failure, when `skipped` is `extractor-failed`. */
  readonly error?: unknown
}

/**
 * Runs the flush for `request.cycle`, or nothing when that cycle was already
 * flushed (its event is on the path). A failing extractor writes nothing and
 * never fails the compaction (the checkpoint keeps what it covered); the next
 * cycle's flush reads its own range.
 *
 * Entry ids are derived from the cycle and the last covered entry
 * (`memory:<cycle>:<toEntryId>:<n>`, `memory-flush:<cycle>:<toEntryId>`), like
 * checkpoint ids, so branches never collide; an id the input already holds
 * gets a suffix (`Entry.freshId`).
 *
 * @category constructors
 */
export const run = (request: FlushRequest): Effect.Effect<FlushResult> =>
  Effect.gen(function* () {
    if (Memory.flushedCycles(request.entries).has(request.cycle)) return { entries: [], skipped: "already-flushed" }
    const toEntryId = request.covered.at(-1)?.entryId
    if (toEntryId === undefined) return { entries: [], skipped: "nothing-covered" }
    const existing = Memory.active(request.entries)
    const kept = new Set(request.keptEntryIds ?? [])
    const read = kept.size === 0 ? request.covered : request.covered.filter((item) => !kept.has(item.entryId))
    const extracted = yield* Effect.result(
      PluginGuard.guardEffect(
        Effect.suspend(() => request.extractor.extract({ covered: read, existing, signal: request.signal })),
        {
          plugin: request.extractor.name,
          kind: "memory-extractor",
          timeoutMs: request.timeoutMs,
          signal: request.signal,
          validate: malformedCandidates
        }
      )
    )
    if (extracted._tag === "Failure") return { entries: [], skipped: "extractor-failed", error: extracted.failure }
    const records = Entry.chain(
      request.parentId,
      request.timestamp,
      extracted.success.map((candidate, index) => ({
        id: Entry.freshId(`memory:${request.cycle}:${toEntryId}:${index}`, request.entries),
        body: {
          kind: "memory" as const,
          memory: {
            text: candidate.text,
            scope: candidate.scope,
            sourceEntryIds: [...candidate.sourceEntryIds],
            ...(candidate.key !== undefined ? { key: candidate.key } : {}),
            ...(candidate.supersedes && candidate.supersedes.length > 0
              ? { supersedes: [...candidate.supersedes] }
              : {}),
            cycle: request.cycle
          }
        }
      }))
    )
    const event = Entry.make(
      {
        id: Entry.freshId(`memory-flush:${request.cycle}:${toEntryId}`, request.entries),
        parentId: records.at(-1)?.id ?? request.parentId,
        timestamp: request.timestamp
      },
      {
        kind: "event",
        event: {
          name: Memory.MEMORY_FLUSH_EVENT,
          data: {
            cycle: request.cycle,
            extractor: request.extractor.name,
            memoryEntryIds: records.map((entry) => entry.id),
            coveredToEntryId: toEntryId
          }
        }
      }
    )
    return { entries: [...records, event] }
  })

/**
 * The flush's outcome as the checkpoint stage's note suffix: `; memory flush
 * <skipped reason>`, `; memory flush: <n> records` (the last entry is the
 * flush event), or nothing when there was nothing to flush.
 *
 * @category constructors
 */
export const note = (flush: FlushResult): string =>
  flush.skipped !== undefined
    ? `; memory flush ${flush.skipped}`
    : flush.entries.length > 0
      ? `; memory flush: ${flush.entries.length - 1} records`
      : ""
