/**
 * Which of many strings occur in a text, in one pass over the text: an
 * Aho–Corasick automaton (A. V. Aho and M. J. Corasick, "Efficient string
 * matching: an aid to bibliographic search", CACM 18(6), 1975). Building
 * costs O(total length of the patterns); each {@link SubstringIndex.foundIn}
 * costs O(text length + matches), however many patterns there are — unlike
 * `patterns.filter((p) => text.includes(p))`, which costs O(patterns × text).
 *
 * Used where validation asks "which identifiers does this summary keep" many
 * times with the same identifiers (checkpoint fitting, validation, the
 * containment pass of identifiers inside other identifiers).
 *
 * @since 0.1.0
 */

/**
 * An index over a fixed list of patterns.
 *
 * @category models
 */
export interface SubstringIndex {
  /** The patterns, as given (duplicates kept; the empty string occurs in every text). */
  readonly patterns: ReadonlyArray<string>
  /**
   * Indices (into `patterns`) of the patterns that occur in `text` as a
   * substring, in ascending order. An iterable of strings is read as their
   * concatenation (a match may span two of them) without building it.
   */
  readonly foundIn: (text: string | Iterable<string>) => ReadonlyArray<number>
  /**
   * For each of `pieces`, read on its own (no match spans two), the patterns
   * that occur in it: `visit(id, pieceIndex)` once per pattern and piece,
   * pieces in order. O(total length of the pieces + matches) — where
   * `foundIn` per piece costs O(patterns) more each time.
   */
  readonly eachIn: (pieces: ReadonlyArray<string>, visit: (id: number, pieceIndex: number) => void) => void
}

interface Node {
  readonly next: Map<number, number>
  fail: number
  /** Pattern ids ending here (own ones), then the ones of the failure chain via `outputLink`. */
  readonly ends: Array<number>
  /** Nearest node on the failure chain with patterns ending there, or -1. */
  outputLink: number
}

const newNode = (): Node => ({ next: new Map(), fail: 0, ends: [], outputLink: -1 })

const buildTrie = (patterns: ReadonlyArray<string>): Array<Node> => {
  const nodes: Array<Node> = [newNode()]
  patterns.forEach((pattern, id) => {
    let state = 0
    for (let index = 0; index < pattern.length; index++) {
      const code = pattern.charCodeAt(index)
      let next = nodes[state]!.next.get(code)
      if (next === undefined) {
        next = nodes.length
        nodes.push(newNode())
        nodes[state]!.next.set(code, next)
      }
      state = next
    }
    nodes[state]!.ends.push(id)
  })
  return nodes
}

/** Failure and output links, breadth first. */
const link = (nodes: Array<Node>): void => {
  const queue: Array<number> = []
  for (const child of nodes[0]!.next.values()) queue.push(child)
  for (let head = 0; head < queue.length; head++) {
    const state = queue[head]!
    for (const [code, child] of nodes[state]!.next) {
      let fail = nodes[state]!.fail
      while (fail !== 0 && !nodes[fail]!.next.has(code)) fail = nodes[fail]!.fail
      const target = nodes[fail]!.next.get(code)
      const childNode = nodes[child]!
      childNode.fail = target !== undefined && target !== child ? target : 0
      const failNode = nodes[childNode.fail]!
      childNode.outputLink = failNode.ends.length > 0 ? childNode.fail : failNode.outputLink
      queue.push(child)
    }
  }
}

/**
 * Builds the index. The empty pattern is reported as found in every text.
 *
 * @category constructors
 * @example
 * ```ts
 * import { SubstringIndex } from "@context-engine/core"
 * const index = SubstringIndex.make(["src/app.ts", "3000", "missing"])
 * index.foundIn("edited src/app.ts, server on 3000") // [0, 1]
 * ```
 */
export const make = (patterns: ReadonlyArray<string>): SubstringIndex => {
  const nodes = buildTrie(patterns)
  link(nodes)
  const empty = patterns.flatMap((pattern, id) => (pattern.length === 0 ? [id] : []))
  /**
   * Reads `piece` from `state` and returns the state after it, visiting the ids of the patterns that end on the
   * way. A node's output chain is visited once per `stamp`: later visits add nothing (`reportedIn` keeps the stamp
   * each node was last reported with).
   */
  const scan = (
    piece: string,
    from: number,
    reportedIn: Int32Array,
    stamp: number,
    visit: (id: number) => void
  ): number => {
    let state = from
    for (let index = 0; index < piece.length; index++) {
      const code = piece.charCodeAt(index)
      let next = nodes[state]!.next.get(code)
      while (next === undefined && state !== 0) {
        state = nodes[state]!.fail
        next = nodes[state]!.next.get(code)
      }
      state = next ?? 0
      let output = nodes[state]!.ends.length > 0 ? state : nodes[state]!.outputLink
      while (output !== -1 && reportedIn[output] !== stamp) {
        reportedIn[output] = stamp
        for (const id of nodes[output]!.ends) visit(id)
        output = nodes[output]!.outputLink
      }
    }
    return state
  }
  const foundIn = (text: string | Iterable<string>): ReadonlyArray<number> => {
    const found = new Uint8Array(patterns.length)
    for (const id of empty) found[id] = 1
    const reportedIn = new Int32Array(nodes.length)
    const mark = (id: number) => {
      found[id] = 1
    }
    let state = 0
    // the automaton's state carries over from one piece to the next: the pieces are read as one text
    for (const piece of typeof text === "string" ? [text] : text) state = scan(piece, state, reportedIn, 1, mark)
    const ids: Array<number> = []
    for (let id = 0; id < found.length; id++) if (found[id] === 1) ids.push(id)
    return ids
  }
  const eachIn = (pieces: ReadonlyArray<string>, visit: (id: number, pieceIndex: number) => void): void => {
    const reportedIn = new Int32Array(nodes.length)
    pieces.forEach((piece, pieceIndex) => {
      for (const id of empty) visit(id, pieceIndex)
      // The root holds only the empty patterns, just visited.
      reportedIn[0] = pieceIndex + 1
      scan(piece, 0, reportedIn, pieceIndex + 1, (id) => visit(id, pieceIndex))
    })
  }
  return { patterns, foundIn, eachIn }
}

/**
 * The values that do not occur in `text` (a string, or pieces read as their
 * concatenation), in their order: one pass over `text` for all of them.
 *
 * @category combinators
 */
export const absentFrom = (values: ReadonlyArray<string>, text: string | Iterable<string>): Array<string> => {
  if (values.length === 0) return []
  const found = new Set(make(values).foundIn(text))
  return values.filter((_, id) => !found.has(id))
}
