/**
 * `context-engine compact <file> [--model ID] [--engine tiered|sliding-window]
 * [--summarizer extractive|MODEL] [--format F] [--strict] [--force] [--out FILE]
 * [--json]`: the main job. Imports a transcript (format detected by content
 * unless `--format`; lenient unless `--strict`, with skipped lines listed
 * like `inspect` does), runs one
 * compaction with the chosen engine and prints tokens before / after per
 * category, the stages run, what the next request holds in plain words (the
 * kept tail sent verbatim, what the checkpoint stands in for, what was
 * dropped), the cut point, the checkpoint and its validation report
 * (`CompactRender.ts`). `--out` writes the compacted view as JSON: `messages` (AI SDK
 * `ModelMessage[]`), `checkpoint` (null when none was written),
 * `entriesToAppend` and `report`.
 *
 * The default summarizer is the offline extractive one (no API key). A MODEL
 * (`anthropic:<id>`, `openai:<id>` or an AI Gateway id `provider/model`)
 * needs its API key; without one the command fails at once with a typed
 * `SummarizerFailed` naming the variable to set (exit code 2).
 *
 * Policy flags (`--model`, `--context-window`, `--reserve`, `--keep-recent`,
 * `--policy`, `--catalog`, `--allow-unknown-model`) as `PolicyOptions.ts`
 * describes; exit codes as `ExitCodes.ts` lists them (2: the summarizer
 * cannot be used).
 *
 * @since 0.1.0
 */
import { writeFileSync } from "node:fs"
import {
  type Checkpoint,
  type ContextEngine,
  type ContextView,
  Entry,
  type Measurement,
  Measurer,
  MessageTokens,
  type ModelPolicy,
  PolicyRegistry
} from "@context-engine/core"
import { SlidingWindowEngine, type Summarizer, TieredSummaryEngine } from "@context-engine/engines"
import { LanguageModelSummarizer, ModelSpec } from "@context-engine/provider-adapters"
import { Import, ImportResult } from "@context-engine/transcripts"
import { type Command, Option } from "commander"
import { Effect } from "effect"
import * as CompactRender from "../CompactRender.ts"
import * as ExitCodes from "../ExitCodes.ts"
import { recordedModel } from "../InspectReport.ts"
import * as PolicyOptions from "../PolicyOptions.ts"
import * as Progress from "../Progress.ts"

/**
 * Options of {@link run}.
 *
 * @category models
 */
export interface CompactOptions extends PolicyOptions.PolicyOptions {
  readonly engine?: "tiered" | "sliding-window" | undefined
  /** `extractive` (default) or a model spec. */
  readonly summarizer?: string | undefined
  /** Summarize even when the cheap stages make the request fit (like Pi's `/compact`). */
  readonly force?: boolean | undefined
  readonly out?: string | undefined
  readonly json?: boolean | undefined
  /** A format id, or `auto` (default) to detect it from the content. */
  readonly format?: ImportResult.FormatId | "auto" | undefined
  /** Fail on the first malformed line instead of skipping it. */
  readonly strict?: boolean | undefined
  /** Items per checkpoint list to print (default 5; 0 prints the whole checkpoint). */
  readonly checkpointLines?: number | undefined
}

/**
 * The machine-readable report (`--json`, and `report` in `--out`).
 *
 * @category models
 */
