/**
 * ShellWords: a command's words as the shell reads them, and a long command
 * shown in a few characters by verbatim pieces — its long paths by their
 * last two components, so the verb, flags and SQL survive.
 */
import { ShellWords } from "@context-engine/core"
import { describe, expect, it } from "vitest"

describe("ShellWords.words", () => {
  it("splits outside quotes and removes them; an open quote runs to the end", () => {
    expect(ShellWords.words(`sqlite3 "my db.sqlite" 'SELECT "a"' x\\ y "say \\"hi\\""`)).toEqual([
      "sqlite3",
      "my db.sqlite",
      'SELECT "a"',
      "x y",
      'say "hi"'
    ])
    expect(ShellWords.words(`sed -i '' "DELETE FROM t…`)).toEqual(["sed", "-i", "", "DELETE FROM t…"])
  })
})

describe("ShellWords.lines", () => {
  it("splits at line breaks outside quotes, joins continuations, leaves out here-document bodies and comments", () => {
    const script = [
      "cd src",
      "# fix the imports",
      `git commit -m "a`,
      "",
      `b"`,
      "cat > /tmp/x.py << 'EOF'",
      "import os",
      "EOF",
      "python3 /tmp/x.py \\",
      "  --verbose",
      ""
    ].join("\n")
    expect(ShellWords.lines(script)).toEqual([
      "cd src",
      `git commit -m "a\n\nb"`,
      "cat > /tmp/x.py << 'EOF'",
      "python3 /tmp/x.py   --verbose"
    ])
  })
})

describe("ShellWords.abbreviated", () => {
  const command =
    `sqlite3 /Users/me/Developer/BookMinder/specs/fixtures/users/test_reader/Library/BKLibrary/books.sqlite ` +
    `"DELETE FROM ZBKLIBRARYASSET WHERE rowid != 2"`

  it("a command that fits is one piece", () => {
    expect(ShellWords.abbreviated("git status", 20)).toEqual({ pieces: ["git status"], cut: false })
  })

  it("a long path is shown by its last two components; every piece is a substring of the command", () => {
    const shown = ShellWords.abbreviated(command, 80)
    expect(shown).toEqual({
      pieces: ["sqlite3", `/BKLibrary/books.sqlite "DELETE FROM ZBKLIBRARYASSET WHERE rowid != 2"`],
      cut: false
    })
    for (const piece of shown.pieces) expect(command).toContain(piece)
  })

  it("the longest path goes first; when no path is left the end is cut; pieces shorten again", () => {
    const copy = "cp ./a/b/c/d/short.txt /Users/me/projects/site/public/assets/img/logo-final.png --verbose"
    expect(ShellWords.abbreviated(copy, 70)).toEqual({
      pieces: ["cp ./a/b/c/d/short.txt", "/img/logo-final.png --verbose"],
      cut: false
    })
    const again = ShellWords.abbreviated(ShellWords.abbreviated(command, 80).pieces, 40)
    expect(again).toEqual({ pieces: ["sqlite3", `/BKLibrary/books.sqlite "DELET`], cut: true })
  })

  it("a long dotted module path (a unittest test id) is shown by its last two components, like a file path", () => {
    // aider's chat history: the user's run of the one new regression test, in a Done item's short form.
    const test = "python -m unittest tests.basic.test_main.TestMain.test_apply_shell_commands"
    expect(ShellWords.abbreviated(test, 57)).toEqual({
      pieces: ["python -m unittest", "TestMain.test_apply_shell_commands"],
      cut: false
    })
    // A dotted name of fewer than four components (a file name, `os.path.join`) is not shortened.
    expect(ShellWords.abbreviated("python -c 'import os.path.join' --verbose --long-flag", 40).pieces).toHaveLength(1)
  })
})
