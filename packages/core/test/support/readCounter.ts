/**
 * Counts the reads of an array's first `upTo` positions: each becomes a
 * getter that counts into `reads` (a new counter by default), then returns
 * the element it held. The array stays the same object (its `ArrayLineage`
 * record stays). For tests that assert a step reads none of the items an
 * earlier step already saw.
 */
export const countReads = (
  array: ReadonlyArray<unknown>,
  upTo: number,
  reads: { count: number } = { count: 0 }
): { count: number } => {
  for (let index = 0; index < upTo; index++) {
    const value = array[index]
    Object.defineProperty(array, index, {
      get: () => {
        reads.count++
        return value
      },
      enumerable: true,
      configurable: true
    })
  }
  return reads
}
