/**
 * Calibrates `packages/core/src/Estimator.ts` against exact `o200k_base`
 * counts: `node bench/calibrate-estimator.ts [transcript-name-prefix]`.
 *
 * For every text the measurer would tokenize in the calibration transcript
 * (default `pi/before-compaction.jsonl`), each estimator segment is counted
 * exactly on its own (BPE never merges across pre-tokenizer pieces, so the
 * sum over pieces is the exact count). It prints the mean exact tokens per
 * segment class and length — the tables to paste into `calibration` — and
 * the resulting estimator error on every transcript (the others are held
 * out). Not run by `bench/run.ts` (no `.bench.ts` suffix).
 */
import { readFileSync } from "node:fs"
import * as Estimator from "../packages/core/src/Estimator.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { corpus } from "../packages/core/test/support/corpus.ts"

const exact = Tokenizers.make("o200k_base")
const cache = new Map<string, number>()
const exactCount = (text: string): number => {
  let tokens = cache.get(text)
  if (tokens === undefined) {
    tokens = exact.count(text)
    cache.set(text, tokens)
  }
  return tokens
}

const calibrateOn = process.argv[2] ?? "pi/before-compaction"
const transcripts = corpus()
const training = transcripts.filter((t) => t.name.startsWith(calibrateOn))

type Stats = Map<number, { n: number; tokens: number }>
const byKind = new Map<Estimator.SegmentKind, Stats>()
const perChar = new Map<Estimator.SegmentKind, { chars: number; tokens: number }>()
for (const t of training) {
  for (const message of t.messages) {
    for (const text of message) {
      Estimator.forEachSegment(text, (kind, segment) => {
        const tokens = exactCount(segment)
        const chars = perChar.get(kind) ?? { chars: 0, tokens: 0 }
        chars.chars += segment.length
        chars.tokens += tokens
        perChar.set(kind, chars)
        const stats = byKind.get(kind) ?? new Map()
        byKind.set(kind, stats)
        const cell = stats.get(segment.length) ?? { n: 0, tokens: 0 }
        cell.n++
        cell.tokens += tokens
        stats.set(segment.length, cell)
      })
    }
  }
}

// Encoded data is random by nature: calibrate hex and base64 on deterministic
// pseudo-random strings of realistic lengths (git SHAs, digests, signatures).
let seed = 0x2545f491
const random = (): number => {
  seed = (Math.imul(seed, 1103515245) + 12345) >>> 0
  return seed / 2 ** 32
}
const randomString = (alphabet: string, length: number): string =>
  Array.from({ length }, () => alphabet[Math.floor(random() * alphabet.length)]).join("")
const syntheticTexts: Array<string> = []
for (let i = 0; i < 4000; i++) {
  syntheticTexts.push(randomString("0123456789abcdef", [16, 32, 40, 64][i % 4]!))
  syntheticTexts.push(
    randomString("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/", [24, 44, 88, 344][i % 4]!)
  )
}
// Non-Latin scripts: the translated Biome READMEs in node_modules (zh-CN, zh-TW, ja, ru).
const biome = "node_modules/.pnpm/@biomejs+biome@2.6.8/node_modules/@biomejs/biome"
for (const lang of ["zh-CN", "zh-TW", "ja", "ru"]) {
  try {
    syntheticTexts.push(readFileSync(`${biome}/README.${lang}.md`, "utf8"))
  } catch {
    console.log(`(missing ${biome}/README.${lang}.md)`)
  }
}
const onlyKinds = new Set<Estimator.SegmentKind>(["hex", "base64", "cjk", "otherScript"])
for (const text of syntheticTexts) {
  Estimator.forEachSegment(text, (kind, segment) => {
    if (!onlyKinds.has(kind)) return
    const chars = perChar.get(kind) ?? { chars: 0, tokens: 0 }
    chars.chars += segment.length
    chars.tokens += exactCount(segment)
    perChar.set(kind, chars)
    if (!byKind.has(kind)) byKind.set(kind, new Map())
  })
}

/** Pool-adjacent-violators: the weighted non-decreasing fit of `values`. */
const isotonic = (values: ReadonlyArray<number>, weights: ReadonlyArray<number>): Array<number> => {
  const blocks: Array<{ value: number; weight: number; size: number }> = []
  values.forEach((value, index) => {
    blocks.push({ value, weight: weights[index]!, size: 1 })
    while (blocks.length > 1 && blocks[blocks.length - 2]!.value > blocks[blocks.length - 1]!.value) {
      const b = blocks.pop()!
      const a = blocks.pop()!
      const weight = a.weight + b.weight
      blocks.push({ value: (a.value * a.weight + b.value * b.weight) / weight, weight, size: a.size + b.size })
    }
  })
  return blocks.flatMap((block) => Array.from({ length: block.size }, () => block.value))
}

