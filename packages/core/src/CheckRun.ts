/**
 * What a check run (a test, type-check, lint or build: `ShellCommand`'s
 * `check` steps) tells about the code: what it covered ({@link covers}) and
 * how it ended when an output filter hid its exit status
 * ({@link shownOutcome}).
 *
 * Our own rules, from how the common runners are invoked (pytest, jest /
 * vitest, go test, cargo test, npm scripts, tsc …) — no peer handoff
 * states them: Claude Code's compact prompt asks for "errors and fixes",
 * which needs a fixed error told from a live one, and a passing broader
 * run is the agent's own evidence that an earlier, narrower failure is
 * fixed.
 *
 * @since 0.7.0
 */
import * as IdentifierExtraction from "./IdentifierExtraction.ts"
import * as ShellCommand from "./ShellCommand.ts"
import * as ShellDirectory from "./ShellDirectory.ts"
import * as ShellWords from "./ShellWords.ts"
import type * as ToolActions from "./ToolActions.ts"

/** A target of a check run: a path, a test id or a name filter, relative to where the run started. */
interface Target {
  readonly path: string
  /** Whether the run takes what is under the path too (a directory's tests); `go test ./pkg` takes one package. */
  readonly recursive: boolean
}

/**
 * What one check step covers: its tool, the directory it ran in (`ShellDirectory`; `null` when a `cd` took it
 * somewhere we cannot follow), what it ran and the options that narrowed it.
 */
interface Scope {
  readonly tool: string
  readonly where: string | null
  readonly targets: ReadonlyArray<Target>
  readonly selectors: ReadonlyArray<string>
}

/** How a check is run through a runner (`npx`, `uv run`, `python -m` …): not part of which tool it is. */
const RUNNER_RE =
  /^(?:(?:npx|bunx|pnpx)\s+|(?:pnpm|npm|yarn)\s+exec\s+|(?:uv|poetry|pipenv|hatch)\s+run\s+|bundle\s+exec\s+|python3?\s+-m\s+)/

/**
 * Options that narrow which tests run or where, with a value: pytest `-k` / `-m` / `--deselect` / `--ignore`,
 * jest / vitest `-t` / `--testNamePattern` / `--testPathPattern` / `--project`, mocha `--grep`, go `-run` /
 * `-skip`, cargo `-p` / `--package` / `--exclude`, tsc `-p` / `--project`, npm / pnpm / yarn `-w` /
 * `--workspace` / `--filter` (their docs' selection options).
 */
const SELECT_VALUE_RE =
  /^(?:-k|-m|-t|-g|-p|-w|-F|-run|-skip|--deselect|--ignore|--ignore-glob|--testNamePattern|--test-name-pattern|--testPathPattern|--testPathPatterns|--testPathIgnorePatterns|--grep|--fgrep|--project|--package|--exclude|--skip|--workspace|--filter|--manifest-path|--dir|--prefix)$/
/** Options that narrow a run without a value: re-run only failures, only changed files, or collect without running. */
const SELECT_FLAG_RE =
  /^(?:--lf|--last-failed|--sw|--stepwise|--co|--collect-only|--no-run|--list|-list|--listTests|--changed|--onlyChanged|--only-failures|--onlyFailures|--invert|--exact)$/
/** Options whose value follows as the next word and selects nothing (output, workers, timeouts, config). */
const VALUE_RE =
  /^(?:--tb|--maxfail|-n|--numprocesses|--cov-report|--durations|--timeout|-c|--config|--rootdir|-r|-W|--reporter|--color|--junitxml|--features|-j|--jobs|--target|-count|-timeout|-tags|-parallel|--pool|--environment|--maxWorkers)$/

/** A word of a target as written: `./a/` → `a`, `.` → `` (where the run started). */
const normalized = (word: string): string =>
  word
    .replace(/^(?:\.\/)+/, "")
    .replace(/\/+$/, "")
    .replace(/^\.$/, "")

