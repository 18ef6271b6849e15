/**
 * Whether a value is plain JSON data a schema decoder, `JSON.stringify` and
 * the measurer can walk without failing: checked iteratively (an explicit
 * stack, never recursion), so a 100,000-level nesting cannot overflow the
 * call stack while it is being rejected. Issue #12 req 5: deeply nested,
 * cyclic or BigInt tool inputs threw raw `RangeError` / `TypeError`s from
 * deep inside measurement.
 *
 * @since 0.2.0
 */

/**
 * Deepest nesting accepted: 512 levels of arrays/objects. JSON tool inputs
 * and messages of real agents nest a handful of levels; 512 stays far below
 * V8's recursion limit for the schema decoder and `JSON.stringify` (about
 * 10,000 frames with the default stack).
 *
 * @category constants
 */
export const MAX_JSON_DEPTH = 512

/**
 * A problem found: the path (`message.content[0].input.a.b`) and what is wrong.
 *
 * @category models
 */
export interface Problem {
  readonly path: string
  readonly detail: string
}

const child = (path: string, key: string | number): string =>
  typeof key === "number"
    ? `${path}[${key}]`
    : /^[A-Za-z_$][\w$]*$/.test(key)
      ? path
        ? `${path}.${key}`
        : key
      : `${path}[${JSON.stringify(key)}]`

const leafProblem = (value: unknown): string | undefined => {
  switch (typeof value) {
    case "bigint":
      return `a BigInt (${String(value).slice(0, 40)}n) is not JSON; pass it as a string or number`
    case "function":
      return "a function is not JSON"
    case "symbol":
      return "a symbol is not JSON"
    default:
      return undefined
  }
}

/**
 * The first problem of `value` as JSON data (undefined when there is none):
 * nesting deeper than {@link MAX_JSON_DEPTH}, a cycle, a BigInt, a function
 * or a symbol. Linear in the size of the value.
 *
 * @category validation
 */
export const check = (value: unknown, rootPath = ""): Problem | undefined => {
  const stack: Array<{ readonly value: unknown; readonly path: string; readonly depth: number }> = [
    { value, path: rootPath, depth: 0 }
  ]
  // Objects on the current path are what make a cycle; a DAG (shared, acyclic) is fine for JSON.
  const onPath = new Set<object>()
  const exits: Array<object | undefined> = []
  while (stack.length > 0) {
    const frame = stack.pop()!
    if (frame.value === EXIT) {
      onPath.delete(exits.pop()!)
      continue
    }
    const problem = leafProblem(frame.value)
    if (problem !== undefined) return { path: frame.path, detail: problem }
    if (typeof frame.value !== "object" || frame.value === null) continue
    const object = frame.value
    if (onPath.has(object)) return { path: frame.path, detail: "a cycle: this value contains itself" }
    if (frame.depth >= MAX_JSON_DEPTH)
      return { path: frame.path, detail: `nested deeper than ${MAX_JSON_DEPTH} levels` }
    if (object instanceof Uint8Array || object instanceof ArrayBuffer || object instanceof URL) continue
    onPath.add(object)
    exits.push(object)
    stack.push({ value: EXIT, path: frame.path, depth: frame.depth })
    if (Array.isArray(object)) {
      for (let index = object.length - 1; index >= 0; index--)
        stack.push({ value: object[index], path: child(frame.path, index), depth: frame.depth + 1 })
    } else {
      const keys = Object.keys(object)
      for (let index = keys.length - 1; index >= 0; index--) {
        const key = keys[index]!
        stack.push({
          value: (object as Record<string, unknown>)[key],
          path: child(frame.path, key),
          depth: frame.depth + 1
        })
      }
    }
  }
  return undefined
}

const EXIT: unique symbol = Symbol("exit")

/**
 * The string (and number / boolean, as text) leaves of a JSON value, in
 * order, down to `maxDepth` levels (default 8): the words a tool call's
 * arguments carry, for matching them verbatim.
 *
 * @category getters
 */
export const stringLeaves = (value: unknown, maxDepth = 8, depth = 0): Array<string> =>
  depth > maxDepth || value === null || value === undefined
    ? []
    : typeof value === "string"
      ? [value]
      : typeof value === "number" || typeof value === "boolean"
        ? [String(value)]
        : Array.isArray(value)
          ? value.flatMap((item) => stringLeaves(item, maxDepth, depth + 1))
          : typeof value === "object"
            ? Object.values(value as Record<string, unknown>).flatMap((item) => stringLeaves(item, maxDepth, depth + 1))
            : []
