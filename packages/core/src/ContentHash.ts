/**
 * Content hashes of messages and tool definitions, the keys of the
 * measurer's per-entry count cache. Two values with the same JSON text (and
 * the same bytes for binary data) have the same hash, so a view rebuilt from
 * a transcript reuses the counts of the messages it already measured.
 *
 * The hash is two independent 32-bit multiply-xor lanes (cyrb53-style, as in
 * bryc's public-domain `cyrb53`) plus the length of the hashed text: about
 * 2^-64 chance that two different contents share a key.
 *
 * @since 0.1.0
 */

const hashString = (text: string, seed: number): string => {
  let h1 = 0xdeadbeef ^ seed
  let h2 = 0x41c6ce57 ^ seed
  for (let index = 0; index < text.length; index++) {
    const code = text.charCodeAt(index)
    h1 = Math.imul(h1 ^ code, 2654435761)
    h2 = Math.imul(h2 ^ code, 1597334677)
  }
  h1 = Math.imul(h1 ^ (h1 >>> 16), 2246822507) ^ Math.imul(h2 ^ (h2 >>> 13), 3266489909)
  h2 = Math.imul(h2 ^ (h2 >>> 16), 2246822507) ^ Math.imul(h1 ^ (h1 >>> 13), 3266489909)
  return `${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}`
}

const hashBytes = (bytes: Uint8Array): string => {
  let h1 = 0x811c9dc5
  let h2 = 0x01000193
  for (let index = 0; index < bytes.length; index++) {
    h1 = Math.imul(h1 ^ bytes[index]!, 16777619)
    h2 = Math.imul(h2 ^ bytes[index]!, 2246822519)
  }
  return `${bytes.length}:${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}`
}

// JSON.stringify replacer: binary data and URLs as short, content-derived
// strings. (A URL reaches it as its href already: JSON.stringify calls an
// object's toJSON before the replacer, so the URL branch keeps only values
// whose toJSON was removed.)
const replacer = (_key: string, value: unknown): unknown => {
  if (value instanceof Uint8Array) return `\u0000bytes:${hashBytes(value)}`
  if (value instanceof ArrayBuffer) return `\u0000bytes:${hashBytes(new Uint8Array(value))}`
  if (value instanceof URL) return `\u0000url:${value.href}`
  return value
}

/**
 * The content hash of a string, as `<length>:<lane1>.<lane2>` (the store's
 * key for "is this retry the same entry text").
 *
 * @category hashing
 */
export const text = (value: string): string => `${value.length}:${hashString(value, 0)}`

// Values deeper than this go the replacer's way (a cycle then throws as JSON.stringify does).
const maxWalkDepth = 64

/**
 * Whether `value` may hold something the replacer rewrites: a Uint8Array or
 * ArrayBuffer, a URL without its `toJSON` (the replacer then sees the URL),
 * or an object with a `toJSON` (whose result is what the replacer would
 * see), except a URL's or a Date's own, which return strings. Visits what
 * JSON.stringify visits, as it does (array items by index, own enumerable
 * string keys); answering true when unsure only costs the slower path.
 */
const mayHoldBinary = (value: unknown, depth: number): boolean => {
  if (typeof value !== "object" || value === null) return false
  if (depth > maxWalkDepth || value instanceof Uint8Array || value instanceof ArrayBuffer) return true
  const toJSON = (value as { readonly toJSON?: unknown }).toJSON
  if (toJSON !== undefined)
    return !(
      (toJSON === URL.prototype.toJSON && value instanceof URL) ||
      (toJSON === Date.prototype.toJSON && value instanceof Date)
    )
  if (value instanceof URL) return true
  if (Array.isArray(value)) {
    for (let index = 0; index < value.length; index++) if (mayHoldBinary(value[index], depth + 1)) return true
    return false
  }
  for (const key in value) {
    if (Object.hasOwn(value, key) && mayHoldBinary((value as Record<string, unknown>)[key], depth + 1)) return true
  }
  return false
}

/**
 * The content hash of a JSON-like value (messages, tool definitions), as
 * `<length>:<lane1>.<lane2>`. Values with no binary data skip the replacer:
 * `JSON.stringify` without one gives the same text, faster.
 *
 * @category hashing
 */
export const hash = (value: unknown): string => {
  const json = (mayHoldBinary(value, 0) ? JSON.stringify(value, replacer) : JSON.stringify(value)) ?? "undefined"
  return `${json.length}:${hashString(json, 0)}`
}