/** The scope of one check step run in `where` ({@link Scope}), or `undefined` when it is no check. */
const scopeOf = (step: string, where: string | null): Scope | undefined => {
  const text = ShellCommand.withoutPrefixes(step)
  const match = ShellCommand.CHECK_RE.exec(text)
  if (match === null) return undefined
  const tool = match[0]
    .replace(RUNNER_RE, "")
    .replace(/^(npm|pnpm|yarn|bun)\s+run(?:-script)?\s+/, "$1 ")
    .replace(/\s+/g, " ")
    .trim()
  const go = /^go\s/.test(tool)
  const words = ShellWords.words(text.slice(match[0].length)).filter((word) => !/^(?:\d?>|&>)/.test(word))
  // vitest's `run` / `watch` name how it runs, not what (`vitest run src/a.test.ts`).
  if (tool === "vitest" && /^(?:run|watch|dev)$/.test(words[0] ?? "")) words.shift()
  const targets: Array<Target> = []
  const selectors: Array<string> = []
  for (let at = 0; at < words.length; at++) {
    const word = words[at]!
    const [name = word, value] = word.split(/=(.*)/s)
    if (word === "--") continue
    if (SELECT_VALUE_RE.test(name)) selectors.push(`${name}=${value ?? words[++at] ?? ""}`)
    else if (SELECT_FLAG_RE.test(name)) selectors.push(name)
    else if (VALUE_RE.test(name) && value === undefined) at++
    else if (!word.startsWith("-")) {
      // go's packages: `./pkg/...` is the tree under pkg, `./pkg` the one package (`go help packages`).
      const tree = go && /(?:^|\/)\.\.\.$/.test(word)
      targets.push({ path: normalized(tree ? word.replace(/\/?\.\.\.$/, "") : word), recursive: !go || tree })
    }
  }
  // No target: the whole suite where it ran — one package for go (`go test` tests the current directory's).
  return { tool, where, targets: targets.length > 0 ? targets : [{ path: "", recursive: !go }], selectors }
}

/** Whether the later target takes in the earlier one: the same, or the earlier under it (`a/b.py::test_x` under `a`). */
const takesIn = (later: Target, earlier: Target): boolean =>
  later.recursive
    ? later.path === "" ||
      earlier.path === later.path ||
      earlier.path.startsWith(`${later.path}/`) ||
      earlier.path.startsWith(`${later.path}::`)
    : !earlier.recursive && earlier.path === later.path

/** Whether a later scope covers an earlier one: same tool and known directory, no narrowing option the earlier lacked. */
const scopeCovers = (later: Scope, earlier: Scope): boolean =>
  later.tool === earlier.tool &&
  later.where !== null &&
  later.where === earlier.where &&
  later.selectors.every((selector) => earlier.selectors.includes(selector)) &&
  earlier.targets.every((target) => later.targets.some((taken) => takesIn(taken, target)))

/**
 * The check steps of a line run in `start` (its output filters left out, `ShellCommand.withoutOutputFilters`) with
 * their scopes, the directory each ran in told by the `cd` steps before it (`ShellDirectory.moved`). For a line that exited 0 (`passing`), the checks
 * whose failure would have failed it — every operator after them `&&`; for a failed line, its last check (a failed
 * chain most likely failed at its last step, as `CriticalIdentifiers.isSuperseded` reads any failed chain), or
 * `undefined` when a step does work (a command or staging: the failure may be its).
 */
const scopesOf = (line: string, passing: boolean, start: string): Array<Scope> | undefined => {
  const steps = ShellCommand.steps(ShellCommand.withoutOutputFilters(line))
  const scopes: Array<Scope> = []
  let where: string | null = start
  for (const [index, step] of steps.entries()) {
    const kind = ShellCommand.stepKind(step.text, step.operator === "|")
    const cd: string | null | undefined =
      step.operator === "|" ? undefined : ShellDirectory.moved(step.text, where ?? "")
    // From a directory we cannot follow, only an absolute path is known again.
    if (cd !== undefined) where = where === null && cd?.startsWith("/") !== true ? null : cd
    else if (kind === "check") {
      const scope = scopeOf(step.text, where)
      const propagates = steps.slice(index + 1).every((after) => after.operator === "&&")
      if (scope !== undefined && (!passing || propagates)) scopes.push(scope)
    } else if (kind !== "look" && !passing) return undefined
  }
  return passing ? scopes : scopes.slice(-1)
}

