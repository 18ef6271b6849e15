/**
 * Token measurement on the real pi transcript
 * (`../shared/transcripts/pi/before-compaction.jsonl`): exact backends
 * (tiktoken WASM vs gpt-tokenizer), cold vs incremental measure, and the
 * calibrated estimator's error next to `chars / 4`, and the speed of its
 * pre-tokenizer scanner next to the regex it emulates.
 * `node bench/run.ts measure`.
 */
import * as ContextView from "../packages/core/src/ContextView.ts"
import * as Estimator from "../packages/core/src/Estimator.ts"
import * as Measurer from "../packages/core/src/Measurer.ts"
import type { Message } from "../packages/core/src/Message.ts"
import * as MessageTokens from "../packages/core/src/MessageTokens.ts"
import * as O200kPieces from "../packages/core/src/O200kPieces.ts"
import * as TextChunks from "../packages/core/src/TextChunks.ts"
import * as Tiktoken from "../packages/core/src/Tiktoken.ts"
import type { Tokenizer } from "../packages/core/src/Tokenizer.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { corpus, messageTexts } from "../packages/core/test/support/corpus.ts"
import { piMessages } from "../packages/core/test/support/piTranscript.ts"

const time = <A>(run: () => A): [A, number] => {
  const start = performance.now()
  const result = run()
  return [result, performance.now() - start]
}

const median = (values: ReadonlyArray<number>): number => {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.floor(sorted.length / 2)]!
}

const fmt = (ms: number): string => `${ms.toFixed(ms < 1 ? 3 : 1)} ms`
const pct = (ratio: number): string => `${ratio >= 0 ? "+" : ""}${(ratio * 100).toFixed(2)}%`
const abs = (ratio: number): string => `${(ratio * 100).toFixed(2)}%`

const table = (rows: ReadonlyArray<Record<string, string | number>>): void => console.table(rows)

