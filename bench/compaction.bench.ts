/**
 * Real comparison against pi (issue #7, item 7). The pi session
 * `../shared/transcripts/pi/before-compaction.jsonl` records two real
 * compactions, with the LLM summary pi wrote (tokensBefore 175,004 and
 * 185,014). This replays the session under a Pi-equivalent policy — 200K
 * window, 16,384 reserve, 20,000 keep-recent, no tool-loop reserve or safety
 * margin, so the budget is Pi's `contextWindow − reserveTokens` — and prints:
 *
 * 1. trigger: at every assistant message (where pi checks), whether our
 *    engine's `shouldCompact` fires — anchored on the provider usage the
 *    message records (as `recordOutcome` would) and on our own estimate
 *    alone — next to where pi compacted;
 * 2. summaries: for the same covered ranges (pi's `firstKeptEntryIndex`), our
 *    offline extractive checkpoint next to pi's recorded summary: size
 *    (tokens of our estimator for claude), identifier retention by the same
 *    validator, and the validator's verdict.
 *
 * Not timed; every number is computed from the files.
 */
import type * as Checkpoint from "../packages/core/src/Checkpoint.ts"
import * as CheckpointRenderer from "../packages/core/src/CheckpointRenderer.ts"
import * as CheckpointValidation from "../packages/core/src/CheckpointValidation.ts"
import type * as Entry from "../packages/core/src/Entry.ts"
import * as IdentifierExtraction from "../packages/core/src/IdentifierExtraction.ts"
import * as Measurer from "../packages/core/src/Measurer.ts"
import type * as Message from "../packages/core/src/Message.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import { ExtractiveSummarizer, TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { Import } from "../packages/transcripts/src/index.ts"

const n = (value: number): string => Math.round(value).toLocaleString("en-US")
const pct = (value: number): string => `${(value * 100).toFixed(1)}%`

interface Usage {
  readonly input: number
  readonly output: number
  readonly cacheRead: number
  readonly cacheWrite: number
  readonly totalTokens?: number
}

const usageOf = (entry: Entry.Entry): Usage | undefined => {
  if (entry.kind !== "message" || entry.message.role !== "assistant") return undefined
  const usage = (entry.meta as { usage?: Usage } | undefined)?.usage
  return usage && typeof usage.input === "number" ? usage : undefined
}