/** Lines read lately ({@link scopesOf}): a failed check is compared with every later call, and agents repeat lines. */
const read = new Map<string, Array<Scope> | undefined>()
const READ_LINES = 512

const remembered = (line: string, passing: boolean, start: string): Array<Scope> | undefined => {
  const key = `${passing ? "+" : "-"}${start}\u0000${line}`
  if (read.has(key)) return read.get(key)
  if (read.size >= READ_LINES) read.clear()
  const scopes = scopesOf(line, passing, start)
  read.set(key, scopes)
  return scopes
}

/**
 * Whether a later check run that passed covers an earlier one, so the earlier run's failure is superseded: the
 * earlier line's last check is taken in by a check of the later one — the same tool (run directly or through a
 * runner: `python -m pytest` is `pytest`, `npm run test` is `npm test`), run in the same directory, on the same
 * target or one above it (a parent directory, the file of a test id: `pytest tests/` covers `pytest
 * tests/test_a.py::test_x`), or on no target (the whole suite), and narrowed by no option the earlier run lacked
 * (`-k`, `-m`, `-t`, `--lf`, `-p pkg` … {@link SELECT_VALUE_RE}); other flags (`-x`, `-v`, `--cov`) change
 * what is shown, not what passed. A passing run of a narrower or unrelated scope covers nothing, nor does one
 * whose check's status the line did not return (`pytest; echo done`). An earlier line that also did work (`pip
 * install x && pytest`) is not covered: its failure may be the work's.
 *
 * The directory is where each line started (`directories`, `ShellDirectory`: `""` where the session started, the
 * default) moved by its own `cd` steps; a directory we cannot follow (`cd "$DIR"`, a shell that may have kept an
 * earlier call's `cd`) covers nothing. A run in another directory covers nothing either, the workspace root
 * included: a root `npm test` often runs every package's tests (`turbo run test`, `pnpm -r test`), but its script
 * may as well run one package, a subset or a lint, and the line does not say which — so a root pass leaves a
 * package's failure standing, and a package's pass a root failure.
 *
 * Why: the agent re-runs a failing test narrowly, fixes it, then runs the suite; the suite's pass shows the
 * failure fixed, and a handoff that still lists it sends the next model after a problem that is gone.
 *
 * @category analysis
 */
export const covers = (
  later: string,
  earlier: string,
  directories: { readonly later?: string | undefined; readonly earlier?: string | undefined } = {}
): boolean => {
  const before = remembered(earlier, false, directories.earlier ?? "")
  const after = remembered(later, true, directories.later ?? "")
  const failed = before?.[0]
  return failed !== undefined && after?.some((taken) => scopeCovers(taken, failed)) === true
}

/** Counting stages: `wc` (lines, words or bytes) and `grep -c` / `rg --count` (matching lines). */
const COUNT_RE =
  /^(?:wc\b|(?:e|f)?grep\s(?:.*\s)?(?:-[a-zA-Z]*c[a-zA-Z]*|--count)\b|rg\s(?:.*\s)?(?:-c|--count(?:-matches)?)\b)/
/**
 * Words of the test runners' and compilers' failure lines: `FAILED` / `FAIL` (pytest, jest, go), `failed`,
 * `error` (`error TS2345`, `error[E0308]`), `panicked` (Rust), `Traceback`, `not ok` (TAP), and the marks
 * jest, vitest, mocha and node's runner print before a failed test (`✕`, `×`, `✗`, `✘`, `✖`, `❌`).
 */
const FAILURE_MARK_RE = /fail|error|exception|panic|traceback|not ok|[✕×✗✘✖❌]/i

/** The alternatives of a grep step's pattern (`-e` each, `a|b` and BRE `a\|b` split), or none for an inverted grep. */
const patternsOf = (step: string): Array<string> => {
  const words = ShellWords.words(step).slice(1)
  if (words.some((word) => /^-[a-zA-Z]*v/.test(word) || word === "--invert-match")) return []
  const given = words.flatMap((word, at) => (words[at - 1] === "-e" ? [word] : []))
  const patterns = given.length > 0 ? given : words.filter((word) => !word.startsWith("-")).slice(0, 1)
  return patterns.flatMap((pattern) => pattern.replace(/^\(|\)$/g, "").split(/\\?\|/))
}

