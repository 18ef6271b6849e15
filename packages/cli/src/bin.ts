#!/usr/bin/env node
/**
 * `context-engine` command line. Each command lives in `commands/` and
 * registers itself on the program; exit codes are in `ExitCodes.ts`.
 */
import { readFileSync } from "node:fs"
import { Command, CommanderError } from "commander"
import * as Compact from "./commands/compact.ts"
import * as Inspect from "./commands/inspect.ts"
import * as Replay from "./commands/replay.ts"
import * as Report from "./commands/report.ts"
import * as ExitCodes from "./ExitCodes.ts"

/** The installed package's version (package.json sits one level above both src/ and dist/). */
const { version } = JSON.parse(readFileSync(new URL("../package.json", import.meta.url), "utf8")) as {
  readonly version: string
}

const program = new Command()
  .name("context-engine")
  .version(version, "-V, --version", "print the version of context-engine")
  .description("Measure, compact and replay LLM agent transcripts against a model's context window")
  .addHelpText("after", `\n${ExitCodes.HELP}`)
  .exitOverride()
Inspect.register(program)
Compact.register(program)
Replay.register(program)
Report.register(program)
// A usage error is its one line plus where the options are listed, not the whole help text after it.
program.showHelpAfterError("run context-engine --help for the commands")
for (const command of program.commands)
  command.showHelpAfterError(`run context-engine ${command.name()} --help for its options`)
try {
  await program.parseAsync(process.argv)
} catch (error) {
  // commander's own errors (unknown option, bad choice, missing argument) are usage errors;
  // --help and --version exit 0.
  if (error instanceof CommanderError) process.exitCode = error.exitCode === 0 ? ExitCodes.OK : ExitCodes.USAGE
  else throw error
}
