import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ContentHash from "../src/ContentHash.ts"

/**
 * The hash as it was before values without binary data skipped the replacer
 * (commit 068858d): JSON text through a replacer that writes bytes as
 * `\0bytes:<length>:<two FNV-style lanes>`, then `ContentHash.text` of it.
 * Stores persist these hashes, so the fast path must give the same strings.
 */
const referenceBytes = (bytes: Uint8Array): string => {
  let h1 = 0x811c9dc5
  let h2 = 0x01000193
  for (const byte of bytes) {
    h1 = Math.imul(h1 ^ byte, 16777619)
    h2 = Math.imul(h2 ^ byte, 2246822519)
  }
  return `${bytes.length}:${(h1 >>> 0).toString(36)}.${(h2 >>> 0).toString(36)}`
}
const referenceHash = (value: unknown): string =>
  ContentHash.text(
    JSON.stringify(value, (_key, item: unknown) => {
      if (item instanceof Uint8Array) return `\u0000bytes:${referenceBytes(item)}`
      if (item instanceof ArrayBuffer) return `\u0000bytes:${referenceBytes(new Uint8Array(item))}`
      if (item instanceof URL) return `\u0000url:${item.href}`
      return item
    }) ?? "undefined"
  )

const binary = fc.oneof(
  fc.uint8Array({ maxLength: 24 }),
  fc.uint8Array({ maxLength: 24 }).map((bytes) => bytes.slice().buffer),
  fc.uint8Array({ maxLength: 24 }).map((bytes) => Buffer.from(bytes)),
  fc.webUrl().map((href) => new URL(href)),
  fc.date({ noInvalidDate: true }),
  // an object whose toJSON returns bytes: JSON.stringify hands the replacer what toJSON returned
  fc.uint8Array({ maxLength: 8 }).map((bytes) => ({ toJSON: () => ({ nested: bytes }) }))
)
const { value } = fc.letrec<{ value: unknown }>((tie) => ({
  value: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.jsonValue({ maxDepth: 2 }),
    fc.string({ unit: "binary" }),
    binary,
    fc.array(tie("value"), { maxLength: 5 }),
    fc.dictionary(fc.string({ maxLength: 6 }), tie("value"), { maxKeys: 5 }),
    fc.constant(undefined)
  )
}))

describe("ContentHash.hash", () => {
  it("property: the same hash as the replacer-always hash, for JSON-like values with and without nested bytes, URLs, dates", () => {
    fc.assert(
      fc.property(value, (item) => {
        expect(ContentHash.hash(item)).toBe(referenceHash(item))
      }),
      { numRuns: 2000 }
    )
  })

  it("values that walk differently from JSON.stringify still hash as the replacer-always hash", () => {
    const bytes = new Uint8Array([1, 2, 3])
    // JSON.stringify reads an array by index, not through its iterator.
    const hidden = [bytes]
    Object.defineProperty(hidden, Symbol.iterator, { value: function* () {} })
    // A URL whose toJSON is gone reaches the replacer as a URL.
    class Bare extends URL {}
    Object.defineProperty(Bare.prototype, "toJSON", { value: undefined })
    // Date's toJSON on an object that is no Date calls that object's toISOString.
    const borrowed = { toJSON: Date.prototype.toJSON, toISOString: () => bytes }
    for (const item of [hidden, { url: new Bare("https://example.com/a") }, { when: borrowed }])
      expect(ContentHash.hash(item)).toBe(referenceHash(item))
  })

  it("the hashes persisted before the fast path (computed by the code at 068858d, written literally)", () => {
    expect(
      ContentHash.hash({
        role: "assistant",
        content: [
          { type: "text", text: "Done." },
          { type: "tool-call", toolCallId: "call_1", toolName: "bash", input: { command: "ls -la" } }
        ]
      })
    ).toBe("153:45fum0.1jogcoi")
    expect(
      ContentHash.hash({
        role: "user",
        content: [
          { type: "text", text: "Read src/index.ts" },
          { type: "image", image: new Uint8Array([137, 80, 78, 71]), mediaType: "image/png" }
        ]
      })
    ).toBe("150:1gx98t8.19z6djq")
    expect(
      ContentHash.hash({
        role: "user",
        content: [{ type: "file", data: new URL("https://example.com/a.pdf"), mediaType: "application/pdf" }]
      })
    ).toBe("108:1bx3fkr.1ben6rc")
    expect(
      ContentHash.hash({
        role: "user",
        content: [{ type: "file", data: new Uint8Array([1, 2, 3, 250]).buffer, mediaType: "application/octet-stream" }]
      })
    ).toBe("121:1cpru8a.wz6nsg")
    expect(ContentHash.hash({ at: new Date(Date.UTC(2026, 11, 2)), text: "ä → 日本" })).toBe("49:ailsyx.4lubn2")
    expect(ContentHash.hash(undefined)).toBe("9:s0bvwg.1vgkz5t")
  })

  it("a cyclic value throws as JSON.stringify does, however it is nested", () => {
    const cyclic: Record<string, unknown> = { role: "user" }
    cyclic.self = { content: [cyclic] }
    expect(() => ContentHash.hash(cyclic)).toThrow(TypeError)
  })
})
