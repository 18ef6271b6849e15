/**
 * Commander argument parsers for the flags that are neither policy numbers
 * (those are `PolicyOptions.ts`) nor choices: whole-number counts
 * (`--checkpoint-lines`, `--damage-window`), output files (`--out`) and the
 * summarizer spec (`--summarizer`).
 * A bad value throws commander's `InvalidArgumentError`, so the command
 * fails before any work with the usage exit code (3) and a message naming
 * the flag and what was wrong with the value.
 *
 * @since 0.2.0
 */
import { existsSync, statSync } from "node:fs"
import { dirname, resolve } from "node:path"
import { InvalidArgumentError } from "commander"

/**
 * A count flag's value: a whole number ≥ 0 written in decimal digits
 * (`0`, `5`, `10`); `-1`, `1.5` and `abc` are rejected rather than read as
 * NaN, a negative count or a truncated number.
 *
 * @category parsers
 */
export const wholeNumber = (value: string): number => {
  const count = /^\d+$/.test(value.trim()) ? Number(value.trim()) : Number.NaN
  if (!Number.isSafeInteger(count))
    throw new InvalidArgumentError(`expected a whole number ≥ 0, got ${JSON.stringify(value)}`)
  return count
}

/**
 * A size flag's value in MiB: a decimal number ≥ 0 (`0`, `8`, `0.25` for
 * 256 KiB); `-1`, `1e3` and `abc` are rejected.
 *
 * @category parsers
 */
export const mebibytes = (value: string): number => {
  const mib = /^\d+(?:\.\d+)?$/.test(value.trim()) ? Number(value.trim()) : Number.NaN
  if (!Number.isFinite(mib))
    throw new InvalidArgumentError(`expected a size in MiB ≥ 0 (e.g. 8 or 0.25), got ${JSON.stringify(value)}`)
  return mib
}

/**
 * An output file's path, checked before the command does its work: it must
 * not be a directory, and its directory must exist (nothing is created).
 * The path is returned as given.
 *
 * @category parsers
 */
export const outputFile = (value: string): string => {
  const path = resolve(value)
  if (existsSync(path) && statSync(path).isDirectory())
    throw new InvalidArgumentError(`${value} is a directory; give a file path inside it`)
  const directory = dirname(path)
  if (!existsSync(directory) || !statSync(directory).isDirectory())
    throw new InvalidArgumentError(`directory ${directory} does not exist; create it first`)
  return value
}

/**
 * Refuses an `--out` path that is the transcript being read (the same file,
 * also through another name or link): the command would overwrite the
 * agent's session while reporting it unchanged. Throws an `Error` tagged
 * `UsageError` (exit code 3, `ExitCodes.forError`).
 *
 * @category parsers
 */
export const checkOutputIsNotInput = (out: string, input: string): void => {
  if (!existsSync(out) || !existsSync(input)) return
  const [written, read] = [statSync(out), statSync(input)]
  if (written.dev === read.dev && written.ino === read.ino)
    throw Object.assign(
      new Error(
        `option '--out': ${out} is the transcript being read; give another path (the transcript is never overwritten)`
      ),
      { _tag: "UsageError" as const }
    )
}

/** `anthropic:<id>`, `openai:<id>`, or an AI Gateway id `<provider>/<model>` (`ModelSpec`'s forms). */
const MODEL_SPEC_RE = /^(?:(?:anthropic|openai):\S+|[\w.-]+\/\S+)$/

/**
 * A `--summarizer` value: `extractive`, or a model spec in one of the forms
 * `ModelSpec.resolve` reads — `anthropic:<id>`, `openai:<id>` or an AI
 * Gateway id `<provider>/<model>`. Anything else (`bogus`, `gpt-4o`,
 * `anthropic:`) is a usage error (exit code 3) naming the forms; a well-formed
 * spec whose key or provider package is missing is exit code 2, later.
 *
 * @category parsers
 */
export const summarizerSpec = (value: string): string => {
  const spec = value.trim()
  if (spec === "extractive" || MODEL_SPEC_RE.test(spec)) return spec
  throw new InvalidArgumentError(
    `expected extractive, anthropic:<id>, openai:<id> or an AI Gateway id provider/model (e.g. anthropic/claude-haiku-4.5), got ${JSON.stringify(value)}`
  )
}