export default async function (): Promise<void> {
  const imported = await Import.importFilePromise(transcript("pi/before-compaction.jsonl"))
  const entries = imported.transcript.entries
  const base = PolicyRegistry.lookupSync("claude-opus-4-5")
  const policy = {
    ...base,
    model: "pi-equivalent",
    contextWindowTokens: 200_000,
    reserveTokens: 16_384,
    keepRecentTokens: 20_000,
    toolLoopReserveTokens: 0,
    safetyMarginTokens: 0
  }
  const piCompactions = entries.filter((entry): entry is Entry.CheckpointEntry => entry.kind === "checkpoint")
  const piThreshold = policy.contextWindowTokens - policy.reserveTokens

  // 1. Trigger replay.
  const anchored = TieredSummaryEngine.makeAsync()
  const estimated = TieredSummaryEngine.makeAsync()
  interface Point {
    readonly index: number
    readonly entryId: string
    readonly piTokens: number
    readonly anchoredTokens: number
    readonly anchoredFires: boolean
    readonly estimatedTokens: number
    readonly estimatedFires: boolean
  }
  const points: Array<Point> = []
  let previousMessageId: string | undefined
  for (let index = 0; index < entries.length; index++) {
    const entry = entries[index]!
    const usage = usageOf(entry)
    if (usage && previousMessageId !== undefined) {
      const input = { entries: entries.slice(0, index + 1), policy }
      await anchored.recordOutcome(input, {
        inputTokens: usage.input + usage.cacheRead + usage.cacheWrite,
        lastEntryId: previousMessageId
      })
      const a = await anchored.shouldCompact(input)
      const e = await estimated.shouldCompact(input)
      points.push({
        index,
        entryId: entry.id,
        piTokens: usage.totalTokens || usage.input + usage.output + usage.cacheRead + usage.cacheWrite,
        anchoredTokens: a.measurement.inputTokens,
        anchoredFires: a.reasons.includes("threshold"),
        estimatedTokens: e.measurement.inputTokens,
        estimatedFires: e.reasons.includes("threshold")
      })
    }
    if (entry.kind === "message") previousMessageId = entry.id
  }

  const segmentEnds = [...piCompactions.map((c) => entries.indexOf(c)), entries.length]
  console.log(
    `Pi-equivalent policy: window ${n(policy.contextWindowTokens)}, reserve ${n(policy.reserveTokens)}, keep-recent ${n(policy.keepRecentTokens)} → compact when the request exceeds ${n(piThreshold)} tokens (Pi: contextTokens > contextWindow − reserveTokens).`
  )
  console.log("\nTrigger: where pi compacted vs where our shouldCompact fires (checked after every assistant message)")
  console.log(
    "  segment      pi fired at        pi tokens   ours at pi's point (anchored / estimate)   our first fire: anchored             estimate"
  )
  let segmentStart = 0
  segmentEnds.forEach((end, segment) => {
    const inSegment = points.filter((point) => point.index >= segmentStart && point.index < end)
    const compaction = piCompactions[segment]
    const piPoint = compaction ? inSegment[inSegment.length - 1] : undefined
    const firstAnchored = inSegment.find((point) => point.anchoredFires)
    const firstEstimated = inSegment.find((point) => point.estimatedFires)
    const within = (tokens: number | undefined) =>
      compaction && tokens !== undefined
        ? Math.abs(tokens - compaction.checkpoint.tokensBefore) / compaction.checkpoint.tokensBefore <= 0.05
          ? "same ±5%"
          : `${pct(tokens / compaction.checkpoint.tokensBefore)} of pi`
        : ""
    const fire = (point: Point | undefined, tokens: (p: Point) => number) =>
      point ? `${point.entryId} @ ${n(tokens(point))} ${within(tokens(point))}`.padEnd(36) : "does not fire".padEnd(36)
    console.log(
      `  ${String(segment + 1).padEnd(12)} ${(compaction ? `after ${piPoint?.entryId ?? "?"}` : "(no compaction)").padEnd(18)} ${lpad(compaction ? n(compaction.checkpoint.tokensBefore) : "-", 9)}   ${(piPoint ? `${n(piPoint.anchoredTokens)} ${piPoint.anchoredFires ? "fires" : "no"} / ${n(piPoint.estimatedTokens)} ${piPoint.estimatedFires ? "fires" : "no"}` : "-").padEnd(42)} ${fire(firstAnchored, (p) => p.anchoredTokens)} ${fire(firstEstimated, (p) => p.estimatedTokens)}`
    )
    if (compaction && piPoint) {
      const agreement =
        Math.abs(piPoint.anchoredTokens - compaction.checkpoint.tokensBefore) / compaction.checkpoint.tokensBefore
      const verdict =
        piPoint.anchoredFires && firstAnchored === piPoint
          ? "same point: our trigger fires exactly where pi compacted"
          : compaction.checkpoint.tokensBefore <= piThreshold
            ? `pi compacted below its own reserve threshold (${n(compaction.checkpoint.tokensBefore)} ≤ ${n(piThreshold)}: a manual /compact or an older pi rule), so the reserve rule does not fire here`
            : "different point"
      console.log(
        `  ${"".padEnd(12)} → ${verdict}; our anchored count at pi's point is within ${(agreement * 100).toFixed(2)}% of pi's tokensBefore${agreement <= 0.05 ? " (±5%: yes)" : " (±5%: no)"}`
      )
    }
    segmentStart = end
  })

  // 2. Summaries for pi's covered ranges.
  const messagesBetween = (fromIndex: number, toIndex: number) =>
    entries
      .slice(fromIndex, toIndex)
      .flatMap((entry) =>
        entry.kind === "message" && entry.message.role !== "system"
          ? [{ entryId: entry.id, message: entry.message }]
          : []
      )
  const measurer = Measurer.make(Tokenizers.forPolicy(policy))
  const count = (text: string): number => measurer.tokenizer.count(text)
  console.log("\nSummaries for pi's covered ranges (same range, same validator; sizes in estimate:anthropic tokens)")
  console.log(
    "  compaction  covered msgs  covered tokens   summary      tokens  ratio   ids kept        retention  validation"
  )
  let ours: Checkpoint.Checkpoint | undefined
  let fromIndex = 0
  for (const compaction of piCompactions) {
    const keptIndex = entries.findIndex((entry) => entry.id === compaction.checkpoint.firstKeptEntryId)
    const covered = messagesBetween(fromIndex, keptIndex)
    const coveredMessages: Array<Message.Message> = covered.map((item) => item.message)
    const coveredTokens = covered.reduce((sum, item) => sum + measurer.messageTokens(item.message), 0)
    const piPrevious = piCompactions[piCompactions.indexOf(compaction) - 1]?.checkpoint
    const content = ExtractiveSummarizer.summarizeSync({
      previous: ours,
      covered,
      maxTokens: Math.floor(policy.reserveTokens * TieredSummaryEngine.SUMMARY_SHARE_OF_RESERVE),
      countTokens: count
    })
    const oursCheckpoint: Checkpoint.Checkpoint = {
      ...compaction.checkpoint,
      id: `ours:${compaction.checkpoint.generation}`,
      summarizer: { kind: "extractive", promptVersion: ExtractiveSummarizer.PROMPT_VERSION },
      content
    }
    delete (oursCheckpoint as { text?: string }).text
    const rows = [
      {
        label: "pi (LLM)",
        checkpoint: compaction.checkpoint,
        previous: piPrevious,
        text: compaction.checkpoint.text ?? ""
      },
      {
        label: "ours (extr.)",
        checkpoint: oursCheckpoint,
        previous: ours,
        text: CheckpointRenderer.renderContent(content)
      }
    ]
    const piTokens = count(rows[0]!.text)
    const total = IdentifierExtraction.size(IdentifierExtraction.fromMessages(coveredMessages))
    for (const row of rows) {
      const tokens = count(row.text)
      const report = CheckpointValidation.validate({
        checkpoint: row.checkpoint,
        covered: coveredMessages,
        previous: row.previous,
        checkpointTokens: tokens,
        replacedTokens: coveredTokens
      })
      const failed = CheckpointValidation.failedChecks(report)
      const kept = Math.round(report.identifierRetention * total)
      console.log(
        `  ${String(compaction.checkpoint.generation).padEnd(11)} ${lpad(n(covered.length), 12)}  ${lpad(n(coveredTokens), 14)}   ${row.label.padEnd(12)} ${lpad(n(tokens), 6)}  ${lpad(`${(tokens / piTokens).toFixed(2)}×`, 5)}   ${lpad(`${n(kept)}/${n(total)}`, 9)}   ${lpad(pct(report.identifierRetention), 12)}  ${report.ok ? "passes" : `fails: ${failed.join(", ")}`}`
      )
    }
    ours = oursCheckpoint
    fromIndex = keptIndex
  }
  console.log(
    "\n  ids kept: salient identifiers of the covered range (paths, ids, hashes, URLs, ports, commands, error strings) found verbatim in the summary."
  )
}

const lpad = (text: string, width: number): string => text.padStart(width)
