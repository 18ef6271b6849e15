/**
 * Paths into `../shared` (real transcripts and regression cases), which sits
 * beside the repository checkout. Tests read inputs from there; nothing is
 * copied into the repo.
 */
import { existsSync } from "node:fs"
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

/** Loads a regression case by id prefix, e.g. `loadCase("C07")`. */
export const loadCase = Cases.loader(join(sharedDir, "cases"))
