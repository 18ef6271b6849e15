/**
 * The example's workspace: three generated source files of ~9K tokens each,
 * deterministic, with one detail (`RETRY_BACKOFF_MS`) in the middle of the
 * first file, and the four tasks the agent is given.
 */

const hex = (seed: number): string => ((seed * 2654435761) >>> 0).toString(16).padStart(8, "0")

const source = (name: string, functions: number, detailAt?: number): string => {
  const lines = [`// src/${name}.ts — generated for the context-tools example`]
  for (let index = 0; index < functions; index++) {
    if (index === detailAt) lines.push("export const RETRY_BACKOFF_MS = 1375")
    lines.push(
      `export function ${name}Step${index}(input: string): string {`,
      `  return input.replace(/k${index}/g, "${hex(index * 31 + name.length)}").padEnd(${(index * 7) % 97}, "${name[0]}")`,
      "}"
    )
  }
  return lines.join("\n")
}

/** Path → file text. */
export const files: ReadonlyMap<string, string> = new Map([
  ["src/alpha.ts", source("alpha", 220, 110)],
  ["src/beta.ts", source("beta", 220)],
  ["src/gamma.ts", source("gamma", 220)]
])

/** The tasks, in order: three reads to summarize, then a detail question about the first file. */
export const tasks: ReadonlyArray<string> = [
  "Read and summarize src/alpha.ts",
  "Read and summarize src/beta.ts",
  "Read and summarize src/gamma.ts",
  "What is RETRY_BACKOFF_MS in src/alpha.ts?"
]

/** The answer the last task must give. */
export const expectedDetail = "RETRY_BACKOFF_MS is 1375"