/** A quiet search stage (`grep -q`, `--quiet`, `--silent`; `rg -q`): it prints nothing and answers by its exit status. */
const QUIET_RE = /^(?:(?:e|f)?grep|rg)\s(?:.*\s)?(?:-[a-zA-Z]*q[a-zA-Z]*|--quiet|--silent)(?:\s|$)/

/**
 * A check piped into a quiet search ({@link QUIET_RE}): the pipeline's status is the search's — 0 when a line
 * matched — so a search for failure lines only ({@link FAILURE_MARK_RE}) fails the check when the harness reports
 * success (the search stage as its error: it is what matched) and passes it when the harness reports the status 1;
 * any other search (`grep -q passed`, `grep -vq`) ran with its outcome unknown — its empty output tells nothing.
 */
const quietOutcome = (stage: string, outcome: ToolActions.Outcome, output: string): ToolActions.Outcome => {
  const patterns = patternsOf(stage)
  if (patterns.length === 0 || !patterns.every((pattern) => FAILURE_MARK_RE.test(pattern)))
    return { _tag: "unknown", text: output }
  return outcome._tag === "ok" ? { _tag: "failed", error: stage } : { _tag: "ok", text: output }
}

/** The number a counting stage printed: the output's one line (a harness's exit-code line and `Error:` left out). */
const countIn = (output: string): number | undefined => {
  const lines = output
    .split("\n")
    .map((line) => line.trim())
    .filter((line) => line.length > 0 && !/\bexit(?:ed)?(?: with)? (?:code|status)\b/i.test(line))
  const number = lines.length === 1 ? /^(?:Error:\s*)?(\d+)$/.exec(lines[0]!)?.[1] : undefined
  return number === undefined ? undefined : Number(number)
}

/**
 * How a check ended when an output filter hid its exit status — a pipeline's status is its last program's (POSIX
 * `sh` without `pipefail`), so `npm test | grep -c FAIL` exits 0 whenever grep counted a line — read off what it
 * showed; `undefined` when the harness's outcome stands (no check, no filter at the end, no result).
 * - A counting stage at the end (`grep -c PATTERN`, `… | grep PATTERN | wc -l`) printed a number: a count of
 *   failure lines ({@link FAILURE_MARK_RE}) above 0 fails, with the count as its error; 0 passes (also when only
 *   some alternatives mark failures: `grep -cE "error|warning"` → 0); anything else — a count of every line or of
 *   other lines, failures counted beside other lines, no number — ran with its outcome unknown.
 * - A quiet search at the end (`| grep -q FAIL`): its exit status is the answer ({@link quietOutcome}).
 * - Another filter (`| tail -5`, `| grep "error TS"`): the first error line the output shows fails it
 *   (`IdentifierExtraction.errorLines`); none leaves the harness's outcome.
 *
 * @category getters
 */
export const shownOutcome = (
  line: string,
  outcome: ToolActions.Outcome,
  output: string
): ToolActions.Outcome | undefined => {
  const steps = ShellCommand.steps(line)
  const last = steps.at(-1)
  if (outcome._tag === "unknown" || last === undefined || !ShellCommand.isOutputFilter(last)) return undefined
  if (ShellCommand.kindOf(line) !== "check") return undefined
  if (QUIET_RE.test(last.text)) return quietOutcome(last.text, outcome, output)
  if (!COUNT_RE.test(last.text)) {
    const error = outcome._tag === "ok" ? IdentifierExtraction.errorLines(output, 1)[0] : undefined
    return error === undefined ? undefined : { _tag: "failed", error }
  }
  const counted = /^wc\b/.test(last.text) ? steps.at(-2) : last
  const grep = counted !== undefined && counted.operator === "|" && /^(?:e|f)?grep\s|^rg\s/.test(counted.text)
  const patterns = grep ? patternsOf(counted.text) : []
  const marks = patterns.filter((pattern) => FAILURE_MARK_RE.test(pattern)).length
  const count = countIn(output)
  if (count === 0 && marks > 0) return { _tag: "ok", text: output }
  if (count !== undefined && count > 0 && marks > 0 && marks === patterns.length)
    return { _tag: "failed", error: String(count) }
  return { _tag: "unknown", text: output }
}
