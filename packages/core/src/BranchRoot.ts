/**
 * A branch that starts over at the transcript's root: the first entry of a
 * history that shares no entry with the one before it (an application that
 * changed its first message — a system prompt rewritten every step — resends
 * a history that diverges at position 0).
 *
 * The format already has two readings of `parentId: null`, and both must
 * stay: the transcript's first entry, and an entry that continues the entry
 * before it in transcript order (imported multi-session files and hand-built
 * logs carry no parent links; `ActiveView.branch`). A new root written with
 * `parentId: null` alone is read as a continuation, so readers of the store
 * saw the old history followed by the new one. The decision (session 8):
 * the new root carries `meta.branchRoot: true` — `meta` is the entry
 * header's optional metadata object, so no schema, schema version or store
 * changes; transcripts without the key read exactly as before; nothing is
 * rewritten or deleted (the old branch stays in the transcript, reachable by
 * its leaf id). A reader that does not know the key reads the entry as it
 * always did (a continuation). Rejected: a sentinel `parentId` (the stores
 * refuse a parent they do not hold), a separate marker entry (it would need
 * the same rule to stop the walk, and one more entry per root), a root
 * entry written first (an existing transcript cannot gain an entry before its
 * first one: append-only).
 *
 * @since 0.6.0
 */

/**
 * The `meta` key that marks a branch root (value `true`).
 *
 * @category constants
 */
export const META_KEY = "branchRoot"

/** What {@link isRoot} reads of an entry. @category models */
export interface Marked {
  readonly parentId: string | null
  readonly meta?: { readonly [key: string]: unknown } | undefined
}

/**
 * Whether `entry` starts a branch at the root: no parent and
 * `meta.branchRoot === true`. An entry with a parent is never one.
 *
 * @category guards
 */
export const isRoot = (entry: Marked): boolean => entry.parentId === null && entry.meta?.[META_KEY] === true

/**
 * `entry` marked as a branch root (its other metadata kept; `parentId` must
 * be null for the mark to count). Returns a new object.
 *
 * @category constructors
 */
export const mark = <E extends Marked>(entry: E): E => ({ ...entry, meta: { ...entry.meta, [META_KEY]: true } })
