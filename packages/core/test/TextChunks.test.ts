import { createRequire } from "node:module"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Estimator from "../src/Estimator.ts"
import * as TextChunks from "../src/TextChunks.ts"
import * as Tokenizers from "../src/Tokenizers.ts"

const require = createRequire(import.meta.url)
/** The library itself, unchunked: the reference the chunked count is held to. */
const raw = require("gpt-tokenizer/encoding/o200k_base") as {
  countTokens: (text: string, options: { disallowedSpecial: Set<string> }) => number
}
const rawCount = (text: string): number => raw.countTokens(text, { disallowedSpecial: new Set() })
const o200k = Tokenizers.make("o200k_base")

const word = fc.stringMatching(/^[A-Za-z0-9_.,;:()'"-]{1,12}$/)
const prose = fc
  .array(fc.tuple(word, fc.constantFrom(" ", " ", " ", "  ", "\n", "\n\n", "\t")), { minLength: 1, maxLength: 900 })
  .map((pairs) => pairs.map(([w, gap]) => w + gap).join(""))

/** Words separated by single spaces: every gap is a piece boundary, so chunking never cuts hard. */
const spaced = fc.array(word, { minLength: 1, maxLength: 900 }).map((words) => words.join(" "))

/** Deterministic pseudo-random base64 (xorshift), so the test needs no crypto. */
const base64Run = (length: number, seed: number): string => {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
  let state = seed | 1
  let out = ""
  for (let index = 0; index < length; index++) {
    state ^= state << 13
    state ^= state >>> 17
    state ^= state << 5
    out += alphabet[(state >>> 0) % 64]
  }
  return out
}

describe("TextChunks.forEachChunk", () => {
  it("chunks concatenate back to the text, none longer than the limit, no surrogate pair split", () => {
    fc.assert(
      fc.property(fc.string({ unit: "binary", maxLength: 3000 }), fc.integer({ min: 4, max: 300 }), (text, limit) => {
        const chunks: Array<string> = []
        TextChunks.forEachChunk(text, (chunk) => chunks.push(chunk), limit)
        expect(chunks.join("")).toBe(text)
        for (const chunk of chunks) {
          expect(chunk.length).toBeGreaterThan(0)
          expect(chunk.length).toBeLessThanOrEqual(limit)
          const last = chunk.charCodeAt(chunk.length - 1)
          if (chunk !== chunks.at(-1) && last >= 0xd800 && last <= 0xdbff) {
            expect.fail(`chunk ends inside a surrogate pair: ${JSON.stringify(chunk.slice(-2))}`)
          }
        }
      })
    )
  })

  it("cuts single-spaced text only at piece boundaries (no hard cut)", () => {
    fc.assert(
      fc.property(spaced, (text) => {
        expect(TextChunks.forEachChunk(text, () => {}, 64)).toBe(0)
      })
    )
  })
})

describe("exact tokenizer in chunks", () => {
  it("counts ordinary text exactly as the unchunked library does (within 1 token per hard cut)", () => {
    fc.assert(
      fc.property(fc.oneof(prose, spaced), (text) => {
        const cuts = TextChunks.forEachChunk(text, () => {}, 64)
        expect(Math.abs(TextChunks.sumOverChunks(text, rawCount, 64) - rawCount(text))).toBeLessThanOrEqual(cuts)
      }),
      { numRuns: 60 }
    )
  })

  it("a hard cut inside an unbroken run changes the count by at most 1 token per cut", () => {
    for (const run of [
      base64Run(8192, 7),
      base64Run(5000, 99),
      "A".repeat(6000),
      "ab".repeat(3000),
      "0".repeat(4096)
    ]) {
      const cuts = TextChunks.forEachChunk(run, () => {})
      expect(cuts).toBeGreaterThan(0)
      expect(Math.abs(o200k.count(run) - rawCount(run))).toBeLessThanOrEqual(cuts)
    }
  }, 60_000)
})

describe("measurement of multi-MiB unbroken runs never throws", () => {
  const runs = {
    "6 MiB of one letter": "A".repeat(6 * 1024 * 1024),
    "6 MiB of base64": base64Run(6 * 1024 * 1024, 12345),
    "1 MiB of two letters": "ab".repeat(512 * 1024),
    "1 MiB of one digit": "7".repeat(1024 * 1024)
  }
  for (const [name, text] of Object.entries(runs)) {
    it(`estimator (generic, anthropic, gemini): ${name}`, () => {
      for (const family of ["generic", "anthropic", "gemini"] as const) {
        const tokens = Estimator.estimate(text, family)
        // Between one token per 16 characters and one per character: a count, not a crash or a 0.
        expect(tokens).toBeGreaterThan(text.length / 16)
        expect(tokens).toBeLessThanOrEqual(text.length)
      }
    }, 120_000)
  }
  it("exact o200k: 1 MiB of one letter counts as 64 times the library's count of 16 KiB (± 1 per cut)", () => {
    const text = "A".repeat(1024 * 1024)
    const cuts = TextChunks.forEachChunk(text, () => {})
    expect(Math.abs(o200k.count(text) - 64 * rawCount("A".repeat(16384)))).toBeLessThanOrEqual(cuts)
  }, 120_000)
})
