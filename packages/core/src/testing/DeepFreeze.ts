/**
 * `deepFreeze`: recursively freezes a value so that any mutation by the code
 * under test throws (DESIGN.md: caller input is never mutated). Typed arrays
 * cannot be frozen and are left as they are.
 *
 * @since 0.2.0
 */

/**
 * Freezes `value` and everything reachable from it; returns `value`.
 *
 * @example
 * ```ts
 * import { deepFreeze } from "@context-engine/core/testing"
 * const messages = deepFreeze([{ role: "user", content: "hi" }])
 * ```
 *
 * @category combinators
 */
export const deepFreeze = <A>(value: A): A => {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value) && !ArrayBuffer.isView(value)) {
    Object.freeze(value)
    for (const key of Object.keys(value)) deepFreeze((value as Record<string, unknown>)[key])
  }
  return value
}
