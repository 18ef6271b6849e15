/**
 * The exit codes of every `context-engine` command, in one place so the
 * commands, their docs and the README agree.
 *
 * | code | meaning |
 * |---|---|
 * | 0 | success |
 * | 1 | the transcript cannot be read or imported, or the command's work failed |
 * | 2 | the summarizer cannot be used (missing API key or provider package) |
 * | 3 | usage: an unknown `--model`, a bad flag value (`--summarizer` in none of its forms), a missing or invalid policy or catalog file, a `--format` the file is not in (`FormatMismatch`: none of that format's markers while auto-detection finds another, or nothing imported), a context window the transcript's system prompt and tool schemas alone exceed (`FixedOverheadExceedsBudget`: no compaction can help; raise the window) |
 *
 * @since 0.2.0
 */

/** @category constants */
export const OK = 0
/** @category constants */
export const FAILED = 1
/** @category constants */
export const SUMMARIZER_UNAVAILABLE = 2
/** @category constants */
export const USAGE = 3

/**
 * The exit code for a typed error: usage errors (`UnknownModel`,
 * `PolicyInvalid`, `InvalidInput` from a policy or catalog file, `UsageError`,
 * `FixedOverheadExceedsBudget`, `FormatMismatch`)
 * → {@link USAGE}; `SummarizerFailed` → {@link SUMMARIZER_UNAVAILABLE};
 * anything else → {@link FAILED}.
 *
 * @category utils
 */
export const forError = (error: unknown): number => {
  const tag = (error as { readonly _tag?: unknown } | null)?._tag
  if (
    tag === "UnknownModel" ||
    tag === "PolicyInvalid" ||
    tag === "UsageError" ||
    tag === "FixedOverheadExceedsBudget" ||
    tag === "FormatMismatch"
  )
    return USAGE
  if (tag === "InvalidInput" && /policy file|model catalog/.test(String((error as Error).message))) return USAGE
  if (tag === "SummarizerFailed") return SUMMARIZER_UNAVAILABLE
  return FAILED
}

/**
 * Text for `--help`: the table above, one line per code.
 *
 * @category constants
 */
export const HELP = [
  "Exit codes:",
  "  0  success",
  "  1  the transcript cannot be read or imported, or the command's work failed",
  "  2  the summarizer cannot be used (missing API key or provider package)",
  "  3  usage: unknown --model, bad flag value, missing or invalid policy or catalog file,",
  "     a --format the file is not in,",
  "     a window the system prompt and tool schemas alone exceed"
].join("\n")

/**
 * The output and exit code of a command that failed with `error`: one line
 * `context-engine <command>: <message>` (or `{ "error": { tag, message } }`
 * with `--json`) and {@link forError}'s code.
 *
 * @category utils
 */
export const failure = (
  command: string,
  error: unknown,
  json: boolean | undefined
): { readonly output: string; readonly exitCode: number } => {
  const tagged = error as {
    readonly _tag?: string
    readonly message?: string
    readonly model?: string
    readonly nearest?: ReadonlyArray<string>
  } | null
  // The library's UnknownModel message advises library calls; on the command line, name the flags instead.
  const message =
    tagged?._tag === "UnknownModel"
      ? `Unknown model ${JSON.stringify(tagged.model)}; nearest known ids: ${(tagged.nearest ?? []).join(", ")}. Give one of them with --model, or set the window with --context-window TOKENS, --policy FILE or --catalog FILE, or pass --allow-unknown-model for the generic window`
      : (tagged?.message ?? String(error))
  return {
    output: json
      ? JSON.stringify({ error: { tag: tagged?._tag ?? "Error", message } }, null, 2)
      : `context-engine ${command}: ${message}`,
    exitCode: forError(error)
  }
}
