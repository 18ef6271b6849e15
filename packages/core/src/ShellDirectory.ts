/**
 * Where a shell call ran: the working directory a harness's shell starts a
 * call in, told by the `cd` steps of the calls before it, and the directory
 * each step of a line runs in. A check's scope is its directory too
 * (`CheckRun.covers`): `npm test` at the root and in `packages/core` are two
 * runs, and so is a bare `npm test` issued after an earlier call's `cd
 * packages/core` in a shell that kept it.
 *
 * Directories are written relative to where the session started (`""`),
 * absolute (`/repo/pkg`), or relative to a directory we cannot name — a
 * `cd -`, `cd ~`, `cd "$DIR"`, or a harness whose shell may or may not have
 * kept an earlier `cd` ({@link UNKNOWN_PREFIX}): such a directory equals only
 * itself, so a run there covers and is covered only by runs known to share it.
 *
 * How each harness's shell tool carries the directory between calls
 * ({@link carryOf}), from its docs:
 * - **kept** — Claude Code's `Bash` (its docs: the working directory persists
 *   between commands; when a `cd` leaves the allowed directories it answers
 *   "Shell cwd was reset to <dir>"), and SWE-agent's text actions (one bash
 *   session per environment; its observations end "(Current directory: …)").
 * - **fresh** — Gemini CLI's `run_shell_command` (`bash -c` in the project
 *   root or its `directory` argument; console transcripts show it as
 *   `Shell`), Codex's `shell` / `local_shell` / `exec_command` (each a new
 *   process in its `workdir`): every call starts where the session started.
 * - **unknown** — any other name, and `bash`: pi's `bash` spawns each command
 *   in the session's directory, while Anthropic's client `bash` tool and
 *   SWE-agent's function-calling `bash` keep one shell alive. After a call
 *   that moved its shell, the next call's directory is in doubt, and a
 *   failure is kept when in doubt.
 *
 * @since 0.8.0
 */
import * as ShellCommand from "./ShellCommand.ts"
import * as ShellWords from "./ShellWords.ts"

/**
 * How a harness's shell tool carries the working directory from one call to the next (see the module docs).
 *
 * @category models
 */
export type Carry = "kept" | "fresh" | "unknown"

/** The prefix of a directory we cannot name (`?1`, `?1/pkg`): it equals only itself. */
export const UNKNOWN_PREFIX = "?"

const KEPT_RE = /^Bash$/
const FRESH_RE = /^(?:run_shell_command|Shell|shell|local_shell|exec_command)$/

/**
 * How the shell tool named `toolName` carries the working directory between calls (module docs): Claude Code's
 * `Bash` keeps it, Gemini CLI's and Codex's shell tools start every call afresh, any other name is unknown.
 *
 * @category getters
 */
export const carryOf = (toolName: string): Carry =>
  KEPT_RE.test(toolName) ? "kept" : FRESH_RE.test(toolName) ? "fresh" : "unknown"

/**
 * `path` taken from `where` (`"pkg"` + `"../b"` → `"b"`, `""` + `"/r/a"` → `"/r/a"`), or `undefined` when the path
 * names no directory we can follow (`~`, `$DIR`, a glob, `-`).
 */
