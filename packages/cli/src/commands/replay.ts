/**
 * `context-engine replay <file> [policy flags] [--engine E] [--mode M]
 * [--damage-window N] [--json]`: replays a transcript step by step as the
 * middleware would (`Replay.ts`) and prints each compaction (step, reason,
 * tokens before/after, the tier that resolved it, checkpoint size), the peak
 * request, prompt-cache rewrites, time per step, and the damage measures
 * (re-reads and repeated side-effect calls after compactions), and every
 * compaction that failed or was skipped (the request then went out
 * uncompacted; the peak line says when it was over the budget). `--mode
 * shadow` shows the checkpoints compaction would have written beside what
 * was actually sent. Exit codes: `ExitCodes.ts`.
 *
 * @since 0.2.0
 */
import { Import, ImportResult } from "@context-engine/transcripts"
import { type Command, Option } from "commander"
import * as Arguments from "../Arguments.ts"
import * as ExitCodes from "../ExitCodes.ts"
import * as InspectReport from "../InspectReport.ts"
import * as PolicyOptions from "../PolicyOptions.ts"
import * as Progress from "../Progress.ts"
import * as Replay from "../Replay.ts"

/** @category models */
export interface ReplayOptions extends PolicyOptions.PolicyOptions {
  readonly engine?: "tiered" | "sliding-window" | undefined
  readonly mode?: "shadow" | "advisory" | "active" | undefined
  readonly damageWindow?: number | undefined
  readonly format?: ImportResult.FormatId | "auto" | undefined
  readonly json?: boolean | undefined
}

/**
 * The JSON report of `replay` (and the data of `report`).
 *
 * @category models
 */
export interface ReplayReport extends Replay.ReplayResult {
  readonly file: string
  readonly format: string
  readonly model: {
    readonly id: string
    readonly source: string
    readonly known: boolean
    /** The built-in catalog entry the id resolved to, null when none. */
    readonly catalogId: string | null
  }
  readonly policy: {
    readonly contextWindowTokens: number
    readonly reserveTokens: number
    readonly keepRecentTokens: number
  }
  readonly warnings: ReadonlyArray<string>
}

const n = (value: number): string => Math.round(value).toLocaleString("en-US")

/**
 * Builds the replay report for a file (imports, resolves the policy, replays)
 * and the transcript's largest entries (as `inspect` lists them).
 *
 * @category constructors
 */
export const buildWithLargest = async (
  file: string,
  options: ReplayOptions,
  progress: Progress.Progress = Progress.make()
): Promise<{
  readonly report: ReplayReport
  readonly largest: ReadonlyArray<InspectReport.InspectReport["largest"][number]>
}> => {
  const imported = await Import.importFilePromise(file, {
    format: options.format ?? "auto",
    strict: false,
    onProgress: (done, total) => progress.update("importing", done, total)
  })
  const entries = imported.transcript.entries
  const resolved = await PolicyOptions.resolve(options, PolicyOptions.recordedModel(entries))
  const result = await Replay.replay(entries, {
    policy: resolved.policy,
    engine: options.engine,
    mode: options.mode,
    damageWindowSteps: options.damageWindow,
    onProgress: (done, total) => progress.update("replaying", done, total)
  })
  const largest = InspectReport.build(imported, { resolved }).largest
  progress.stop()
  const report: ReplayReport = {
    file,
    format: imported.format,
    model: { id: resolved.modelId, source: resolved.source, known: resolved.known, catalogId: resolved.catalogId },
    policy: {
      contextWindowTokens: resolved.policy.contextWindowTokens,
      reserveTokens: resolved.policy.reserveTokens,
      keepRecentTokens: resolved.policy.keepRecentTokens
    },
    warnings: resolved.warnings,
    ...result
  }
  return { report, largest }
}

/**
 * What a withheld (shadow) compaction left sent: in `shadow` nothing was applied; in `advisory` the
 * deterministic stages were, and only the checkpoint was withheld — its "request A → B" is what it would have
 * sent, so the tokens actually sent at that step are named.
 */
const withheld = (report: ReplayReport, compaction: Replay.CompactionRecord): string => {
  if (!compaction.shadow) return ""
  if (report.mode !== "advisory") return " (shadow: not applied)"
  const sent = report.steps.find((step) => step.step === compaction.step)?.inputTokens
  return ` (advisory: checkpoint not applied, deterministic stages applied${sent === undefined ? "" : `, ${n(sent)} tokens sent`})`
}

/** Failed compactions one per line (the first 5), skipped ones as one line: each left a request uncompacted. */
const renderFailures = (report: ReplayReport): ReadonlyArray<string> => {
  const failed = report.failures.filter((failure) => failure.kind === "failed")
  const skipped = report.failures.filter((failure) => failure.kind === "skipped")
  const over = report.failures.filter((failure) => failure.kind === "over-budget")
  const out: Array<string> = []
  if (over.length > 0) {
    out.push(`Compactions short of the budget: ${n(over.length)} (the best reduction went out, over the input budget)`)
    for (const failure of over.slice(0, 5)) out.push(`  step ${failure.step}: ${failure.reason}`)
    if (over.length > 5) out.push(`  … ${n(over.length - 5)} more (--json lists all)`)
  }
  if (failed.length > 0) {
    out.push(`Failed compactions: ${n(failed.length)} (the request went out uncompacted)`)
    for (const failure of failed.slice(0, 5)) out.push(`  step ${failure.step}: ${failure.reason}`)
    if (failed.length > 5) out.push(`  … ${n(failed.length - 5)} more (--json lists all)`)
  }
  if (skipped.length > 0)
    out.push(
      `Skipped compactions: ${n(skipped.length)} (steps ${skipped[0]!.step} … ${skipped.at(-1)!.step}): ${skipped[0]!.reason}`
    )
  return out
}

