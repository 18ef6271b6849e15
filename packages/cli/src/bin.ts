#!/usr/bin/env node
/**
 * `context-engine` command line. Each command lives in `commands/` and
 * registers itself on the program.
 */
import { Command } from "commander"
import * as Compact from "./commands/compact.ts"
import * as Inspect from "./commands/inspect.ts"

const program = new Command()
  .name("context-engine")
  .description("Measure and compact LLM agent transcripts to fit a model's context window")
program.showHelpAfterError()
Inspect.register(program)
Compact.register(program)
await program.parseAsync(process.argv)
