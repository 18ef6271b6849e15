/**
 * `context-engine inspect <file> [--model ID] [--format F] [--json] [--strict]`:
 * imports a transcript (format detected by content unless `--format`),
 * measures it against the model's budget and prints a per-category token
 * table, the largest entries, tool-pairing problems, recorded compaction
 * points and import issues. `--json` prints the {@link InspectReport}
 * schema's object instead. Lenient by default: malformed lines are skipped
 * and listed; `--strict` fails on the first one.
 *
 * Policy flags (`--model`, `--context-window`, `--reserve`, `--keep-recent`,
 * `--policy`, `--catalog`, `--allow-unknown-model`) as `PolicyOptions.ts`
 * describes; exit codes as `ExitCodes.ts` lists them.
 *
 * @since 0.1.0
 */
import { Import, ImportResult } from "@context-engine/transcripts"
import { type Command, Option } from "commander"
import { Schema } from "effect"
import * as ExitCodes from "../ExitCodes.ts"
import * as InspectRender from "../InspectRender.ts"
import * as InspectReport from "../InspectReport.ts"
import * as PolicyOptions from "../PolicyOptions.ts"
import * as Progress from "../Progress.ts"

/**
 * Options of {@link run}.
 *
 * @category models
 */
export interface InspectOptions extends PolicyOptions.PolicyOptions {
  readonly format?: ImportResult.FormatId | "auto" | undefined
  readonly json?: boolean | undefined
  readonly strict?: boolean | undefined
}

const encode = Schema.encodeSync(InspectReport.InspectReport)

/**
 * Runs `inspect` and returns the text to print and the exit code (no I/O
 * besides reading the file and the progress bar on stderr).
 *
 * @category commands
 */
export const run = async (
  file: string,
  options: InspectOptions,
  progress: Progress.Progress = Progress.make()
): Promise<{ output: string; exitCode: number }> => {
  const startedAt = performance.now()
  try {
    const result = await Import.importFilePromise(file, {
      format: options.format ?? "auto",
      strict: options.strict ?? false,
      onProgress: (done, total) => progress.update("importing", done, total)
    })
    const resolved = await PolicyOptions.resolve(options, PolicyOptions.recordedModel(result.transcript.entries))
    const report = InspectReport.build(result, {
      resolved,
      startedAt,
      onProgress: (done, total) => progress.update("counting", done, total)
    })
    progress.stop()
    return {
      output: options.json ? JSON.stringify(encode(report), null, 2) : InspectRender.render(report),
      exitCode: 0
    }
  } catch (error) {
    progress.stop()
    return ExitCodes.failure("inspect", error, options.json)
  }
}

/**
 * Registers `context-engine inspect`.
 *
 * @category commands
 */
export const register = (program: Command): void => {
  const command = program
    .command("inspect")
    .description("Measure a transcript: tokens per category vs the model's budget, largest entries, pairing problems")
    .argument(
      "<file>",
      "transcript file (pi / Claude Code JSONL, SWE-agent .traj, OpenAI / Anthropic / AI SDK JSON, aider or console text)"
    )
  PolicyOptions.register(command)
  command
    .addOption(
      new Option("-f, --format <format>", "transcript format")
        .choices(["auto", ...ImportResult.formats])
        .default("auto")
    )
    .option("--json", "print the report as JSON (InspectReport schema)")
    .option(
      "--strict",
      "fail on the first malformed line or empty / reasoning-only message (lenient: the line is skipped, the message kept and left out of requests)"
    )
    .action(async (file: string, options: InspectOptions) => {
      const { output, exitCode } = await run(file, options)
      ;(exitCode === 0 ? process.stdout : process.stderr).write(`${output}\n`)
      process.exitCode = exitCode
    })
}
