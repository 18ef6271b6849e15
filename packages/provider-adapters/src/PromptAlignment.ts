/**
 * Where a request's message sits in the application's prompt. A request
 * built from a view is the prompt with some messages rewritten (offloaded
 * tool results), dropped (empty or reasoning-only messages) or inserted
 * (synthesized results for unanswered tool calls), so position `index` of
 * the request is usually position `index + offset` of the prompt, where the
 * offset changes by one at each drop or insert. {@link near} finds the
 * position with identity tests only; whatever it finds is checked by the
 * caller's test, so a guess it cannot make costs a conversion, never a wrong
 * message.
 *
 * @since 0.4.0
 */

/** How many positions past the expected one {@link near} looks (a run of dropped messages). */
export const LOOK_AHEAD = 4

/**
 * The prompt position of a request message expected at `expected`: the
 * first of `expected`, `expected + 1 … expected + LOOK_AHEAD` (messages the
 * request dropped) and `expected − 1` (one it inserted) where `isAt` holds,
 * else -1. At most `LOOK_AHEAD + 2` tests.
 *
 * @category utils
 */
export const near = (expected: number, isAt: (position: number) => boolean): number => {
  if (isAt(expected)) return expected
  for (let skip = 1; skip <= LOOK_AHEAD; skip++) if (isAt(expected + skip)) return expected + skip
  return isAt(expected - 1) ? expected - 1 : -1
}

// Requests built from an application's prompt: the prompt, and the positions whose message is not one of its objects.
const built = new WeakMap<
  ReadonlyArray<unknown>,
  { readonly original: ReadonlyArray<unknown>; readonly own: ReadonlyArray<number> }
>()

/**
 * Records that every position of `request` but `own` holds one of
 * `original`'s own message objects (the request was built from that prompt,
 * found with {@link near}). `request` must not change afterwards.
 *
 * @category utils
 */
export const noteBuilt = (
  request: ReadonlyArray<unknown>,
  original: ReadonlyArray<unknown>,
  own: ReadonlyArray<number>
): void => {
  built.set(request, { original, own })
}

/**
 * The positions of `request` that hold no object of `original`, when
 * `request` was recorded ({@link noteBuilt}) as built from that very array;
 * else `undefined` (find them with {@link near}).
 *
 * @category utils
 */
export const builtFrom = (
  request: ReadonlyArray<unknown>,
  original: ReadonlyArray<unknown>
): ReadonlyArray<number> | undefined => {
  const known = built.get(request)
  return known !== undefined && known.original === original ? known.own : undefined
}
