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

// JSON.stringify replacer: binary data and URLs as short, content-derived strings.
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

/**
 * The content hash of a JSON-like value (messages, tool definitions), as
 * `<length>:<lane1>.<lane2>`.
 *
 * @category hashing
 */
export const hash = (value: unknown): string => {
  const json = JSON.stringify(value, replacer) ?? "undefined"
  return `${json.length}:${hashString(json, 0)}`
}