export interface CompactReport {
  readonly file: string
  readonly format: string
  readonly entries: number
  readonly model: { readonly id: string; readonly source: "flag" | "transcript" | "default"; readonly known: boolean }
  readonly policy: {
    readonly contextWindowTokens: number
    readonly reserveTokens: number
    readonly keepRecentTokens: number
    readonly inputBudgetTokens: number
  }
  readonly engine: string
  /** E.g. the generic fallback used for an unknown model the transcript records. */
  readonly warnings: ReadonlyArray<string>
  readonly summarizer: string
  readonly decision: { readonly compact: boolean; readonly reasons: ReadonlyArray<string> }
  readonly tokens: {
    readonly before: Measurement.CategoryCounts & { readonly input: number }
    readonly after: Measurement.CategoryCounts & { readonly input: number }
  }
  readonly stages: ReadonlyArray<ContextEngine.StageReport>
  readonly cutPoint: ContextEngine.CompactionPlan["cutPoint"] | null
  readonly checkpoint: {
    readonly id: string
    readonly generation: number
    readonly summarizer: Checkpoint.SummarizerInfo
    readonly coveredRange: Checkpoint.Checkpoint["coveredRange"]
    readonly firstKeptEntryId: string | null
    readonly tokensBefore: number
    readonly tokensAfter: number
    readonly validation: Checkpoint.ValidationReport | null
  } | null
  readonly failures: ReadonlyArray<{ readonly tag: string; readonly message: string }>
  readonly fits: boolean
  readonly messages: number
  /**
   * What the next request holds, as `render` explains it: the kept tail (the
   * newest messages, sent as recorded except where a stage in `changedBy`
   * shortened them), how many transcript messages are not sent, and the
   * checkpoint standing in for them (`written`: made by this run, else the
   * last one recorded in the transcript). Tokens include message framing.
   */
  readonly handoff: {
    readonly keptTail: {
      readonly messages: number
      readonly tokens: number
      readonly firstEntryId: string | null
      readonly lastEntryId: string | null
      readonly changedMessages: number
      readonly changedBy: ReadonlyArray<string>
      /** Messages inside the tail's range that are not sent (empty or reasoning-only, dropped by `normalize`). */
      readonly leftOutMessages: number
    }
    /** Non-system messages in the transcript. */
    readonly transcriptMessages: number
    /** Of those, the messages the next request does not contain. */
    readonly notSentMessages: number
    readonly checkpoint: {
      readonly written: boolean
      readonly generation: number
      readonly tokens: number
      /** Transcript messages not sent that this checkpoint (with the ones it replaced) summarizes. */
      readonly standsInForMessages: number
      /** The range this checkpoint summarized itself; earlier ones came from its predecessor. */
      readonly coveredFromEntryId: string | null
      readonly coveredToEntryId: string
    } | null
    /** Messages not sent that no checkpoint stands in for (dropped by a sliding window). */
    readonly dropped: {
      readonly messages: number
      readonly firstEntryId: string
      readonly lastEntryId: string
    } | null
  }
  /** Lines the import skipped or kept in a degraded form (the first 50 issues listed). */
  readonly import: {
    readonly skipped: number
    readonly keptAsEvent: number
    readonly repaired: number
    readonly issues: ReadonlyArray<ImportResult.ImportIssue>
  }
}

const withInput = (measurement: Measurement.Measurement) => ({
  ...measurement.byCategory,
  input: measurement.inputTokens
})

/**
 * What the next request holds: the kept tail, how many transcript messages
 * are not sent, the checkpoint standing in for the older ones (the one
 * written now, else the last recorded one still in the view) and the
 * messages dropped with no summary (sliding window). Tokens are counted
 * with the policy's tokenizer, message framing included.
 */
