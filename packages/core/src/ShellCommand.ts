/**
 * What a shell command line does, read off its text: the one home of the
 * command vocabulary `ToolActions` classifies calls by.
 *
 * A line is split into steps at `&&`, `||`, `;`, `&` and `|` outside quotes
 * and brackets ({@link steps}); each step is one of
 * - a **look** — it only reads (`ls`, `cat`, `grep`, `git status|diff|log|show`,
 *   `cd`, a pure output filter after a pipe, a database shell whose SQL only
 *   reads — `sqlite3 db "SELECT …"`, `.schema`, `psql -c '\dt'` — or sets up:
 *   a scratch file written in the temporary directory …);
 * - a **check** — it runs the project's verification and reports its state:
 *   tests, type-checks, lints, builds ({@link CHECK_RE});
 * - **staging** — it changes only git's index (`git add`, `git restore
 *   --staged`, `git rm --cached`, `git reset [HEAD] [-- paths]`): the draft of a
 *   commit, and the commit is the work;
 * - a **command** — anything else, and any step that writes a file by
 *   redirection (`> file`, `| tee file`), fixes what a checker found
 *   (`--fix`, `--write`, `-u`) or deletes (`find … -delete`); a line whose
 *   work is in-place edits (`sed -i`, `perl -pi -e`) edits the files it names
 *   ({@link editedFiles}).
 *
 * The line is as strong as its strongest step (command > check > staging >
 * look), so a side effect hidden in a chain or a pipe still counts:
 * `npm run build && cp …` and `git add -A && git commit …` are commands.
 *
 * A re-run is told by the line without its output filters
 * ({@link withoutOutputFilters}: `| tail -5`, `| grep "error TS"`, `2>&1`),
 * and a check whose filter hid its exit status is judged by the output it
 * showed (`CheckRun.shownOutcome`).
 *
 * Why a check is not done work: it reports the state the work left (the
 * peers' handoffs list what changed, and list verification as its result —
 * Claude Code's compact prompt keeps "errors and fixes", not every test
 * run); a failed check is still a failure to resolve. Staging is not done
 * work either: nothing is recorded until the commit.
 *
 * @since 0.6.0
 */
import * as ShellEdits from "./ShellEdits.ts"
import * as ShellWords from "./ShellWords.ts"

/** One step of a command line and the operator that joins it to the step before (`""` for the first). */
export interface Step {
  readonly text: string
  readonly operator: "" | "&&" | "||" | ";" | "&" | "|"
}

/**
 * The steps of a command line, split at `&&`, `||`, `;`, `&` and `|` outside
 * quotes, backslash escapes and brackets (`2>&1` and `&>` are redirections,
 * not operators); empty steps are left out.
 *
 * @category getters
 */
export const steps = (line: string): Array<Step> => {
  const out: Array<Step> = []
  let operator: Step["operator"] = ""
  let start = 0
  let depth = 0
  const push = (end: number, next: Step["operator"], skip: number): number => {
    const text = line.slice(start, end).trim()
    if (text.length > 0) out.push({ text, operator })
    operator = next
    start = end + skip
    return start
  }
  ShellWords.eachUnquoted(line, (at, char) => {
    if (char === "(" || char === "{") depth++
    else if ((char === ")" || char === "}") && depth > 0) depth--
    else if (depth > 0) return undefined
    else if (char === ";") push(at, ";", 1)
    else if (char === "|") {
      if (line[at + 1] === "|") return push(at, "||", 2)
      return push(at, "|", line[at + 1] === "&" ? 2 : 1)
    } else if (char === "&" && line[at - 1] !== ">" && line[at + 1] !== ">")
      return line[at + 1] === "&" ? push(at, "&&", 2) : push(at, "&", 1)
    return undefined
  })
  push(line.length, "", 0)
  return out
}

/**
 * The command of a shell call's one-line console display: Gemini CLI's Shell
 * tool shows `<command> [in <dir>] (<description>) [background]` (its
 * `ShellToolInvocation.getDescription`; newer versions print `[current
 * working directory …]` when no directory was given), and a console
 * transcript keeps only that line. The description is the model's own
 * sentence for the run ("(Run all tests to verify the fix.)"), different
 * at each run of the same command, so it is dropped: a parenthesis after a
 * space that opens with a capital letter and runs to the end of the line
 * (closed, or cut by the console's width).
 *
 * @category getters
 */
