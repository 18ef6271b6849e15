/**
 * Arrays the request path builds step after step by appending, each with a
 * record of the earlier arrays it extends: a consumer that remembers an
 * earlier array tells in O(1) that a new one holds the same elements at
 * every earlier position ({@link isExtensionOf}), instead of comparing them
 * one by one (issue #13: the per-step cost must not grow with the session —
 * each such comparison was a pass over the whole session per step, several
 * per step).
 *
 * A record is true by construction: {@link extend} is the only way to make
 * one, and it builds the new array from its base's own elements. The arrays
 * are handed out as `ReadonlyArray` and must not be changed (the request
 * path never mutates an input or a view, DESIGN.md invariants); a member
 * whose length changed since it was built is no longer trusted (a push is
 * noticed), an element assigned in place is not. An array nobody built with
 * `extend` (e.g. a caller's own) has no record: consumers compare it as
 * before.
 *
 * Members of one lineage are prefix-ordered — of any two, the shorter is a
 * prefix of the longer — so a record is one shared object, not a chain.
 * `extend` continues its base's lineage when the base is as long as the
 * lineage's longest member (the new array then extends every member), and
 * starts a new one otherwise (an older array extended again: a branch).
 *
 * @since 0.5.0
 */

interface Lineage {
  /** Length of the longest member. */
  longest: number
}

interface Member {
  readonly lineage: Lineage
  /** The member's length when it was built. */
  readonly length: number
}

const members = new WeakMap<ReadonlyArray<unknown>, Member>()

/**
 * A new array: `base`'s elements, then `added`'s (one copy, as
 * `base.concat(added)`), recorded as extending `base` when `base` was
 * itself built here and is the longest of its lineage, else as the first of
 * a new lineage. Neither argument is changed or kept.
 *
 * @example
 * ```ts
 * import { ArrayLineage } from "@context-engine/core"
 * const first = ArrayLineage.extend([], ["a", "b"])
 * const second = ArrayLineage.extend(first, ["c"])
 * ArrayLineage.isExtensionOf(second, first) // true, without reading an element
 * ```
 *
 * @category constructors
 */
export const extend = <A>(base: ReadonlyArray<A>, added: ReadonlyArray<A>): ReadonlyArray<A> => {
  const items = base.concat(added)
  const known = members.get(base)
  const lineage =
    known !== undefined && known.length === base.length && known.lineage.longest === base.length
      ? known.lineage
      : { longest: 0 }
  lineage.longest = items.length
  members.set(items, { lineage, length: items.length })
  return items
}

/**
 * Whether `items` is recorded ({@link extend}) as holding `known`'s elements
 * at positions `0 … known.length − 1` — `items` is `known`, or both belong
 * to one lineage and `items` is at least as long — with neither's length
 * changed since it was built. `false` means "not known", not "different":
 * compare the elements then.
 *
 * @category guards
 */
export const isExtensionOf = (items: ReadonlyArray<unknown>, known: ReadonlyArray<unknown>): boolean => {
  if (items.length < known.length) return false
  const member = members.get(items)
  if (member === undefined || member.length !== items.length) return false
  if (items === known) return true
  const other = members.get(known)
  return other !== undefined && other.lineage === member.lineage && other.length === known.length
}

/**
 * The lineage `items` belongs to (an opaque object, held by its members
 * only), or `undefined` when `items` was not built by {@link extend} or its
 * length changed since. Of two members of one lineage the shorter is a
 * prefix of the longer: a cache keyed by this object (weakly) may keep a
 * value for a member's first `n` elements and reuse it for any member at
 * least `n` long, without holding an array.
 *
 * @category guards
 */
export const lineageOf = (items: ReadonlyArray<unknown>): object | undefined => {
  const member = members.get(items)
  return member !== undefined && member.length === items.length ? member.lineage : undefined
}
