/**
 * `context-engine compact <file> [--model ID] [--engine tiered|sliding-window]
 * [--summarizer extractive|MODEL] [--format F] [--strict] [--force]
 * [--instructions TEXT] [--window-mib MIB] [--out FILE] [--json]`: the main job. Imports a transcript (format detected by content
 * unless `--format`; lenient unless `--strict`, with skipped lines listed
 * like `inspect` does), runs one
 * compaction with the chosen engine when the engine's decision says one is
 * due (over the budget) or `--force` / `--instructions` ask for it — a
 * request that fits is reported as sent unchanged — and prints tokens before / after per
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
 * `SummarizerFailed` naming the variable to set (exit code 2). A value in
 * none of these forms (`--summarizer bogus`) is a usage error (exit code 3).
 *
 * `--instructions TEXT` is `/compact <instructions>`: a manual compaction
 * (implies `--force`) whose instructions go to the summarizer as guidance
 * (`EngineInput.compactInstructions`) — never a goal, a pending ask or a next
 * step (shared case C18). The offline summarizer has no use for them; a
 * model summarizer gets them in their own prompt block.
 *
 * Large files: a line-format transcript (pi, Claude Code JSONL, console logs)
 * over `RollingCompact.ROLLING_THRESHOLD_BYTES` (32 MiB) is compacted rolling
 * (`RollingCompact.ts`): streamed twice, never held whole, compacted in rounds
 * over windows of `--window-mib` MiB of transcript lines (default 8), each
 * checkpoint updating the previous one; the report's `tokens.before` and
 * decision describe the whole transcript, `rolling` says how many rounds ran.
 * `--window-mib N` rolls a line-format file of any size, `--window-mib 0`
 * never rolls. Whole-JSON documents (OpenAI, Anthropic, AI SDK JSON,
 * SWE-agent) are always imported whole. `--force` / `--instructions` apply to
 * every round.
 *
 * Policy flags (`--model`, `--context-window`, `--reserve`, `--keep-recent`,
 * `--policy`, `--catalog`, `--allow-unknown-model`) as `PolicyOptions.ts`
 * describes; exit codes as `ExitCodes.ts` lists them (2: the summarizer
 * cannot be used; 3: the window leaves no room after the system prompt and
 * tool schemas — `FixedOverheadExceedsBudget`, with or without `--force`).
 *
 * @since 0.1.0
 */
import { writeFileSync } from "node:fs"
import { PolicyRegistry } from "@context-engine/core"
import type { Summarizer } from "@context-engine/engines"
import { Import, ImportResult } from "@context-engine/transcripts"
import { type Command, Option } from "commander"
import { Effect } from "effect"
import * as Arguments from "../Arguments.ts"
import * as CompactFlow from "../CompactFlow.ts"
import * as CompactRender from "../CompactRender.ts"
import * as CompactReports from "../CompactReport.ts"
import * as ExitCodes from "../ExitCodes.ts"
import * as PolicyOptions from "../PolicyOptions.ts"
import * as Progress from "../Progress.ts"
import * as RequestRepairs from "../RequestRepairs.ts"
import * as RollingCompact from "../RollingCompact.ts"

/** The machine-readable report (`--json`, and `report` in `--out`). @category models */
export type CompactReport = CompactReports.CompactReport

/**
 * Options of {@link run}.
 *
 * @category models
 */
export interface CompactOptions extends PolicyOptions.PolicyOptions {
  readonly engine?: "tiered" | "sliding-window" | undefined
  /** `extractive` (default), a model spec, or (programmatic use) a summarizer. */
  readonly summarizer?: string | Summarizer.Summarizer | undefined
  /** `/compact <instructions>`: guidance for the summarizer; implies a manual compaction. */
  readonly instructions?: string | undefined
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
  /**
   * Rolling compaction's window in MiB of transcript lines (`RollingCompact.ts`): 0 never rolls; N rolls a
   * line-format file of any size with an N MiB window; unset rolls line-format files over 32 MiB with an 8 MiB one.
   */
  readonly windowMib?: number | undefined
}