const handoffOf = (
  entries: ReadonlyArray<Entry.Entry>,
  result: ContextEngine.CompactionResult,
  policy: ModelPolicy.ModelPolicy
): CompactReport["handoff"] => {
  const measurer = Measurer.forPolicy(policy)
  const items = result.view.items
  const isConversation = (item: ContextView.ViewItem) =>
    item.message.role !== "system" && item.source !== "checkpoint" && item.source !== "memory"
  const kept = items.filter(isConversation)
  const keptIds = new Set(kept.map((item) => item.entryId))
  const fromTranscript = kept.filter((item) => item.source === "transcript")
  const changed = kept.filter((item) => item.editedBy.length > 0)
  const indexOf = new Map(entries.map((entry, index) => [entry.id, index]))
  const notSent = entries.flatMap((entry, index) =>
    Entry.isMessageEntry(entry) && entry.message.role !== "system" && !keptIds.has(entry.id) ? [{ entry, index }] : []
  )
  const checkpointItem = items.find((item) => item.source === "checkpoint")
  const checkpoint = checkpointItem
    ? (result.checkpoint ?? entries.filter(Entry.isCheckpointEntry).at(-1)?.checkpoint)
    : undefined
  const firstKeptIndex = checkpoint?.firstKeptEntryId
    ? (indexOf.get(checkpoint.firstKeptEntryId) ?? entries.length)
    : checkpoint
      ? entries.length
      : 0
  const tailStart = fromTranscript[0] ? (indexOf.get(fromTranscript[0].entryId) ?? entries.length) : entries.length
  const covered = notSent.filter((item) => item.index < firstKeptIndex)
  const dropped = notSent.filter((item) => item.index >= firstKeptIndex && item.index < tailStart)
  return {
    keptTail: {
      messages: kept.length,
      // The kept messages as one request, less the reply priming counted once per request.
      tokens:
        kept.length === 0
          ? 0
          : measurer.measure({ items: kept, tools: [] }).inputTokens - MessageTokens.replyPrimingTokens,
      firstEntryId: fromTranscript[0]?.entryId ?? null,
      lastEntryId: fromTranscript.at(-1)?.entryId ?? null,
      changedMessages: changed.length,
      changedBy: [...new Set(changed.flatMap((item) => item.editedBy))],
      leftOutMessages: notSent.filter((item) => item.index >= tailStart).length
    },
    transcriptMessages: notSent.length + fromTranscript.length,
    notSentMessages: notSent.length,
    checkpoint:
      checkpoint && checkpointItem
        ? {
            written: result.checkpoint !== undefined,
            generation: checkpoint.generation,
            tokens: measurer.messageTokens(checkpointItem.message, "checkpoint"),
            standsInForMessages: covered.length,
            coveredFromEntryId: checkpoint.coveredRange.fromEntryId,
            coveredToEntryId: checkpoint.coveredRange.toEntryId
          }
        : null,
    dropped:
      dropped.length > 0
        ? { messages: dropped.length, firstEntryId: dropped[0]!.entry.id, lastEntryId: dropped.at(-1)!.entry.id }
        : null
  }
}