const minSamples = 40
const snippet: Array<string> = []
console.log(
  `calibration on ${training.map((t) => t.name).join(", ")} (+ synthetic hex/base64, Biome READMEs for CJK/Cyrillic)`
)
for (const [kind, stats] of byKind) {
  const lengths = [...stats.keys()].sort((a, b) => a - b)
  // Mean per length up to the last length with enough samples, smoothed to be non-decreasing.
  let maxLength = 0
  for (let l = 1; l <= 40; l++) if ((stats.get(l)?.n ?? 0) >= minSamples) maxLength = l
  const means: Array<number> = []
  const weights: Array<number> = []
  for (let l = 1; l <= maxLength; l++) {
    const cell = stats.get(l)
    means.push(cell && cell.n > 0 ? cell.tokens / cell.n : (means[means.length - 1] ?? 1))
    weights.push(cell?.n ?? 0.001)
  }
  const table: Array<number> = [0, ...isotonic(means, weights).map((v) => Math.round(v * 100) / 100)]
  // Beyond the table: tokens per char of the longer segments (the estimator uses max(last entry, length × this)).
  let tailTokens = 0
  let tailChars = 0
  for (const l of lengths) {
    if (l < table.length) continue
    const cell = stats.get(l)!
    tailTokens += cell.tokens
    tailChars += cell.n * l
  }
  const slope = tailChars > 0 ? Math.round((tailTokens / tailChars) * 1000) / 1000 : 0
  const chars = perChar.get(kind)!
  snippet.push(
    onlyKinds.has(kind)
      ? `    ${kind}: ${(chars.tokens / chars.chars).toFixed(3)} (per char)`
      : `    ${kind}: { byLength: [${table.join(", ")}], tailPerChar: ${slope} },`
  )
  console.log(
    `${kind.padEnd(12)} n=${[...stats.values()].reduce((s, c) => s + c.n, 0)} perChar=${(chars.tokens / chars.chars).toFixed(3)} byLength=[${table.join(", ")}] tailPerChar=${slope}`
  )
}

console.log(`\ncalibration tables (paste into Estimator.calibration):\n${snippet.join("\n")}`)
console.log("\nerror vs exact o200k_base (aggregate, p90 |per-message|):")
for (const t of transcripts) {
  let exactTotal = 0
  let estimateTotal = 0
  let quarterTotal = 0
  const errors: Array<number> = []
  for (const message of t.messages) {
    const e = message.reduce((s, text) => s + exact.count(text), 0)
    const g = message.reduce((s, text) => s + Estimator.estimate(text), 0)
    exactTotal += e
    estimateTotal += g
    quarterTotal += message.reduce((s, text) => s + Estimator.charsPerFour(text), 0)
    if (e >= 20) errors.push(Math.abs(g - e) / e)
  }
  errors.sort((a, b) => a - b)
  const p90 = errors[Math.floor(errors.length * 0.9)] ?? 0
  console.log(
    `${t.name.padEnd(34)} exact=${exactTotal} estimate=${((estimateTotal / exactTotal - 1) * 100).toFixed(2)}% chars/4=${((quarterTotal / exactTotal - 1) * 100).toFixed(2)}% p90=${(p90 * 100).toFixed(1)}%`
  )
}

// ---------------------------------------------------------------------------
// Anthropic family factor: consecutive requests of the same claude session
// differ by exactly what was appended between them, so
//   Σ Δ(reported input tokens) / Σ o200k(appended messages)
// is Claude's tokens per o200k token. Reported input = input + cacheRead +
// cacheWrite (pi's `usage`). Pairs across a compaction or model change, and
// pairs whose reported input shrank, are skipped.
// ---------------------------------------------------------------------------
{
  const { readPiSession } = await import("../packages/core/test/support/piTranscript.ts")
  const Measurer = await import("../packages/core/src/Measurer.ts")
  const exactMeasurer = Measurer.make(exact)
  for (const name of ["pi/before-compaction.jsonl", "pi/large-session.jsonl"]) {
    const lines = readFileSync(`${process.cwd()}/../shared/transcripts/${name}`, "utf8")
      .split("\n")
      .filter((line) => line.trim())
      .map((line) => JSON.parse(line) as { type: string })
    const session = readPiSession(name)
    // Walk lines and converted messages together: every converted message comes from one "message" line.
    let cursor = 0
    let previous: { reported: number; model: string } | undefined
    let appendedExact = 0
    let reportedDelta = 0
    let o200kDelta = 0
    let pairs = 0
    for (const line of lines) {
      if (line.type === "compaction" || line.type === "model_change") {
        previous = undefined
        appendedExact = 0
        continue
      }
      if (line.type !== "message") continue
      const raw = (line as unknown as { message: { role: string; content?: unknown } }).message
      const hasContent = Array.isArray(raw.content)
        ? raw.content.length > 0
        : raw.content !== undefined || raw.role === "bashExecution"
      const entry = session[cursor]
      if (!entry || !hasContent) continue
      // Skip raw lines that produced no converted message (e.g. assistant with only empty thinking).
      if (raw.role === "assistant" && entry.message.role !== "assistant") continue
      cursor++
      if (entry.reportedInputTokens !== undefined && entry.reportedInputTokens > 0) {
        const model = entry.model ?? ""
        if (
          previous &&
          previous.model === model &&
          model.startsWith("claude") &&
          entry.reportedInputTokens > previous.reported
        ) {
          reportedDelta += entry.reportedInputTokens - previous.reported
          o200kDelta += appendedExact
          pairs++
        }
        previous = { reported: entry.reportedInputTokens, model }
        appendedExact = 0
      }
      appendedExact += exactMeasurer.messageTokens(entry.message)
    }
    console.log(
      `${name}: ${pairs} request pairs, Σ Δ reported ${reportedDelta} vs Σ o200k appended ${o200kDelta} → claude/o200k = ${(reportedDelta / o200kDelta).toFixed(3)}`
    )
  }
}
