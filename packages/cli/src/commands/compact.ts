/**
 * `context-engine compact <file> [--model ID] [--engine tiered|sliding-window]
 * [--summarizer extractive|MODEL] [--format F] [--strict] [--force] [--out FILE]
 * [--json]`: the main job. Imports a transcript (format detected by content
 * unless `--format`; lenient unless `--strict`, with skipped lines listed
 * like `inspect` does), runs one
 * compaction with the chosen engine and prints tokens before / after per
 * category, the stages run, the cut point, the checkpoint and its validation
 * report. `--out` writes the compacted view as JSON: `messages` (AI SDK
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
  CheckpointRenderer,
  type ContextEngine,
  Measurement,
  PolicyRegistry
} from "@context-engine/core"
import { SlidingWindowEngine, type Summarizer, TieredSummaryEngine } from "@context-engine/engines"
import { LanguageModelSummarizer, ModelSpec } from "@context-engine/provider-adapters"
import { Import, ImportResult } from "@context-engine/transcripts"
import { type Command, Option } from "commander"
import { Effect } from "effect"
import { categoryLabels } from "../CategoryLabels.ts"
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
  /** Lines the import skipped or kept in a degraded form (the first 50 issues listed). */
  readonly import: {
    readonly skipped: number
    readonly keptAsEvent: number
    readonly repaired: number
    readonly issues: ReadonlyArray<ImportResult.ImportIssue>
  }
}

const n = (value: number): string => Math.round(value).toLocaleString("en-US")
const pad = (text: string, width: number): string => text.padEnd(width)
const lpad = (text: string, width: number): string => text.padStart(width)

const withInput = (measurement: Measurement.Measurement) => ({
  ...measurement.byCategory,
  input: measurement.inputTokens
})

/**
 * Renders the human-readable report.
 *
 * @category rendering
 */
export const render = (report: CompactReport, checkpoint: Checkpoint.Checkpoint | undefined, lines = 5): string => {
  const out: Array<string> = []
  out.push(`context-engine compact ${report.file}`)
  out.push(
    `  ${report.format} transcript, ${n(report.entries)} entries · model ${report.model.id} (${report.model.source}) · window ${n(report.policy.contextWindowTokens)} · reserve ${n(report.policy.reserveTokens)} · keep-recent ${n(report.policy.keepRecentTokens)}`
  )
  out.push(`  engine ${report.engine} · summarizer ${report.summarizer}`)
  for (const warning of report.warnings) out.push(`  warning: ${warning}`)
  const imported = report.import
  if (imported.issues.length > 0) {
    out.push(
      `  import: ${imported.skipped} line(s) skipped, ${imported.keptAsEvent} unknown record(s) kept as events, ${imported.repaired} repaired (--strict fails on the first skipped line)`
    )
    for (const issue of imported.issues.slice(0, 10))
      out.push(`    line ${issue.line}: ${issue.action}: ${issue.reason}`)
    if (imported.issues.length > 10) out.push(`    … ${imported.issues.length - 10} more (see --json)`)
  }
  out.push("")
  out.push(
    `Decision: ${report.decision.compact ? "compact" : "no compaction needed"}${report.decision.reasons.length > 0 ? ` (${report.decision.reasons.join(", ")})` : ""} — ${n(report.tokens.before.input)} input tokens, budget ${n(report.policy.inputBudgetTokens)}`
  )
  out.push("")
  out.push(`Tokens per category${" ".repeat(11)}${lpad("before", 10)}${lpad("after", 10)}${lpad("change", 10)}`)
  for (const category of Measurement.categories) {
    const before = report.tokens.before[category]
    const after = report.tokens.after[category]
    if (before === 0 && after === 0) continue
    out.push(
      `  ${pad(categoryLabels[category], 28)}${lpad(n(before), 10)}${lpad(n(after), 10)}${lpad(n(after - before), 10)}`
    )
  }
  out.push(
    `  ${pad("total input", 28)}${lpad(n(report.tokens.before.input), 10)}${lpad(n(report.tokens.after.input), 10)}${lpad(n(report.tokens.after.input - report.tokens.before.input), 10)}`
  )
  out.push(
    `  ${report.fits ? "fits" : "DOES NOT FIT"}: ${n(report.tokens.after.input)} of ${n(report.policy.inputBudgetTokens)} input tokens (${((report.tokens.after.input / Math.max(1, report.tokens.before.input)) * 100).toFixed(1)}% of before)`
  )
  out.push("")
  out.push("Stages (least destructive first; re-measured after each)")
  for (const stage of report.stages) {
    const change = stage.status === "applied" ? `${n(stage.tokensBefore)} → ${n(stage.tokensAfter)}` : ""
    out.push(`  ${pad(stage.stage, 22)}${pad(stage.status, 12)}${pad(change, 22)}${stage.note ?? ""}`)
  }
  out.push("")
  if (report.cutPoint) {
    out.push(
      `Cut point: first kept entry ${report.cutPoint.firstKeptEntryId ?? "(none)"}; covered ${report.cutPoint.coveredFromEntryId ?? "(start)"} … ${report.cutPoint.coveredToEntryId}${report.cutPoint.splitTurn ? " (split turn: the turn's prefix is summarized, its user message kept)" : ""}`
    )
  } else out.push("Cut point: none (nothing summarized)")
  for (const failure of report.failures) out.push(`Recovered from ${failure.tag}: ${failure.message}`)
  if (report.checkpoint && checkpoint) {
    const cp = report.checkpoint
    out.push(
      `Checkpoint ${cp.id} · generation ${cp.generation} · ${cp.summarizer.kind}${cp.summarizer.model ? ` ${cp.summarizer.model}` : ""} (${cp.summarizer.promptVersion})`
    )
    const validation = cp.validation
    if (validation) {
      out.push(
        `Validation: ${validation.ok ? "passed" : "FAILED"} · identifier retention ${(validation.identifierRetention * 100).toFixed(1)}%`
      )
      for (const check of validation.checks) out.push(`  ${check.ok ? "✓" : "✗"} ${pad(check.name, 24)}${check.detail}`)
    }
    const full = CheckpointRenderer.render(checkpoint).split("\n")
    const shown = lines > 0 && checkpoint.content ? preview(checkpoint, lines) : full
    out.push("")
    out.push(
      `--- checkpoint as the model sees it (user-role reference message, ${n(full.length)} lines${shown.length < full.length ? `; each list cut to its first ${lines} items here` : ""}) ---`
    )
    out.push(...shown)
    if (shown.length < full.length)
      out.push(`… (--checkpoint-lines 0 prints all ${n(full.length)} lines; --out has the whole checkpoint)`)
    out.push("--- end of checkpoint ---")
  } else out.push("Checkpoint: none written")
  return out.join("\n")
}