/**
 * Renders the human-readable replay.
 *
 * @category rendering
 */
export const render = (report: ReplayReport): string => {
  const out: Array<string> = [`context-engine replay ${report.file}`]
  for (const warning of report.warnings) out.push(`  warning: ${warning}`)
  out.push(
    `  ${report.format} transcript · model ${PolicyOptions.modelLabel(report.model)} · window ${n(report.policy.contextWindowTokens)} · reserve ${n(report.policy.reserveTokens)} · input budget ${n(report.peak.budgetTokens)} · engine ${report.engine} · mode ${report.mode}`
  )
  out.push(`  ${n(report.steps.length)} steps (one per assistant message, as the middleware would see them)`)
  out.push("")
  out.push(
    report.compactions.length > 0
      ? "Compactions"
      : report.failures.length > 0 || report.overBudgetSteps > 0
        ? "No compaction was applied."
        : "No compaction was needed."
  )
  for (const compaction of report.compactions) {
    const checkpoint = compaction.checkpoint
    out.push(
      `  step ${compaction.step}${withheld(report, compaction)}: ${compaction.reasons.join(", ")} · request ${n(compaction.tokensBefore)} → ${n(compaction.tokensAfter)} tokens · resolved by ${compaction.tier}${compaction.checkpointSkipped !== undefined ? ` (no checkpoint: ${compaction.checkpointSkipped})` : ""}${checkpoint ? ` · checkpoint gen ${checkpoint.generation}: ${n(checkpoint.tokens)} tokens of the request, validation ${checkpoint.validation?.ok === false ? "FAILED" : "passed"}` : ""}`
    )
  }
  out.push(...renderFailures(report))
  out.push("")
  const { peak } = report
  const window = `(window ${n(report.policy.contextWindowTokens)})`
  // Both lines always name the budget: "Peak request sent: 12,781 tokens" alone does not say whether the replay fit.
  out.push(
    `Peak request sent: ${n(peak.inputTokens)} tokens at step ${peak.step} — ${peak.inputTokens > peak.budgetTokens ? `over the input budget of ${n(peak.budgetTokens)} by ${n(peak.inputTokens - peak.budgetTokens)}` : `within the input budget of ${n(peak.budgetTokens)}`} ${window}`
  )
  out.push(`Requests over the input budget: ${n(report.overBudgetSteps)} of ${n(report.steps.length)}`)
  out.push(`Prompt-cache rewrites: ${report.cacheRewrites} (requests whose prefix differs from the previous request's)`)
  out.push(
    `Time per step: mean ${report.timePerStepMs.mean.toFixed(1)} ms, max ${report.timePerStepMs.max.toFixed(1)} ms, total ${(report.timePerStepMs.total / 1000).toFixed(1)} s`
  )
  const damage = report.damage
  out.push(
    `Re-reads within ${damage.windowSteps} steps of a compaction: ${damage.rereads.length} (after ${damage.compactionsFollowedByReread} of ${report.compactions.length} compactions)`
  )
  for (const reread of damage.rereads.slice(0, 5))
    out.push(`  step ${reread.step}: ${reread.toolName} ${reread.target} (compaction at step ${reread.compactionStep})`)
  out.push(
    `Repeated side-effect calls within ${damage.windowSteps} steps: ${damage.repeatedSideEffects.length} (after ${damage.compactionsFollowedByRepeat} of ${report.compactions.length} compactions)`
  )
  for (const repeat of damage.repeatedSideEffects.slice(0, 5))
    out.push(`  step ${repeat.step}: ${repeat.target} (compaction at step ${repeat.compactionStep})`)
  return out.join("\n")
}

/**
 * Runs `replay`: the text (or JSON) to print and the exit code.
 *
 * @category commands
 */
export const run = async (file: string, options: ReplayOptions): Promise<{ output: string; exitCode: number }> => {
  const progress = Progress.make()
  try {
    const { report } = await buildWithLargest(file, options, progress)
    return { output: options.json ? JSON.stringify(report, null, 2) : render(report), exitCode: ExitCodes.OK }
  } catch (error) {
    progress.stop()
    return ExitCodes.failure("replay", error, options.json)
  }
}

/**
 * Adds the options `replay` and `report` share (policy, engine, rollout mode,
 * damage window, transcript format) to `command`.
 *
 * @category commands
 */
export const registerReplayOptions = (command: Command, modeDescription: string): Command => {
  PolicyOptions.register(command)
  return command
    .addOption(new Option("-e, --engine <engine>", "engine").choices(["tiered", "sliding-window"]).default("tiered"))
    .addOption(new Option("--mode <mode>", modeDescription).choices(["shadow", "advisory", "active"]).default("active"))
    .option(
      "--damage-window <steps>",
      `steps after a compaction in which re-reads and repeats count (default ${Replay.DEFAULT_DAMAGE_WINDOW_STEPS})`,
      Arguments.wholeNumber
    )
    .addOption(
      new Option("-f, --format <format>", "transcript format")
        .choices(["auto", ...ImportResult.formats])
        .default("auto")
    )
}

/**
 * Registers `context-engine replay`.
 *
 * @category commands
 */
export const register = (program: Command): void => {
  const command = program
    .command("replay")
    .description("Replay a transcript step by step as the middleware would: compactions, peak, cache rewrites, damage")
    .argument("<file>", "transcript file (any format `inspect` reads)")
  registerReplayOptions(command, "rollout mode: shadow records compactions without applying them")
  command.option("--json", "print the report as JSON").action(async (file: string, options: ReplayOptions) => {
    const { output, exitCode } = await run(file, options)
    ;(exitCode === 0 ? process.stdout : process.stderr).write(`${output}\n`)
    process.exitCode = exitCode
  })
}