export const fromDisplay = (display: string): string => {
  let text = display.trim().replace(/\s+\[background\]$/, "")
  const closed = text.endsWith(")")
  const open = closed ? matchingOpen(text) : text.lastIndexOf(" (") + 1
  const rest = text.slice(open)
  if (open > 0 && text[open - 1] === " " && /^\([A-Z]/.test(rest) && (closed || !rest.includes(")")))
    text = text.slice(0, open)
  return text.replace(/\s+\[(?:in|current working directory) [^\]]*\]\s*$/, "").trimEnd()
}

/** The index of the `(` that the `)` ending `text` closes, or -1. */
const matchingOpen = (text: string): number => {
  let depth = 0
  for (let at = text.length - 1; at >= 0; at--) {
    if (text[at] === ")") depth++
    else if (text[at] === "(" && --depth === 0) return at
  }
  return -1
}

/**
 * Steps back into one line, joined by single spaces with the operators
 * between them (the first step's own operator left out: `["a", "&& b", "|
 * c"]` → `a && b | c`).
 *
 * @category getters
 */
export const joined = (parts: ReadonlyArray<Step>): string =>
  parts.map((step, index) => (index === 0 ? step.text : `${step.operator} ${step.text}`)).join(" ")

/** What one step or a whole line does (see the module docs), weakest first. */
export type Kind = "look" | "stage" | "check" | "command"

const RANK: Record<Kind, number> = { look: 0, stage: 1, check: 2, command: 3 }