const cut = <A>(items: ReadonlyArray<A>, max: number, more: (count: number) => A): Array<A> =>
  items.length <= max ? [...items] : [...items.slice(0, max), more(items.length - max)]

/** The checkpoint with every list cut to `max` items, for the terminal. */
const preview = (checkpoint: Checkpoint.Checkpoint, max: number): Array<string> => {
  const content = checkpoint.content!
  const more = (count: number) => `… ${count} more`
  const list = (items: ReadonlyArray<string>) => cut(items, max, more)
  const ids = content.identifiers
  return CheckpointRenderer.render({
    ...checkpoint,
    content: {
      ...content,
      constraints: list(content.constraints),
      progress: {
        done: list(content.progress.done),
        inProgress: list(content.progress.inProgress),
        blocked: list(content.progress.blocked)
      },
      decisions: cut(content.decisions, max, (count) => ({ decision: `… ${count} more`, rationale: "" })),
      nextSteps: list(content.nextSteps),
      criticalContext: list(content.criticalContext),
      pendingUserAsks: list(content.pendingUserAsks),
      identifiers: {
        paths: list(ids.paths),
        ids: list(ids.ids),
        hashes: list(ids.hashes),
        urls: list(ids.urls),
        ports: list(ids.ports),
        commands: list(ids.commands),
        errors: list(ids.errors)
      },
      filesRead: list(content.filesRead),
      filesModified: list(content.filesModified)
    }
  }).split("\n")
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
      import: {
        skipped: imported.issues.filter((issue) => issue.action === "skipped").length,
        keptAsEvent: imported.issues.filter((issue) => issue.action === "kept-as-event").length,
        repaired: imported.issues.filter((issue) => issue.action === "repaired").length,
        issues: imported.issues.slice(0, 50)
      }
    }
    let written = ""
    if (options.out) {
      const messages = result.view.items.map((item) => item.message)
      writeFileSync(
        options.out,
        `${JSON.stringify({ messages, checkpoint: checkpoint ?? null, entriesToAppend: result.entriesToAppend, report }, null, 2)}\n`
      )
      written = `\nWrote ${options.out}: ${n(messages.length)} messages (AI SDK ModelMessage[]), ${checkpoint ? "the checkpoint" : "no checkpoint (none was written)"}, ${n(result.entriesToAppend.length)} entries to append and this report.`
    }
    return {
      output: options.json
        ? JSON.stringify(report, null, 2)
        : `${render(report, checkpoint, options.checkpointLines ?? 5)}${written}`,
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
