import type { Command } from "commander"

/** Registers `context-engine inspect` (being built). */
export const register = (program: Command): void => {
  program.command("inspect").description("not yet available")
}
