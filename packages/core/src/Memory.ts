/**
 * Durable memory in the view (DESIGN.md "Durable memory"): which memory
 * records are in force (supersession), which of them fit the memory budget,
 * and how the once-per-cycle flush is recorded in the transcript.
 *
 * A record is superseded when a later memory entry names it in
 * `supersedes`, or carries the same `key`. Superseded records stay in the
 * transcript (append-only) and leave the view.
 *
 * The flush of compaction cycle `g` (the cycle that ends with the checkpoint
 * of generation `g`) is recorded by one event entry
 * ({@link MEMORY_FLUSH_EVENT}, `data.cycle = g`) written before that
 * checkpoint, so a restarted process sees that cycle `g` was flushed and
 * never flushes it twice.
 *
 * @since 0.1.0
 */
import type { Entry, MemoryEntry } from "./Entry.ts"

/**
 * Name of the event entry that records a memory flush. `data`:
 * `{ cycle: number, memoryEntryIds: string[], coveredToEntryId: string }`.
 *
 * @category constants
 */
export const MEMORY_FLUSH_EVENT = "context-engine.memory-flush"

/**
 * Default memory budget, in tokens: the most the rendered memory records may
 * take of every request. Own choice: a tenth of the default 20,000-token
 * keep-recent window (Pi's `keepRecentTokens`), enough for a few dozen
 * one-line facts. The records count as fixed overhead in the measurement
 * (category `memory`), so the budget bounds what memory costs each step.
 *
 * @category constants
 */
export const DEFAULT_MEMORY_BUDGET_TOKENS = 2_000

/**
 * Options of {@link select}.
 *
 * @category models
 */
export interface SelectOptions {
  /** Most tokens the selected records may take (default {@link DEFAULT_MEMORY_BUDGET_TOKENS}). */
  readonly budgetTokens?: number
  /**
   * Tokens of one record's text. Default: a character estimate
   * (`ceil(length / 4)`, OpenAI's rule of thumb for English), for callers
   * without a tokenizer; engines pass their tokenizer's count.
   */
  readonly countTokens?: (text: string) => number
}

const estimate = (text: string): number => Math.ceil(text.length / 4)

/**
 * The memory records in force, in transcript order: every memory entry not
 * superseded by a later one (by `supersedes` or by the same `key`).
 *
 * @category getters
 */
export const active = (entries: ReadonlyArray<Entry>): ReadonlyArray<MemoryEntry> => {
  const memories = entries.filter((entry): entry is MemoryEntry => entry.kind === "memory")
  const superseded = new Set<string>()
  const latestByKey = new Map<string, string>()
  for (const entry of memories) {
    for (const id of entry.memory.supersedes ?? []) superseded.add(id)
    const key = entry.memory.key
    if (key !== undefined) {
      const previous = latestByKey.get(key)
      if (previous !== undefined) superseded.add(previous)
      latestByKey.set(key, entry.id)
    }
  }
  return memories.filter((entry) => !superseded.has(entry.id))
}

/**
 * The records the view renders: the records in force, newest first, while
 * they fit the memory budget, returned in transcript order. A record that
 * does not fit is skipped (an older, shorter one may still fit).
 *
 * @category getters
 */
export const select = (entries: ReadonlyArray<Entry>, options: SelectOptions = {}): ReadonlyArray<MemoryEntry> => {
  const budgetTokens = options.budgetTokens ?? DEFAULT_MEMORY_BUDGET_TOKENS
  const count = options.countTokens ?? estimate
  const inForce = active(entries)
  const chosen = new Set<string>()
  let used = 0
  for (let index = inForce.length - 1; index >= 0; index--) {
    const entry = inForce[index]!
    const tokens = count(entry.memory.text)
    if (used + tokens > budgetTokens) continue
    used += tokens
    chosen.add(entry.id)
  }
  return inForce.filter((entry) => chosen.has(entry.id))
}

/**
 * The compaction cycles already flushed: `data.cycle` of every
 * {@link MEMORY_FLUSH_EVENT} entry.
 *
 * @category getters
 */
export const flushedCycles = (entries: ReadonlyArray<Entry>): ReadonlySet<number> => {
  const cycles = new Set<number>()
  for (const entry of entries) {
    if (entry.kind !== "event" || entry.event.name !== MEMORY_FLUSH_EVENT) continue
    const data = entry.event.data
    if (data === null || typeof data !== "object" || Array.isArray(data)) continue
    const cycle = (data as { readonly cycle?: unknown }).cycle
    if (typeof cycle === "number") cycles.add(cycle)
  }
  return cycles
}
