/**
 * `context-engine report <file> [--out report.html] [replay flags]`: replays
 * the transcript (`replay`) and writes one self-contained HTML page
 * (`ReportHtml.ts`): token composition per step with the budget line, every
 * compaction with its checkpoint and validation (shadow checkpoints beside
 * what was sent), the largest entries and the damage measures. `--json`
 * also prints the report's JSON. `--out` defaults to `report.html` in the
 * working directory; the summary line gives its absolute path. Exit codes:
 * `ExitCodes.ts`.
 *
 * @since 0.2.0
 */
import { writeFileSync } from "node:fs"
import { resolve } from "node:path"
import type { Command } from "commander"
import * as Arguments from "../Arguments.ts"
import * as ExitCodes from "../ExitCodes.ts"
import * as Progress from "../Progress.ts"
import * as ReportHtml from "../ReportHtml.ts"
import * as ReplayCommand from "./replay.ts"

/** @category models */
export interface ReportOptions extends ReplayCommand.ReplayOptions {
  readonly out: string
}

/**
 * Runs `report`: writes the page and returns what to print.
 *
 * @category commands
 */
export const run = async (file: string, options: ReportOptions): Promise<{ output: string; exitCode: number }> => {
  const progress = Progress.make()
  try {
    Arguments.checkOutputIsNotInput(options.out, file)
    const { report, largest } = await ReplayCommand.buildWithLargest(file, options, progress)
    writeFileSync(options.out, ReportHtml.render(report, largest))
    const failed = report.failures.filter((failure) => failure.kind === "failed").length
    const trouble = [
      ...(failed > 0 ? [`${failed} failed compaction${failed === 1 ? "" : "s"}`] : []),
      ...(report.overBudgetSteps > 0
        ? [`${report.overBudgetSteps} of ${report.steps.length} requests over the budget`]
        : [])
    ]
    const summary = `Wrote ${resolve(options.out)}: ${report.steps.length} steps, ${report.compactions.length} compactions (${report.compactions.filter((c) => c.shadow).length} shadow)${trouble.map((item) => `, ${item}`).join("")}, peak ${report.peak.inputTokens.toLocaleString("en-US")} tokens. Open it in a browser; it needs no network.`
    return { output: options.json ? JSON.stringify({ report, largest }, null, 2) : summary, exitCode: ExitCodes.OK }
  } catch (error) {
    progress.stop()
    return ExitCodes.failure("report", error, options.json)
  }
}

/**
 * Registers `context-engine report`.
 *
 * @category commands
 */
export const register = (program: Command): void => {
  const command = program
    .command("report")
    .description("Replay a transcript and write one self-contained HTML report (chart, compactions, largest entries)")
    .argument("<file>", "transcript file (any format `inspect` reads)")
    .option("-o, --out <file>", "HTML file to write", Arguments.outputFile, "report.html")
  ReplayCommand.registerReplayOptions(command, "rollout mode: shadow shows compactions without applying them")
  command.option("--json", "also print the report's JSON").action(async (file: string, options: ReportOptions) => {
    const { output, exitCode } = await run(file, options)
    ;(exitCode === 0 ? process.stdout : process.stderr).write(`${output}\n`)
    process.exitCode = exitCode
  })
}
