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
import { ArrayLineage } from "@context-engine/core"

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

/**
 * Where each message of a request sits in the application's prompt, kept
 * by {@link align} for the next request of the same session: runs of items
 * whose messages sit at consecutive prompt positions (the request differs
 * from the prompt only at a few drops, inserts and rewrites, so there are
 * few runs), and runs of the request's own messages.
 *
 * @category models
 */
export interface Alignment<M> {
  readonly items: ReadonlyArray<{ readonly message: M }>
  readonly synced: ReadonlyArray<M>
  readonly syncedLength: number
  readonly syncedLast: M | undefined
  /** `runStarts[k]`: the first item of run `k` (ascending; run `k` ends where run `k + 1` starts). */
  readonly runStarts: ReadonlyArray<number>
  /** `runPositions[k]`: the prompt position of run `k`'s first message, -1 for a run of the request's own. */
  readonly runPositions: ReadonlyArray<number>
  /** The item positions holding a message of the request's own, ascending. */
  readonly own: ReadonlyArray<number>
  /** Prompt position minus item position of the last item found in the prompt. */
  readonly offset: number
}

/**
 * The request for `items` built from the application's prompt `original`
 * and the session's messages `synced` (the prompt's messages as synced:
 * position `p` of one matches position `p` of the other by value): each
 * item whose message is the prompt's or the session's at its position
 * (found with {@link near} across the messages the request dropped or
 * inserted) holds the application's object there, every other item its own
 * message. `original` itself when every item is at its position and nothing
 * was dropped or inserted; else a new array (copied run by run from
 * `original`), noted with {@link noteBuilt}.
 *
 * Incremental: given the session's `previous` alignment, when the prompt is
 * the synced one (same length), the session's messages only grew since
 * (same array, appended in place) and `items` is recorded as extending the
 * previous items (`ArrayLineage`), the earlier items are neither read nor
 * searched — their runs are the previous ones — and only the items after
 * them are. Else every item is. The request is the same either way
 * (property-tested). `alignment` is `undefined` when `original` is not the
 * synced prompt (e.g. a retry's request).
 *
 * @category constructors
 */
export const align = <M>(
  items: ReadonlyArray<{ readonly message: M }>,
  original: ReadonlyArray<M>,
  synced: ReadonlyArray<M>,
  previous: Alignment<M> | undefined
): { readonly request: ReadonlyArray<M>; readonly alignment: Alignment<M> | undefined } => {
  const prompt = original.length === synced.length
  const reuse =
    prompt &&
    previous !== undefined &&
    previous.synced === synced &&
    synced.length >= previous.syncedLength &&
    synced[previous.syncedLength - 1] === previous.syncedLast &&
    ArrayLineage.isExtensionOf(items, previous.items)
  const start = reuse ? previous!.items.length : 0
  const runStarts = reuse ? previous!.runStarts.slice() : []
  const runPositions = reuse ? previous!.runPositions.slice() : []
  const own = reuse ? previous!.own.slice() : []
  let offset = reuse ? previous!.offset : 0
  for (let index = start; index < items.length; index++) {
    const message = items[index]!.message
    const expected = index + offset
    // The common case (same offset as the previous message) tested inline: no closure per position.
    const at =
      expected < original.length && (message === original[expected] || message === synced[expected])
        ? expected
        : near(
            expected,
            (position) =>
              position >= 0 &&
              position < original.length &&
              (message === original[position] || message === synced[position])
          )
    if (at >= 0) offset = at - index
    else own.push(index)
    // A new run unless this item continues the last one (the next prompt position, or another message of its own).
    const last = runStarts.length - 1
    const continues =
      last >= 0 &&
      (at < 0
        ? runPositions[last] === -1
        : runPositions[last]! >= 0 && at === runPositions[last]! + index - runStarts[last]!)
    if (!continues) {
      runStarts.push(index)
      runPositions.push(at)
    }
  }
  const alignment: Alignment<M> | undefined = prompt
    ? { items, synced, syncedLength: synced.length, syncedLast: synced.at(-1), runStarts, runPositions, own, offset }
    : undefined
  if (items.length === original.length && runStarts.length <= 1 && (runPositions[0] ?? 0) === 0)
    return { request: original, alignment }
  // Copied run by run: the items themselves are read only where the message is the request's own.
  const request = new Array<M>(items.length)
  for (let run = 0; run < runStarts.length; run++) {
    const first = runStarts[run]!
    const end = run + 1 < runStarts.length ? runStarts[run + 1]! : items.length
    const shift = runPositions[run]! - first
    if (runPositions[run]! >= 0) for (let index = first; index < end; index++) request[index] = original[index + shift]!
    else for (let index = first; index < end; index++) request[index] = items[index]!.message
  }
  noteBuilt(request, original, own)
  return { request, alignment }
}