const summarizerFor = (spec: string | Summarizer.Summarizer | undefined) =>
  typeof spec === "object"
    ? Effect.succeed(spec)
    : spec === undefined || spec === "extractive"
      ? Effect.succeed(undefined)
      : // the AI SDK loads only for a model summarizer (offline compaction's memory, issue #13 req 6)
        Effect.flatMap(
          Effect.promise(() => import("@context-engine/provider-adapters")),
          ({ LanguageModelSummarizer, ModelSpec }) =>
            Effect.map(ModelSpec.resolve(spec), (model) =>
              LanguageModelSummarizer.make({
                model,
                name: spec,
                // the summarizer's own window decides when a range is summarized in stages
                contextWindowTokens: Effect.runSync(
                  PolicyRegistry.lookupOrFallback(spec.replace(/^(?:anthropic|openai):/, "").replace(/^[\w-]+\//, ""))
                ).contextWindowTokens
              })
            )
        )

/**
 * A usage problem found before any work (exit 3): a `--summarizer` in none of its forms, an `--out` that is the
 * transcript, a `windowMib` that is not a size ≥ 0 (programmatic use; the command line parses `Arguments.mebibytes`).
 */
const usageProblem = (file: string, options: CompactOptions): unknown => {
  const mib = options.windowMib
  if (mib !== undefined && !(Number.isFinite(mib) && mib >= 0))
    return new Error(`option '--window-mib': expected a size in MiB ≥ 0 (e.g. 8 or 0.25), got ${String(mib)}`)
  try {
    if (typeof options.summarizer === "string") Arguments.summarizerSpec(options.summarizer)
  } catch (error) {
    return new Error(`option '--summarizer': ${(error as Error).message}`)
  }
  try {
    if (options.out) Arguments.checkOutputIsNotInput(options.out, file)
  } catch (error) {
    return error
  }
  return undefined
}

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
  const problem = usageProblem(file, options)
  if (problem !== undefined) return fail(problem, ExitCodes.USAGE)
  try {
    summarizer = await Effect.runPromise(summarizerFor(options.summarizer))
  } catch (error) {
    return fail(error, ExitCodes.SUMMARIZER_UNAVAILABLE)
  }
  try {
    const windowBytes = await RollingCompact.windowFor(file, options)
    const compacted =
      windowBytes === undefined
        ? await inMemory(file, options, summarizer, progress)
        : await RollingCompact.run(
            file,
            options,
            windowBytes,
            (measurer) => CompactFlow.engineFor(options, summarizer, measurer),
            progress
          )
    if ("overhead" in compacted) return fail(compacted.overhead)
    progress.stop()
    return finish(file, options, compacted)
  } catch (error) {
    return fail(error)
  }
}

type Compacted = Omit<RollingCompact.Rolled, "imported" | "rolling"> & {
  readonly imported: Omit<ImportResult.ImportResult, "transcript">
  readonly rolling?: RollingCompact.Rolled["rolling"] | undefined
}

/** The whole transcript in memory: one import, one decision, one compaction (files up to the rolling threshold). */
const inMemory = async (
  file: string,
  options: CompactOptions,
  summarizer: Summarizer.Summarizer | undefined,
  progress: Progress.Progress
): Promise<Compacted | { readonly overhead: unknown }> => {
  const imported = await Import.importFilePromise(file, {
    format: options.format ?? "auto",
    strict: options.strict ?? false,
    // the engines read no entry meta; the report reads the recorded model (PolicyOptions.recordedModel)
    metaKeys: ["model"],
    onProgress: (done, total) => progress.update("importing", done, total)
  })
  const entries = imported.transcript.entries
  const resolved = await PolicyOptions.resolve(options, PolicyOptions.recordedModel(entries))
  const engine = CompactFlow.engineFor(options, summarizer)
  const input = CompactFlow.inputOf(entries, resolved.policy, options)
  const final = await CompactFlow.decideAndCompact(engine, input)
  if ("overhead" in final) return final
  const repairs = await RequestRepairs.list(engine, input, final.result.entriesToAppend)
  // a window given for a file read whole (RollingCompact.windowFor rolls line-format files only)
  const unrolled =
    (options.windowMib ?? 0) > 0
      ? [
          `--window-mib ${options.windowMib} does not apply: a ${imported.format} transcript is one JSON document, read whole (rolling compaction reads line-format files: pi and Claude Code JSONL, console logs, Aider history)`
        ]
      : []
  // The offline summarizer keeps what the transcript shows; instructions steer a model summarizer only.
  const unsteered =
    options.instructions?.trim() && (options.summarizer === undefined || options.summarizer === "extractive")
      ? [
          "--instructions go to a model summarizer (--summarizer anthropic:<id>, openai:<id> or provider/model); the offline extractive summarizer has no use for them, so this run is a plain manual compaction, like --force"
        ]
      : []
  // A manual compaction with nothing older than the kept recent window writes no checkpoint: say how to get one.
  const checkpointNote = final.result.stages.find((stage) => stage.stage === "checkpoint")?.note ?? ""
  const keptAll =
    (options.force || options.instructions?.trim()) &&
    final.result.checkpoint === undefined &&
    checkpointNote.includes("nothing older than the kept recent window")
      ? [
          `no checkpoint written: nothing lies before the kept recent window (--keep-recent ${resolved.policy.keepRecentTokens} tokens); pass a smaller --keep-recent to summarize more`
        ]
      : []
  return {
    imported,
    engine: engine.name,
    entries: entries.map(CompactReports.factsOf),
    resolved: { ...resolved, warnings: [...resolved.warnings, ...unrolled, ...unsteered, ...keptAll] },
    decision: final.decision,
    result: final.result,
    repairs,
    entriesToAppend: final.result.entriesToAppend
  }
}

const finish = (
  file: string,
  options: CompactOptions,
  compacted: Compacted
): { output: string; exitCode: number; report: CompactReport } => {
  const { result } = compacted
  const checkpoint = result.checkpoint
  const report = CompactReports.build({
    file,
    options,
    imported: compacted.imported,
    entries: compacted.entries,
    rolling: compacted.rolling,
    resolved: compacted.resolved,
    engine: compacted.engine,
    decision: compacted.decision,
    result,
    repairs: compacted.repairs
  })
  if (options.out) {
    const messages = result.view.items.map((item) => item.message)
    writeFileSync(
      options.out,
      `${JSON.stringify({ messages, checkpoint: checkpoint ?? null, entriesToAppend: compacted.entriesToAppend, report }, null, 2)}\n`
    )
  }
  const written = CompactRender.outputLines(options.out, {
    roles: result.view.items.map((item) => item.message.role),
    checkpoint: checkpoint !== undefined,
    entriesToAppend: compacted.entriesToAppend.length
  })
  return {
    output: options.json
      ? JSON.stringify(report, null, 2)
      : [CompactRender.render(report, checkpoint, options.checkpointLines ?? 5), ...written].join("\n"),
    exitCode: 0,
    report
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
      Arguments.summarizerSpec,
      "extractive"
    )
    .addOption(
      new Option("-f, --format <format>", "transcript format")
        .choices(["auto", ...ImportResult.formats])
        .default("auto")
    )
    .option(
      "--strict",
      "fail on the first malformed line or empty / reasoning-only message (lenient: the line is skipped, the message kept and left out of requests)"
    )
    .option("--force", "summarize even if the cheap stages make the request fit (like /compact)")
    .option(
      "--instructions <text>",
      "instructions for the summary, like /compact <instructions> (implies --force; never a task or an ask)"
    )
    .option(
      "-o, --out <file>",
      "write the compacted view (messages, checkpoint, entries to append, report) as JSON",
      Arguments.outputFile
    )
    .option("--json", "print the report as JSON")
    .option(
      "--window-mib <mib>",
      "rolling compaction window in MiB of transcript lines for line-format files (0 = never roll; default: files over 32 MiB roll with 8 MiB)",
      Arguments.mebibytes
    )
    .option(
      "--checkpoint-lines <n>",
      "items per checkpoint list to print (0 = the whole checkpoint)",
      Arguments.wholeNumber,
      5
    )
    .action(async (file: string, options: CompactOptions) => {
      const { output, exitCode } = await run(file, options)
      ;(exitCode === 0 ? process.stdout : process.stderr).write(`${output}\n`)
      process.exitCode = exitCode
    })
}