export default async function (): Promise<void> {
  const messages: Array<Message> = piMessages("pi/before-compaction.jsonl")
  const texts = messages.flatMap(messageTexts)
  const contentTexts = messages.flatMap((message) =>
    typeof message.content === "string"
      ? [message.content]
      : message.content.flatMap((part) =>
          part.type === "text" || part.type === "reasoning"
            ? [part.text]
            : part.type === "tool-call"
              ? [JSON.stringify(part.input)]
              : part.type === "tool-result" && part.output.type === "text"
                ? [part.output.value]
                : []
        )
  )
  console.log(
    `pi/before-compaction.jsonl: ${messages.length} messages, ${texts.length} texts counted by the measurer, ${contentTexts.length} content texts`
  )

  // --- 1. exact backends ------------------------------------------------------
  // Interleaved passes, best of 5 (the machine is shared: the minimum is the
  // least noisy estimate of the cost), plus each backend's first pass.
  const backends = ["tiktoken", "gpt-tokenizer"] as const
  const tokenizers = backends.map((backend) =>
    backend === "tiktoken" ? Tiktoken.make("o200k_base") : Tokenizers.make("o200k_base")
  )
  const loadMs = tokenizers.map((tokenizer) => time(() => tokenizer.count("warm up: load the encoder"))[1])
  const firstPass = tokenizers.map((tokenizer) =>
    time(() => contentTexts.reduce((sum, text) => sum + tokenizer.count(text), 0))
  )
  const best = tokenizers.map(() => Number.POSITIVE_INFINITY)
  const allCounts = tokenizers.map(() => 0)
  for (let run = 0; run < 5; run++) {
    tokenizers.forEach((tokenizer, index) => {
      const [count, ms] = time(() => contentTexts.reduce((sum, text) => sum + tokenizer.count(text), 0))
      best[index] = Math.min(best[index]!, ms)
      allCounts[index] = count
    })
  }
  const mismatchedTexts = texts.filter((text) => tokenizers[0]!.count(text) !== tokenizers[1]!.count(text)).length
  table(
    backends.map((backend, index) => ({
      backend,
      "encoder load": fmt(loadMs[index]!),
      "content tokens": firstPass[index]![0],
      "first pass": fmt(firstPass[index]![1]),
      "best of 5": fmt(best[index]!),
      "vs tiktoken (best)": `${(best[0]! / best[index]!).toFixed(2)}×`
    }))
  )
  console.log(
    `counts equal: content totals ${allCounts[0] === allCounts[1]}, per text ${mismatchedTexts === 0} (${mismatchedTexts} of ${texts.length} texts differ); default backend: ${Tokenizers.defaultBackend}`
  )
  for (const tokenizer of tokenizers) tokenizer.free()
  const js = { ms: best[1]! }

  // --- 2. cold vs incremental measure ---------------------------------------
  const o200k = Tokenizers.get("o200k_base")
  o200k.count("warm up")
  const coldRuns: Array<number> = []
  for (let run = 0; run < 5; run++) {
    const measurer = Measurer.make(o200k)
    coldRuns.push(time(() => measurer.measure(ContextView.fromMessages(messages)))[1])
  }
  const measurer = Measurer.make(o200k)
  const start = messages.length - 50
  measurer.measure(ContextView.fromMessages(messages.slice(0, start)))
  const incrementalRuns: Array<number> = []
  let last = measurer.measure(ContextView.fromMessages(messages.slice(0, start)))
  for (let end = start + 1; end <= messages.length; end++) {
    const view = ContextView.fromMessages(messages.slice(0, end))
    const [measurement, ms] = time(() => measurer.measure(view))
    incrementalRuns.push(ms)
    last = measurement
  }
  const cold = median(coldRuns)
  const incremental = median(incrementalRuns)
  table([
    {
      [`cold measure (${messages.length} msgs, median of 5)`]: fmt(cold),
      "incremental after +1 message (median of 50)": fmt(incremental),
      "cold / incremental": `${(cold / incremental).toFixed(0)}×`,
      target: "≥ 50×",
      "input tokens": last.inputTokens
    }
  ])

  // --- 3. estimator accuracy ------------------------------------------------
  const exactMeasurer = Measurer.make(o200k)
  const quarter: Tokenizer = { name: "chars/4", method: "estimate", count: Estimator.charsPerFour }
  const estimateRows: Array<Record<string, string | number>> = []
  const errorsOf = (pairs: ReadonlyArray<readonly [number, number, number]>) => {
    let exact = 0
    let estimate = 0
    let quarterSum = 0
    const perMessage: Array<number> = []
    const perMessageQuarter: Array<number> = []
    let worstQuarter = 0
    for (const [e, g, q] of pairs) {
      exact += e
      estimate += g
      quarterSum += q
      if (e > 0) {
        perMessage.push(Math.abs(g - e) / e)
        perMessageQuarter.push(Math.abs(q - e) / e)
        worstQuarter = Math.min(worstQuarter, (q - e) / e)
      }
    }
    const p90 = (values: Array<number>) => values.sort((a, b) => a - b)[Math.floor(values.length * 0.9)] ?? 0
    return {
      exact,
      estimate: pct(estimate / exact - 1),
      "p90 |msg err|": abs(p90(perMessage)),
      "chars/4": pct(quarterSum / exact - 1),
      "chars/4 p90 |msg err|": abs(p90(perMessageQuarter)),
      "chars/4 worst msg": pct(worstQuarter)
    }
  }
  const generic = Measurer.make(Estimator.make("generic"))
  const quarterMeasurer = Measurer.make(quarter)
  for (const name of ["pi/before-compaction.jsonl", "pi/large-session.jsonl"]) {
    const pairs = piMessages(name).map(
      (message) =>
        [
          exactMeasurer.messageTokens(message),
          generic.messageTokens(message),
          quarterMeasurer.messageTokens(message)
        ] as const
    )
    estimateRows.push({ transcript: `${name} (messages, framing incl.)`, ...errorsOf(pairs) })
  }
  {
    // Content only (text, reasoning text, JSON arguments, tool output; no ids, signatures or framing):
    // the basis of the "403K tokens" and its chars/4 figures.
    const pairs = contentTexts.map(
      (text) => [o200k.count(text), Estimator.estimate(text), Estimator.charsPerFour(text)] as const
    )
    estimateRows.push({ transcript: "pi/before-compaction.jsonl (content texts only)", ...errorsOf(pairs) })
  }
  for (const transcript of corpus().filter((t) => !t.name.startsWith("pi/"))) {
    const pairs = transcript.messages.map((list) => {
      // Per-message framing as the measurer adds it, so rows compare like the pi rows.
      let e = MessageTokens.messageFramingTokens
      let g = MessageTokens.messageFramingTokens
      let q = MessageTokens.messageFramingTokens
      for (const text of list) {
        e += o200k.count(text)
        g += Estimator.estimate(text)
        q += Estimator.charsPerFour(text)
      }
      return [e, g, q] as const
    })
    estimateRows.push({ transcript: `${transcript.name} (held out, framing incl.)`, ...errorsOf(pairs) })
  }
  table(estimateRows)
  const [, estimateMs] = time(() => texts.reduce((sum, text) => sum + Estimator.estimate(text), 0))
  console.log(
    `estimator speed on the same texts: ${fmt(estimateMs)} (gpt-tokenizer best content pass: ${fmt(js.ms)}); targets: aggregate within ±5%, p90 ≤ 15%`
  )
  piecesSpeed(texts)
}

/**
 * The estimator's pre-tokenizer pieces of `texts` (in `TextChunks` chunks, as
 * the estimator cuts them): the char-code scanner (`O200kPieces.forEachPiece`,
 * regex for stretches with other scripts' letters) vs the o200k regex alone,
 * both classifying every piece (`Estimator.classify` for the regex's).
 * Interleaved passes, best of 5; prints the ratio.
 */
const piecesSpeed = (texts: ReadonlyArray<string>): void => {
  const chunks: Array<string> = []
  for (const text of texts) TextChunks.forEachChunk(text, (chunk) => chunks.push(chunk))
  let sink = 0
  const regex = (chunk: string) =>
    O200kPieces.forEachRegexPiece(chunk, (piece) => {
      sink += Estimator.classify(piece).length
    })
  const passes = {
    scanner: () => {
      for (const chunk of chunks)
        O200kPieces.forEachPiece(
          chunk,
          (kind, _text, start, end) => {
            sink += kind.length + end - start
          },
          regex
        )
    },
    regex: () => {
      for (const chunk of chunks) regex(chunk)
    }
  }
  const best = { scanner: Number.POSITIVE_INFINITY, regex: Number.POSITIVE_INFINITY }
  for (let round = 0; round < 5; round++) {
    for (const name of ["scanner", "regex"] as const) best[name] = Math.min(best[name], time(passes[name])[1])
  }
  // The sink keeps the visitors' work observable, so neither pass can be optimized away.
  if (sink === 0) throw new Error("no pieces visited")
  console.log(
    `pre-tokenizer pieces of the same texts (${chunks.length} chunks): char-code scanner ${fmt(best.scanner)}, regex + classify ${fmt(best.regex)}: regex / scanner = ${(best.regex / best.scanner).toFixed(2)}× (same pieces: test/O200kPieces.test.ts)`
  )
}
