/**
 * Paths into `../shared` (real transcripts and regression cases), which sits
 * beside the repository checkout. Tests read inputs from there; nothing is
 * copied into the repo.
 */
import { existsSync, readFileSync } from "node:fs"
import { dirname, join, resolve } from "node:path"
import { fileURLToPath } from "node:url"
import * as Cases from "../../src/testing/Cases.ts"

/** Absolute path of the repository root. */
export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), "../../../..")

/** Absolute path of `../shared`. */
export const sharedDir = resolve(repoRoot, "../shared")

if (!existsSync(join(sharedDir, "cases"))) {
  throw new Error(`../shared is missing: expected ${sharedDir}/cases beside the checkout`)
}

/** Path of a transcript, e.g. `transcript("pi/before-compaction.jsonl")`. */
export const transcript = (name: string): string => join(sharedDir, "transcripts", name)

/**
 * The shared transcripts in line formats (one record per line: JSONL and the console / chat-history logs), which
 * `Import.streamFile` streams and `compact` can roll; the SWE-agent `.traj` files are JSON documents, read whole.
 */
export const LINE_FORMAT_TRANSCRIPTS: ReadonlyArray<string> = [
  "pi/large-session.jsonl",
  // two pi compactions: their coveredRange.toEntryId is the entry before the first kept one (EntryBuilder.idBefore)
  "pi/before-compaction.jsonl",
  "claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl",
  "claude-code-console/bookminder-day-020.md",
  "gemini-cli-console/bookminder-day-016.md",
  "aider/aider-dev-chat-history.md"
]

/** Loads a regression case by id prefix, e.g. `loadCase("C07")`. */
export const loadCase = Cases.loader(join(sharedDir, "cases"))

/**
 * The ```ts code blocks of a README (`path` from the repository root), in order, each paired with the text of the
 * type-checked file under a package's `test/support` that must hold it verbatim — so `pnpm typecheck` checks every
 * README example against the code, and a test fails when either drifts.
 */
export const readmeSamples = (
  path: string,
  supportFiles: ReadonlyArray<string>
): ReadonlyArray<{ readonly block: string | undefined; readonly file: string }> => {
  const blocks = [...readFileSync(join(repoRoot, path), "utf8").matchAll(/```ts\n([\s\S]*?)```/g)].map((m) => m[1])
  if (blocks.length !== supportFiles.length)
    throw new Error(`${path} has ${blocks.length} ts blocks; ${supportFiles.length} support files were named`)
  return supportFiles.map((file, index) => ({ block: blocks[index], file: readFileSync(file, "utf8") }))
}