const summarizerFor = (spec: string | undefined) =>
  spec === undefined || spec === "extractive"
    ? Effect.succeed(undefined)
    : Effect.map(ModelSpec.resolve(spec), (model) =>
        LanguageModelSummarizer.make({
          model,
          name: spec,
          // the summarizer's own window decides when a range is summarized in stages
          contextWindowTokens: Effect.runSync(
            PolicyRegistry.lookupOrFallback(spec.replace(/^(?:anthropic|openai):/, "").replace(/^[\w-]+\//, ""))
          ).contextWindowTokens
        })
      )

/**
 * Runs `compact` and returns the text to print and the exit code; writes
 * `--out` when given.
 *
 * @category commands
 */
export const run = async (
  file: string,
  options: CompactOptions,
  progress: Progress.Progress = Progress.make()
): Promise<{ output: string; exitCode: number; report?: CompactReport }> => {
  const fail = (error: unknown, exitCode?: number) => {
    progress.stop()
    const failed = ExitCodes.failure("compact", error, options.json)
    return exitCode === undefined ? failed : { ...failed, exitCode }
  }
  let summarizer: Summarizer.Summarizer | undefined
  try {
    summarizer = await Effect.runPromise(summarizerFor(options.summarizer))
  } catch (error) {
    return fail(error, ExitCodes.SUMMARIZER_UNAVAILABLE)
  }
  try {
    const imported = await Import.importFilePromise(file, {
      format: options.format ?? "auto",
      strict: options.strict ?? false,
      onProgress: (done, total) => progress.update("importing", done, total)
    })
    const entries = imported.transcript.entries
    const resolved = await PolicyOptions.resolve(options, recordedModel(entries))
    const { policy, modelId } = resolved
    const engine =
      options.engine === "sliding-window"
        ? SlidingWindowEngine.makeAsync()
        : TieredSummaryEngine.makeAsync(summarizer ? { summarizer } : {})
    const input: ContextEngine.EngineInput = { entries, policy, ...(options.force ? { manual: true } : {}) }
    const decision = await engine.shouldCompact(input)
    const plan = await engine.plan(input)
    const result = await engine.compact(input, plan)
    progress.stop()
    const checkpoint = result.checkpoint
    const report: CompactReport = {
      file,
      format: imported.format,
      entries: entries.length,
      model: {
        id: modelId,
        source: resolved.source,
        known: resolved.known
      },
      policy: {
        contextWindowTokens: policy.contextWindowTokens,
        reserveTokens: policy.reserveTokens,
        keepRecentTokens: policy.keepRecentTokens,
        inputBudgetTokens: decision.budget.inputBudgetTokens
      },
      engine: engine.name,
      warnings: resolved.warnings,
      summarizer:
        options.engine === "sliding-window"
          ? "none (sliding window drops whole turns)"
          : (options.summarizer ?? "extractive"),
      decision: { compact: decision.compact, reasons: decision.reasons },
      tokens: { before: withInput(result.before), after: withInput(result.after) },
      stages: result.stages,
      cutPoint: checkpoint
        ? {
            firstKeptEntryId: checkpoint.firstKeptEntryId,
            coveredFromEntryId: checkpoint.coveredRange.fromEntryId,
            coveredToEntryId: checkpoint.coveredRange.toEntryId,
            splitTurn: result.stages.some((stage) => stage.note?.includes("split turn") === true)
          }
        : null,
      checkpoint: checkpoint
        ? {
            id: checkpoint.id,
            generation: checkpoint.generation,
            summarizer: checkpoint.summarizer,
            coveredRange: checkpoint.coveredRange,
            firstKeptEntryId: checkpoint.firstKeptEntryId,
            tokensBefore: checkpoint.tokensBefore,
            tokensAfter: checkpoint.tokensAfter,
            validation: checkpoint.validation ?? null
          }
        : null,
      failures: (result.failures ?? []).map((failure) => ({ tag: failure._tag, message: failure.message })),
      fits: result.fits,
      messages: result.view.items.length,
      handoff: handoffOf(entries, result, policy),
      import: {
        skipped: imported.issues.filter((issue) => issue.action === "skipped").length,
        keptAsEvent: imported.issues.filter((issue) => issue.action === "kept-as-event").length,
        repaired: imported.issues.filter((issue) => issue.action === "repaired").length,
        issues: imported.issues.slice(0, 50)
      }
    }
    if (options.out) {
      const messages = result.view.items.map((item) => item.message)
      writeFileSync(
        options.out,
        `${JSON.stringify({ messages, checkpoint: checkpoint ?? null, entriesToAppend: result.entriesToAppend, report }, null, 2)}\n`
      )
    }
    const written = CompactRender.outputLines(options.out, {
      messages: result.view.items.length,
      checkpoint: checkpoint !== undefined,
      entriesToAppend: result.entriesToAppend.length
    })
    return {
      output: options.json
        ? JSON.stringify(report, null, 2)
        : [CompactRender.render(report, checkpoint, options.checkpointLines ?? 5), ...written].join("\n"),
      exitCode: 0,
      report
    }
  } catch (error) {
    return fail(error)
  }
}

/**
 * Registers `context-engine compact`.
 *
 * @category commands
 */
export const register = (program: Command): void => {
  const command = program
    .command("compact")
    .description("Compact a transcript: cheap stages first, then a validated checkpoint; print the report")
    .argument(
      "<file>",
      "transcript file (pi / Claude Code JSONL, SWE-agent .traj, OpenAI / Anthropic / AI SDK JSON, …)"
    )
  PolicyOptions.register(command)
  command
    .addOption(new Option("-e, --engine <engine>", "engine").choices(["tiered", "sliding-window"]).default("tiered"))
    .option(
      "-s, --summarizer <summarizer>",
      "extractive (offline, default) or a model: anthropic:<id>, openai:<id> or an AI Gateway id provider/model",
      "extractive"
    )
    .addOption(
      new Option("-f, --format <format>", "transcript format")
        .choices(["auto", ...ImportResult.formats])
        .default("auto")
    )
    .option("--strict", "fail on the first malformed line instead of skipping it")
    .option("--force", "summarize even if the cheap stages make the request fit (like /compact)")
    .option("-o, --out <file>", "write the compacted view (messages, checkpoint, entries to append, report) as JSON")
    .option("--json", "print the report as JSON")
    .option(
      "--checkpoint-lines <n>",
      "items per checkpoint list to print (0 = the whole checkpoint)",
      (value) => Number.parseInt(value, 10),
      5
    )
    .action(async (file: string, options: CompactOptions) => {
      const { output, exitCode } = await run(file, options)
      ;(exitCode === 0 ? process.stdout : process.stderr).write(`${output}\n`)
      process.exitCode = exitCode
    })
}
