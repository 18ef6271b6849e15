import type { Command } from "commander"

/** Registers `context-engine compact` (being built). */
export const register = (program: Command): void => {
  program.command("compact").description("not yet available")
}
