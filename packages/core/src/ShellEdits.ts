/**
 * The files a shell step edits in place: `sed -i` and `perl -i` rewrite the
 * files they name — an edit of those files as much as an editor tool's, so
 * `ShellCommand.editedFiles` reports them and a handoff lists the file as
 * edited instead of an opaque `sed` line.
 *
 * The argument forms are the tools' own: GNU sed's `-i[SUFFIX]` /
 * `--in-place[=SUFFIX]` and BSD sed's `-i SUFFIX` (an empty `''` or a `.bak`
 * word after `-i`), the script as the first operand unless `-e` / `-f` give
 * it, the files after it (sed(1), POSIX XCU sed); perl's `-i[extension]`
 * among its single-letter switches (`-pi`, `-i.bak -pe`), its code after
 * `-e` / `-E`, the files after it (perlrun).
 *
 * @since 0.6.0
 */
import * as ShellWords from "./ShellWords.ts"

/** A BSD sed suffix word after `-i`: empty (`-i ''`) or a backup extension (`-i .bak`). */
const BSD_SUFFIX_RE = /^(?:|\.[\w.~-]*)$/

/** The files of `sed ARGS` when it edits in place. */
const sedFiles = (args: ReadonlyArray<string>): Array<string> => {
  const files: Array<string> = []
  let inPlace = false
  let script = false
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!
    if (/^--in-place(?:=.*)?$/.test(arg)) inPlace = true
    else if (/^--(?:expression|file)$/.test(arg)) [at, script] = [at + 1, true]
    else if (/^--(?:expression|file)=/.test(arg)) script = true
    else if (/^-[a-zA-Z]/.test(arg) && !arg.startsWith("--")) {
      if (arg.startsWith("-i") || /^-[a-zA-Z]*i/.test(arg)) inPlace = true
      if (/^-[a-zA-Z]*i$/.test(arg) && at + 1 < args.length && BSD_SUFFIX_RE.test(args[at + 1]!)) at++
      else if (!arg.startsWith("-i") && /[ef]$/.test(arg)) [at, script] = [at + 1, true]
    } else if (arg.startsWith("--")) continue
    else if (script) files.push(arg)
    else script = true
  }
  return inPlace ? files : []
}

/** The files of `perl ARGS` when it edits in place (`-i` among its switches). */
const perlFiles = (args: ReadonlyArray<string>): Array<string> => {
  const files: Array<string> = []
  let inPlace = false
  let code = false
  for (let at = 0; at < args.length; at++) {
    const arg = args[at]!
    if (/^-[a-zA-Z0-9]/.test(arg)) {
      // Switches before -i that take no value: -p -n -l -a -0 (perlrun).
      if (/^-[pnla0-9]*i/.test(arg)) inPlace = true
      if (/^-[pnla0-9]*(?:i[^eE]*)?[eE]$/.test(arg)) [at, code] = [at + 1, true]
    } else if (code) files.push(arg)
    else code = true
  }
  return inPlace ? files : []
}

/**
 * The files one step edits in place (see the module docs), as the step
 * names them — not a glob or a variable; empty for any other step.
 *
 * @category getters
 */
export const inPlaceFiles = (step: string): Array<string> => {
  const [program = "", ...args] = ShellWords.words(step)
  const name = program.replace(/^.*\//, "")
  const files = name === "sed" || name === "gsed" ? sedFiles(args) : name === "perl" ? perlFiles(args) : []
  // A pattern or a variable (`src/*.ts`, `"$f"`) names files the shell finds, not one the line names.
  return files.filter((file) => !/[*?[{$`]/.test(file))
}