/** Prefixes that only set up how the program runs: variable assignments, `time`, `timeout N`, `nice [-n N]`, `env`. */
const PREFIX_RE =
  /^(?:(?:\w+=(?:"[^"]*"|'[^']*'|\S*)|time|env|nice(?:\s+-n\s*-?\d+)?|timeout(?:\s+-\S+)*\s+\d+\w?)\s+)+/

/**
 * A step without the prefixes that only set up how its program runs (`CI=1 timeout 60 pytest` → `pytest`).
 *
 * @category getters
 */
export const withoutPrefixes = (step: string): string => step.replace(PREFIX_RE, "").trim()

/**
 * Steps that only look: the read-only programs, the shell's own bookkeeping (`cd`, `export`, `set`, and `source` /
 * `.` of a file — how a virtualenv or a project's variables are set up: `source .venv/bin/activate && pytest` is a
 * test run), the quiet tests that answer only by their exit status (`test -f a`, `[ -e a ]`, `[[ -d a ]]`, `cmp -s`,
 * `grep -q`: a false answer is a finding, not a failed approach, and a true one no work done), and SWE-agent's viewer
 * commands.
 */
const LOOK_RE =
  /^(?:cd|pushd|popd|export|set|source|\.|true|test|\[\[?|cmp|grep|egrep|fgrep|rg|ag|ls|ll|cat|bat|less|more|head|tail|find|fd|wc|pwd|which|whereis|type|echo|printf|tree|file|stat|du|df|env|ps|sed\s+-n|awk|sort|uniq|cut|tr|nl|column|diff|open|goto|scroll_(?:up|down)|search_(?:file|dir)|find_file|git\s+(?:status|diff|log|show|branch\s*$|branch\s+-[avr]|remote|blame|ls-files|rev-parse|config\s+--get))(?:\s|$)/

/**
 * Pure output filters: programs that, after a pipe, only cut, search, count
 * or page what the command before printed. They decide what the agent saw,
 * not what ran.
 */
const FILTER_RE = /^(?:tail|head|grep|egrep|fgrep|rg|less|more|wc|sort|uniq|cut|tr|nl|column|cat|sed\s+-n|awk)(?:\s|$)/

/**
 * Verification commands of the common toolchains — what their docs name
 * the test, type-check, lint and build entry points: package-manager
 * scripts named `test`, `check`, `lint`, `typecheck`, `types`, `tsc`,
 * `build`, `verify` (with a `:suffix`, as `test:unit`); pytest, unittest,
 * tox, nox, mypy, pyright, ruff check, flake8, pylint, black / isort
 * --check; vitest, jest, mocha, tsc, tsgo, eslint, biome check|lint|ci,
 * prettier --check; cargo test|check|build|clippy; go test|vet|build;
 * make (bare or test|check|lint|build|all); mvn / gradle
 * test|check|verify|build|compile; dotnet / swift test|build; deno
 * test|check|lint; rspec; phpunit — run directly or through npx, bunx,
 * `pnpm|npm|yarn exec`, `uv|poetry|pipenv|hatch run`, `bundle exec` or
 * `python -m`.
 */
export const CHECK_RE = new RegExp(
  "^(?:(?:npx|bunx|pnpx)\\s+|(?:pnpm|npm|yarn)\\s+exec\\s+|(?:uv|poetry|pipenv|hatch)\\s+run\\s+|bundle\\s+exec\\s+|python3?\\s+-m\\s+)?" +
    "(?:(?:npm|pnpm|yarn|bun)\\s+(?:run\\s+|run-script\\s+)?(?:test|t|check|lint|typecheck|type-check|types|tsc|build|verify)(?:[:-][\\w:-]*)?" +
    "|pytest|py\\.test|unittest|tox|nox|mypy|pyright|ruff\\s+check|flake8|pylint|(?:black|isort)\\s+(?:.*\\s)?--check(?:-only)?" +
    "|vitest|jest|mocha|tsc|tsgo|eslint|biome\\s+(?:check|lint|ci)|prettier\\s+(?:.*\\s)?(?:--check|-c)" +
    "|cargo\\s+(?:test|check|build|clippy)|go\\s+(?:test|vet|build)|make(?:\\s+(?:test|check|lint|build|all))?\\s*$" +
    "|(?:mvn|mvnw|\\./mvnw|gradle|\\./gradlew)\\s+(?:\\S+\\s+)*(?:test|check|verify|build|compile)|(?:dotnet|swift)\\s+(?:test|build)" +
    "|deno\\s+(?:test|check|lint)|rspec|phpunit|node\\s+--test)(?:\\s|$)"
)

/** Flags and script names that make a checker change files: it fixes or rewrites what it found. */
const FIXES_RE = /\s(?:--fix|--write|-u|--update(?:-?snapshots?)?)(?=\s|=|$)|[:-](?:fix|format)\b/

/** Commands that change only git's index (see the module docs). */
const STAGE_RE =
  /^git\s+(?:add|stage)\b|^git\s+restore\s+(?!.*(?:--worktree|-W\b))(?=.*(?:--staged|-S\b))|^git\s+rm\s+(?=.*--cached)|^git\s+reset(?:\s+(?:-q|--quiet))?(?:\s+HEAD)?(?:\s+--(?:\s.*)?|\s+HEAD\s+[^-\s].*)?$/

/**
 * An output redirection to a file (not `/dev/null`, not a descriptor): the step writes that file. A file in the
 * temporary directories (`/tmp`, `/var/tmp`, `$TMPDIR`, macOS's `/var/folders`) is scratch, setup as `cd` is. */
const WRITES_FILE_RE =
  /(?:^|[^<>&\d])\d?>>?\s*(?!\s*&|\s*\/dev\/null\b|(?:\/private)?\/(?:var\/)?tmp\/|(?:\/private)?\/var\/folders\/|\$\{?TMPDIR\b)\S/

/** A redirection of output away or onto another descriptor (`2>&1`, `> /dev/null`, `&>/dev/null`): it decides what is shown. */
const DISCARD_RE = /\s+(?:\d?>&\d|&>>?\s*\/dev\/null|\d?>>?\s*\/dev\/null)\s*$/

/** The text of a step outside its quotes, for flags and redirections (a `>` in a grep pattern writes nothing). */
const unquoted = (text: string): string => text.replace(/'[^']*'|"(?:\\.|[^"\\])*"/g, "''")

/**
 * SQL statements that only read or show: queries (`SELECT`, `VALUES`, a `WITH` that changes nothing), `EXPLAIN`,
 * MySQL's `SHOW` / `DESCRIBE` / `USE`, SQLite's `PRAGMA` without a value or one of its schema-introspection pragmas
 * (`table_info(t)`, `index_list(t)`, `integrity_check` … — sqlite.org/pragma.html; `PRAGMA x = v` and `PRAGMA x(v)`
 * of the others set), the sqlite3 shell's dot-commands that show the schema or set how results print (`.schema`,
 * `.tables`, `.headers on`, `.mode column`, `.dump` — sqlite.org/cli.html), and psql's describe and display
 * meta-commands (`\d t`, `\dt`, `\l`, `\x`).
 */
const READ_SQL_RE = new RegExp(
  "^(?:(?:select|values|with|explain|show|describe|desc|use)\\b" +
    "|pragma\\s+(?:\\w+\\.)?(?:\\w+\\s*$|(?:table_x?info|table_list|index_x?info|index_list|foreign_key_list|foreign_key_check|integrity_check|quick_check|database_list|collation_list|function_list|module_list|pragma_list|compile_options)\\b)" +
    "|\\.(?:schema|fullschema|tables?|indexe?s|indices|headers?|mode|width|separator|nullvalue|show|databases|dbinfo|dump|print|timer|echo|stats|help|lint|changes|eqp|bail)\\b" +
    "|\\\\(?:d[a-zA-Z]*\\+?|l\\+?|x|conninfo|timing|pset|echo|\\?)(?:\\s|$))",
  "i"
)
/** Words of a statement that change a database, for a `WITH` query (`WITH x AS (…) DELETE …`). */
const WRITE_SQL_RE = /\b(?:insert|update|delete|replace|merge|upsert|create|drop|alter|truncate)\b/i

/** Whether every statement of the SQL texts only reads ({@link READ_SQL_RE}); strings and identifiers in quotes left out. */
const onlyReads = (texts: ReadonlyArray<string>): boolean =>
  texts.length > 0 &&
  texts.every((text) => {
    const statements = text.startsWith(".") || text.startsWith("\\") ? [text] : unquoted(text).split(";")
    return statements
      .map((statement) => statement.trim())
      .filter((statement) => statement.length > 0)
      .every(
        (statement) => READ_SQL_RE.test(statement) && (!/^with\b/i.test(statement) || !WRITE_SQL_RE.test(statement))
      )
  })

/** sqlite3 / duckdb options that take a value (`-separator ,`); `-cmd` takes a statement. */
const SQLITE_VALUE_OPTION_RE =
  /^--?(?:init|separator|newline|nullvalue|vfs|mmap|maxsize|heap|lookaside|pagecache|escape)$/

/**
 * The SQL a database shell's arguments run, or `undefined` when they run none or what they run is not on the line
 * (a script file, standard input, an interactive session): sqlite3 and duckdb take the statements and dot-commands
 * after the database file (and `-cmd`'s), psql `-c` / `--command`, mysql and mariadb `-e` / `--execute` (their docs'
 * command-line forms). `-init` / `-f` / `--file` name a script, whose text is not here.
 */
const sqlOf = (program: string, args: ReadonlyArray<string>): Array<string> | undefined => {
  const sql: Array<string> = []
  const flag = program === "psql" ? "c" : "e"
  const long = program === "psql" ? "command" : "execute"
  let database = false
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!
    if (/^(?:-f|--file(?:=.*)?|--?init)$/.test(arg)) return undefined
    if (program === "sqlite3" || program === "duckdb") {
      if (/^--?cmd$/.test(arg)) sql.push(args[++at] ?? "")
      else if (SQLITE_VALUE_OPTION_RE.test(arg)) at++
      else if (arg.startsWith("-")) continue
      else if (database) sql.push(arg)
      else database = true
    } else if (arg === `--${long}` || new RegExp(`^-[a-zA-Z]*${flag}$`).test(arg)) sql.push(args[++at] ?? "")
    else if (arg.startsWith(`--${long}=`)) sql.push(arg.slice(long.length + 3))
    else if (arg.startsWith(`-${flag}`)) sql.push(arg.slice(2))
  }
  return sql.length > 0 ? sql : undefined
}

/**
 * A database shell's step by the SQL it runs ({@link sqlOf}): a look when every statement only reads
 * ({@link READ_SQL_RE}), else a command — also when the SQL is not on the line or the line is cut (a console's
 * `…` at its end may hide a later statement). `undefined` for any other program.
 */
const sqlKind = (step: string): Kind | undefined => {
  const [program = "", ...args] = ShellWords.words(step)
  const name = program
    .replace(/^.*\//, "")
    .replace(/^sqlite$/, "sqlite3")
    .replace(/^mariadb$/, "mysql")
  if (!/^(?:sqlite3|duckdb|psql|mysql)$/.test(name)) return undefined
  const sql = sqlOf(name, args)
  return sql !== undefined && !step.endsWith("\u2026") && onlyReads(sql) ? "look" : "command"
}

/**
 * What one step does (see the module docs); `piped` when it reads the
 * previous step's output, where a pure filter ({@link FILTER_RE}) only looks.
 *
 * @category getters
 */
export const stepKind = (text: string, piped = false): Kind => {
  const step = text.replace(PREFIX_RE, "").trim()
  const bare = unquoted(step)
  if (WRITES_FILE_RE.test(bare) || /^tee\b/.test(step) || /^find\s.*\s-delete\b/.test(bare)) return "command"
  const exec = /^(?:find\s.*\s-exec(?:dir)?|xargs(?:\s+-\S+)*)\s+(.*)$/.exec(bare)?.[1]
  if (exec !== undefined) return stepKind(exec) === "look" ? "look" : "command"
  if (LOOK_RE.test(step) || (piped && FILTER_RE.test(step))) return "look"
  const sql = sqlKind(step)
  if (sql !== undefined) return sql
  if (CHECK_RE.test(step)) return FIXES_RE.test(bare) ? "command" : "check"
  return STAGE_RE.test(step) ? "stage" : "command"
}

/**
 * Whether a step is a pure output filter after a pipe ({@link FILTER_RE}, writing no file, no `sort -o`).
 *
 * @category guards
 */
export const isOutputFilter = (step: Step): boolean =>
  step.operator === "|" &&
  FILTER_RE.test(step.text) &&
  !WRITES_FILE_RE.test(unquoted(step.text)) &&
  !/^sort\s(?:.*\s)?-o/.test(step.text)

/**
 * A command line without its output filters: the pure filters piped after
 * its last command ({@link FILTER_RE}: `| tail -5`, `| grep "error TS"`,
 * `| head -20`) and the redirections of output away or onto another
 * descriptor that end it (`2>&1`, `> /dev/null`), with the steps joined by
 * single spaces. A filter decides what the agent saw, not what ran: `npm run
 * check 2>&1 | tail -5` and `npm run check | grep "error TS"` run the same
 * check, so a later run supersedes an earlier one (`CriticalIdentifiers.targetOf`).
 * A pipe that writes or acts (`| tee log`, `| xargs rm`) is kept.
 *
 * @category getters
 */
export const withoutOutputFilters = (line: string): string => {
  const all = steps(line)
  let end = all.length
  while (end > 1 && isOutputFilter(all[end - 1]!)) end--
  let text = joined(all.slice(0, end))
  for (let stripped = text.replace(DISCARD_RE, ""); stripped !== text; stripped = text.replace(DISCARD_RE, ""))
    text = stripped
  return text
}

/**
 * What a command line does: its strongest step's kind (see the module docs).
 *
 * @category getters
 */
export const kindOf = (line: string): Kind =>
  steps(line).reduce<Kind>((kind, step) => {
    const own = stepKind(step.text, step.operator === "|")
    return RANK[own] > RANK[kind] ? own : kind
  }, "look")

/**
 * The files a command line edits in place (`ShellEdits`: `sed -i`, `perl -pi -e`), as it names them, when that is
 * all the work it does — its other steps only look, check or stage (`cd pkg && sed -i … a.ts && npm test`). Empty
 * for any other line: one with other work is a command.
 *
 * @category getters
 */
export const editedFiles = (line: string): Array<string> => {
  const files: Array<string> = []
  for (const step of steps(line)) {
    const edited = ShellEdits.inPlaceFiles(step.text.replace(PREFIX_RE, ""))
    if (edited.length > 0) files.push(...edited)
    else if (stepKind(step.text, step.operator === "|") === "command") return []
  }
  return [...new Set(files)]
}

/**
 * The command lines a script is read by: with here-documents, its lines outside their bodies (`ShellWords.lines`: a
 * body is the data of its line); else its first line (a multi-line script is still told by its first line). */
const commandLines = (script: string): Array<string> =>
  ShellWords.hasHereDocument(script) ? ShellWords.lines(script) : [script.split("\n")[0]!]

/**
 * The line that says what a shell call's script does: of its command lines, the first of the strongest kind —
 * writing a throwaway script (`cat > /tmp/fix.py << 'EOF'` … `EOF`) is the setup of the run that follows it
 * (`python3 /tmp/fix.py`).
 *
 * @category getters
 */
export const headline = (script: string): string => {
  const all = commandLines(script)
  return all.reduce((best, line) => (RANK[kindOf(line)] > RANK[kindOf(best)] ? line : best), all[0] ?? script.trim())
}

/**
 * A shell call's script as one command line for classifying it: its command lines joined with `;`, which a line
 * break is to the shell (POSIX XCU 2.9.3).
 *
 * @category getters
 */
export const asLine = (script: string): string => commandLines(script).join(" ; ")
