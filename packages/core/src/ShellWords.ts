/**
 * The words of a shell command and its display in a few characters: the
 * argument reading `ShellCommand` classifies a step by (the SQL a database
 * shell runs, the files an in-place edit rewrites), and the abbreviation a
 * handoff shows a long command by.
 *
 * Words follow the POSIX shell's quoting (XCU 2.2): whitespace outside
 * quotes separates words, single quotes keep everything, double quotes keep
 * everything but `\"`, `\\`, `\$` and `` \` `` escapes, a backslash outside
 * quotes escapes the next character. Expansions are left as written.
 *
 * @since 0.6.0
 */

/**
 * The words of a command step with their quotes removed (see the module
 * docs); a quote the text leaves open (a command cut short) runs to its end.
 *
 * @category getters
 */
export const words = (text: string): Array<string> => {
  const out: Array<string> = []
  let word = ""
  let inWord = false
  let quote: string | undefined
  for (let at = 0; at < text.length; at++) {
    const char = text[at]!
    if (quote !== undefined) {
      if (char === quote) quote = undefined
      else if (char === "\\" && quote === '"' && /["\\$`]/.test(text[at + 1] ?? "")) word += text[++at]
      else word += char
    } else if (/\s/.test(char)) {
      if (inWord) out.push(word)
      word = ""
      inWord = false
    } else {
      inWord = true
      if (char === "'" || char === '"') quote = char
      else if (char === "\\" && at + 1 < text.length) word += text[++at]
      else word += char
    }
  }
  if (inWord) out.push(word)
  return out
}

/** A here-document's operator and its delimiter word (`<< 'EOF'`, `<<-END`; not a `<<<` here-string). */
const HEREDOC_RE = /(?<!<)<<(?!<)-?\s*(['"]?)([\w.-]+)\1/g

/**
 * Whether a script holds a here-document's operator (`<< 'EOF'`, `<<-END`; not a `<<<` here-string).
 *
 * @category guards
 */
export const hasHereDocument = (script: string): boolean => new RegExp(HEREDOC_RE.source).test(script)

/**
 * The command lines of a shell script, trimmed: split at line breaks outside quotes (a quoted commit message or
 * `python -c "…"` stays one line), a backslash-newline joined, the body of each here-document left out — a body is
 * the data of its line, up to the line holding only its delimiter (POSIX XCU 2.7.4) — and blank and comment lines
 * left out.
 *
 * @category getters
 */
export const lines = (script: string): Array<string> => {
  const out: Array<string> = []
  let start = 0
  const push = (end: number): number => {
    const line = script.slice(start, end).replace(/\\\n/g, "").trim()
    if (line.length > 0 && !line.startsWith("#")) out.push(line)
    let next = end + 1
    for (const [, , delimiter] of line.matchAll(HEREDOC_RE)) next = afterBody(script, next, delimiter!)
    return next
  }
  eachUnquoted(script, (at, char) => {
    if (char !== "\n") return undefined
    start = push(at)
    return start
  })
  if (start < script.length) push(script.length)
  return out
}

/**
 * Visits each character of `text` outside quotes (single, double, backtick; a
 * backslash escapes the next character, inside double quotes too), in order:
 * `visit` returns where to go on from, or `undefined` for the next character.
 * The one quote-aware scan of command text (`lines`, `ShellCommand.steps`).
 *
 * @category utils
 */
export const eachUnquoted = (text: string, visit: (at: number, char: string) => number | undefined): void => {
  let quote: string | undefined
  let at = 0
  while (at < text.length) {
    const char = text[at]!
    if (quote !== undefined) {
      if (char === "\\" && quote === '"') at++
      else if (char === quote) quote = undefined
    } else if (char === "\\") at++
    else if (char === "'" || char === '"' || char === "`") quote = char
    else {
      const next = visit(at, char)
      if (next !== undefined) {
        at = next
        continue
      }
    }
    at++
  }
}

/** Where a script goes on after a here-document's body that starts at `from`: after the line of only its delimiter. */
const afterBody = (script: string, from: number, delimiter: string): number => {
  for (let line = from; line < script.length; ) {
    const end = script.indexOf("\n", line)
    const next = end < 0 ? script.length : end
    if (script.slice(line, next).trim() === delimiter) return next + 1
    line = next + 1
  }
  return script.length
}

/**
 * A command shown in pieces: verbatim substrings of the command in order,
 * with text left out between each two (a path's head); `cut` when the end
 * is left out too.
 *
 * @category models
 */
export interface Abbreviation {
  readonly pieces: ReadonlyArray<string>
  readonly cut: boolean
}

/**
 * A path of three components or more (`a/b/c`, `/Users/x/project/src/a.ts`,
 * `./specs/fixtures/run.sh`), its last component possibly cut by a console
 * (`…/Documents/BKL…`).
 */
const LONG_PATH_RE = /(?<![\w.~/@+-])(?:~|\.{1,2})?\/?(?:[\w.@+-]+\/){2,}[\w.@+\u2026-]*/g

/**
 * A dotted name of four components or more (`tests.basic.test_main.TestMain.test_apply`, `com.example.app.Main`):
 * a module path as Python's `-m` and unittest's test ids, or Java's packages, write it — like a file path, its
 * tail names the thing (the test, the class).
 */
const DOTTED_NAME_RE = /(?<![\w./~@+-])(?:[A-Za-z_]\w*\.){3,}[A-Za-z_]\w*(?![\w/.-])/g

/** Characters an abbreviation takes: its pieces and ` …` for each gap between them. */
const length = (pieces: ReadonlyArray<string>): number =>
  pieces.reduce((sum, piece) => sum + piece.length, 0) + 2 * (pieces.length - 1)

/** The longest path in the pieces whose head can go, as [piece index, start, end, kept tail start]. */
const longestPath = (pieces: ReadonlyArray<string>): [number, number, number, number] | undefined => {
  let best: [number, number, number, number] | undefined
  pieces.forEach((piece, index) => {
    for (const match of piece.matchAll(LONG_PATH_RE)) {
      const path = match[0].replace(/\/$/, "")
      // The last two components, with the slash before them: `…/fixtures/run.sh`.
      const tail = path.lastIndexOf("/", path.lastIndexOf("/") - 1)
      if (tail < 2 || (best !== undefined && path.length <= best[2] - best[1])) continue
      best = [index, match.index, match.index + path.length, match.index + tail]
    }
    for (const match of piece.matchAll(DOTTED_NAME_RE)) {
      const name = match[0]
      // The last two components, without the dot before them: `…TestMain.test_apply`.
      const tail = name.lastIndexOf(".", name.lastIndexOf(".") - 1) + 1
      if (best !== undefined && name.length <= best[2] - best[1]) continue
      best = [index, match.index, match.index + name.length, match.index + tail]
    }
  })
  return best
}

/**
 * A command in at most `maxChars` characters (its pieces and one `…` with a
 * space per gap), its verb, flags and other arguments kept: while it is
 * longer, the longest path of three components or more (or dotted name of
 * four or more) is shown by its last
 * two (`sqlite3 /Users/me/app/data/books.sqlite "SELECT …"` → pieces
 * `sqlite3`, `/data/books.sqlite "SELECT …"`); when no path is left to
 * shorten, the end is cut. Every piece stays a verbatim substring of the
 * command — a handoff quotes each on its own, so each still occurs in the
 * transcript. Takes pieces so an abbreviation can be shortened again.
 *
 * @category getters
 */
export const abbreviated = (from: ReadonlyArray<string> | string, maxChars: number): Abbreviation => {
  const pieces = typeof from === "string" ? [from] : [...from]
  while (length(pieces) > maxChars) {
    const path = longestPath(pieces)
    if (path === undefined) break
    const [index, start, , tail] = path
    const piece = pieces[index]!
    pieces.splice(index, 1, piece.slice(0, start).trimEnd(), piece.slice(tail))
  }
  const over = length(pieces) - maxChars
  if (over <= 0) return { pieces, cut: false }
  const last = pieces[pieces.length - 1]!
  pieces[pieces.length - 1] = last.slice(0, Math.max(0, last.length - over - 1)).trimEnd()
  return { pieces, cut: true }
}