const within = (where: string, path: string): string | undefined => {
  if (path === "" || path === "-" || /[~$`*?[{]/.test(path)) return undefined
  const parts = path.startsWith("/") ? [""] : where === "" ? [] : where.split("/")
  const floor = parts[0] === "" || parts[0]?.startsWith(UNKNOWN_PREFIX) === true ? 1 : 0
  for (const part of path.split("/")) {
    if (part === "" || part === ".") continue
    if (part === ".." && parts.length > floor && parts.at(-1) !== "..") parts.pop()
    else if (part !== ".." || parts[0] !== "") parts.push(part)
  }
  return parts.length === 1 && parts[0] === "" ? "/" : parts.join("/")
}

/**
 * The directory after one step run in `where`: `undefined` when the step does not change directory, `null` when it
 * does but not to one we can follow (`cd` alone, `cd -`, `cd ~/x`, `popd`). `cd` and `pushd` with one argument
 * change it (their options left out).
 *
 * @category getters
 */
export const moved = (step: string, where: string): string | null | undefined => {
  const [program, ...rest] = ShellWords.words(ShellCommand.withoutPrefixes(step))
  if (program === "popd") return null
  if (program !== "cd" && program !== "pushd") return undefined
  const args = rest.filter((word) => word === "-" || !word.startsWith("-"))
  return args.length === 1 ? (within(where, args[0]!) ?? null) : null
}

/**
 * The directory a shell is in after a line run in `start` — each of its `cd` steps that runs in the shell itself
 * ({@link moved}; a pipeline's stages run in subshells, POSIX XCU 2.9.2, and a `( … )` group is one step that moves
 * nothing) — or `null` when a step moved it somewhere we cannot follow.
 *
 * @category getters
 */
export const after = (line: string, start: string): string | null => {
  const steps = ShellCommand.steps(line)
  let where = start
  for (const [index, step] of steps.entries()) {
    if (step.operator === "|" || steps[index + 1]?.operator === "|") continue
    const next = moved(step.text, where)
    if (next === null) return null
    if (next !== undefined) where = next
  }
  return where
}

/** Claude Code's answer when a `cd` left the directories it allows: the shell is back in the one it names. */
const RESET_RE = /Shell cwd was reset to (\/\S+)/

/** A shell's complaint that a `cd` failed (bash `cd: x: No such file or directory`, zsh `cd: no such file…`, sh `cd: can't cd to x`). */
const CD_FAILED_RE = /\bcd: /

/** What a call printed and whether it failed (a failed line's `cd` ran unless the output says it failed). */
export interface Result {
  readonly output: string
  readonly failed: boolean
}

/** @category models */
export interface Tracker {
  /**
   * The directory a call of `toolName` running `line` starts in — `""` also when the line's first step is a `cd` to
   * an absolute path: it runs there wherever it started — then where the call left its shell.
   */
  readonly start: (toolName: string, carry: Carry, line: string, result: Result) => string
}

/** One tool's shell: where the next call starts, and where the calls that opened with a relative `cd` started. */
interface Shell {
  readonly where: string
  readonly openers: ReadonlyMap<string, string>
}

/**
 * Tracks the directory each shell call starts in across a session's calls, per tool ({@link carryOf}).
 * - A kept shell moves with each `cd` ({@link after}); after a line whose output says a `cd` failed
 *   ({@link CD_FAILED_RE}), or a `cd` we cannot follow, the next call's directory is in doubt (a new {@link UNKNOWN_PREFIX} directory) — unless the harness
 *   says where it put the shell back (Claude Code's "Shell cwd was reset to <dir>").
 * - A fresh shell starts every call where the session started.
 * - An unknown harness's shell: after a call that moved it, the next call's directory is in doubt — but a line
 *   that opens with the same relative `cd` as an earlier call re-runs from where the first such call started (the
 *   agent repeats `cd pkg && …` in a shell it knows starts afresh; in a shell that kept a move the repeated
 *   `cd pkg` would have gone to `pkg/pkg`, a directory an agent does not mean).
 *
 * @category constructors
 */
export const tracker = (): Tracker => {
  const shells = new Map<string, Shell>()
  let unknowns = 0
  const unknown = () => `${UNKNOWN_PREFIX}${++unknowns}`
  return {
    start: (toolName, carry, line, result) => {
      if (carry === "fresh") return ""
      const shell = shells.get(toolName) ?? { where: "", openers: new Map<string, string>() }
      const first = ShellCommand.steps(line)[0]?.text ?? ""
      // Where the line's first step goes from the session's start: absolute, relative, `undefined` for no `cd`.
      const opened = moved(first, "")
      const absolute = opened?.startsWith("/") === true
      const rerun =
        carry === "unknown" && typeof opened === "string" && !absolute ? shell.openers.get(first) : undefined
      const where = absolute ? "" : (rerun ?? shell.where)
      const left = after(line, where)
      const cdFailed = result.failed && CD_FAILED_RE.test(result.output)
      const followed = left === where || (carry === "kept" && left !== null && !cdFailed)
      const reset = RESET_RE.exec(result.output)?.[1]
      const openers = new Map(shell.openers)
      if (typeof opened === "string" && !absolute && left !== where && !openers.has(first)) openers.set(first, where)
      shells.set(toolName, { where: reset ?? (followed ? left! : unknown()), openers })
      return where
    }
  }
}
