import { readFileSync } from "node:fs"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Estimator from "../src/Estimator.ts"
import * as Measurer from "../src/Measurer.ts"
import * as Tokenizers from "../src/Tokenizers.ts"
import { corpus } from "./support/corpus.ts"
import { piMessages } from "./support/piTranscript.ts"
import { transcript } from "./support/shared.ts"

const o200k = Tokenizers.get("o200k_base")
const generic = Estimator.make("generic")

const relativeError = (estimate: number, exact: number): number => (estimate - exact) / exact

describe("Estimator on real transcripts (vs exact o200k_base)", () => {
  for (const name of ["pi/before-compaction.jsonl", "pi/large-session.jsonl"]) {
    it(`${name}: aggregate within ±5%, p90 per-message error ≤ 15%, better than chars/4`, () => {
      const exact = Measurer.make(o200k)
      const estimated = Measurer.make(generic)
      const quarter = Measurer.make({ name: "chars/4", method: "estimate", count: Estimator.charsPerFour })
      let exactTotal = 0
      let estimateTotal = 0
      let quarterTotal = 0
      const errors: Array<number> = []
      for (const message of piMessages(name)) {
        const e = exact.messageTokens(message)
        const g = estimated.messageTokens(message)
        exactTotal += e
        estimateTotal += g
        quarterTotal += quarter.messageTokens(message)
        errors.push(Math.abs(relativeError(g, e)))
      }
      errors.sort((a, b) => a - b)
      const p90 = errors[Math.floor(errors.length * 0.9)]!
      expect(Math.abs(relativeError(estimateTotal, exactTotal))).toBeLessThan(0.05)
      expect(p90).toBeLessThanOrEqual(0.15)
      expect(Math.abs(relativeError(estimateTotal, exactTotal))).toBeLessThan(
        Math.abs(relativeError(quarterTotal, exactTotal))
      )
    }, 60_000)
  }

  it("held-out transcripts (Claude Code, SWE-agent): aggregate within ±5%", () => {
    for (const transcript of corpus().filter((t) => !t.name.startsWith("pi/"))) {
      let exactTotal = 0
      let estimateTotal = 0
      for (const texts of transcript.messages) {
        for (const text of texts) {
          exactTotal += o200k.count(text)
          estimateTotal += generic.count(text)
        }
      }
      expect(Math.abs(relativeError(estimateTotal, exactTotal)), transcript.name).toBeLessThan(0.05)
    }
  }, 60_000)
})

describe("Estimator on content chars/4 gets wrong", () => {
  it("property: hex digests and base64 blobs are within 20% (chars/4 undercounts them by about half)", () => {
    fc.assert(
      fc.property(
        // Digests and encoded payloads are random bytes: generate them unbiased.
        fc.array(
          fc.noBias(fc.uint8Array({ minLength: 20, maxLength: 20 })).map((bytes) => Buffer.from(bytes).toString("hex")),
          { minLength: 5, maxLength: 30 }
        ),
        fc
          .noBias(fc.uint8Array({ minLength: 150, maxLength: 1500 }))
          .map((bytes) => Buffer.from(bytes).toString("base64")),
        (hashes, blob) => {
          for (const text of [hashes.join("\n"), blob]) {
            const exact = o200k.count(text)
            expect(Math.abs(relativeError(generic.count(text), exact))).toBeLessThan(0.2)
          }
          const hashText = hashes.join("\n")
          expect(relativeError(Estimator.charsPerFour(hashText), o200k.count(hashText))).toBeLessThan(-0.3)
        }
      ),
      { numRuns: 60 }
    )
  })

  it("property: digit runs cost one token per group of up to three digits", () => {
    fc.assert(
      fc.property(fc.array(fc.integer({ min: 0, max: 999_999_999 }), { minLength: 1, maxLength: 40 }), (numbers) => {
        const text = numbers.join(" ")
        expect(Math.abs(relativeError(generic.count(text), o200k.count(text)))).toBeLessThan(0.15)
      }),
      { numRuns: 60 }
    )
  })

  it("CJK text is costed per character, not per four characters", () => {
    const text =
      "上下文引擎让长时间运行的智能体保持在模型的上下文窗口之内。它测量每个请求的令牌数量，并在需要时压缩历史记录。"
    const exact = o200k.count(text)
    expect(Math.abs(relativeError(generic.count(text), exact))).toBeLessThan(0.3)
    expect(relativeError(Estimator.charsPerFour(text), exact)).toBeLessThan(-0.5)
  })

  it("the Anthropic family counts more than the o200k-equivalent estimate (calibrated factor > 1)", () => {
    const text = "Read the file src/index.ts and summarise its exports."
    expect(Estimator.estimate(text, "anthropic")).toBeGreaterThanOrEqual(Estimator.estimate(text, "generic"))
    expect(Estimator.familyFactors.anthropic).toBeGreaterThan(1)
    expect(Estimator.estimate("", "anthropic")).toBe(0)
  })
})

describe("Estimator results do not change with the piece scanner (O200kPieces.forEachPiece)", () => {
  // Totals of estimateO200k computed by the regex-only estimator before the
  // scanner replaced it (commit 09f1902), written down literally: equal sums
  // of floats mean the same segments, lengths and classes, text by text.
  it("every shared transcript, whole file as one text", () => {
    const expected: Record<string, number> = {
      "pi/before-compaction.jsonl": 733146.4570009798,
      "pi/large-session.jsonl": 311255.2600000157,
      "claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl": 246878.5489999172,
      "claude-code-console/bookminder-day-020.md": 609150.3010015984,
      "gemini-cli-console/bookminder-day-016.md": 124941.10200001538,
      "aider/aider-dev-chat-history.md": 1167171.5870038446,
      "swe-agent/marshmallow-1867__function_calling_replace_from_source.traj": 104690.81800000207,
      "swe-agent/pydicom__pydicom-1458.traj": 26596.040000001904
    }
    for (const [name, total] of Object.entries(expected)) {
      expect(Estimator.estimateO200k(readFileSync(transcript(name), "utf8")), name).toBe(total)
    }
  }, 60_000)

  it("every text the measurer tokenizes in the structured transcripts, summed text by text", () => {
    const expected: Record<string, number> = {
      "pi/before-compaction.jsonl": 422562.6680000031,
      "pi/large-session.jsonl": 153502.00999999838,
      "claude-code/fe5e1c67….jsonl": 75480.85900000003,
      "swe-agent/marshmallow-1867.traj": 7786.551999999983,
      "swe-agent/pydicom-1458.traj": 13737.660000000029
    }
    for (const entry of corpus()) {
      let total = 0
      for (const texts of entry.messages) for (const text of texts) total += Estimator.estimateO200k(text)
      expect(total, entry.name).toBe(expected[entry.name])
    }
  }, 60_000)
})
