/**
 * ShellCommand: what counts as work in a shell call — a database shell's run
 * is a look or a change by the SQL it runs; `sed -i` / `perl -pi -e` edit
 * the files they name (ToolActions lists them as edits of those files);
 * writing a throwaway script in the temporary directory is setup, and a
 * here-document's script is told by the run that follows its body.
 */
import { ShellCommand, ShellEdits, ToolActions } from "@context-engine/core"
import { describe, expect, it } from "vitest"

const kinds = (lines: ReadonlyArray<string>) => lines.map((line) => [line, ShellCommand.kindOf(line)])

describe("ShellCommand.kindOf: a database shell by its SQL", () => {
  it("queries, schema reads and display settings are looks; a change, SQL not on the line or a cut line is a command", () => {
    const looks = [
      `sqlite3 data/app.sqlite "SELECT id, title FROM books WHERE title LIKE '%; DROP%';"`,
      `sqlite3 -header -column /Users/me/db.sqlite ".headers on" ".mode column" "SELECT * FROM t"`,
      "sqlite3 app.db .schema",
      `sqlite3 app.db "PRAGMA table_info(ZBKLIBRARYASSET);"`,
      `sqlite3 app.db "WITH recent AS (SELECT * FROM t) SELECT count(*) FROM recent"`,
      `psql -d shop -c "SELECT count(*) FROM orders"`,
      `psql -Atc '\\dt'`,
      `mysql -u root -e "SHOW TABLES; DESCRIBE users"`,
      `mysql --execute="select 1"`,
      `sqlite3 app.db "SELECT * FROM t" | head -5`
    ]
    expect(kinds(looks)).toEqual(looks.map((line) => [line, "look"]))
    const commands = [
      `sqlite3 app.db "DELETE FROM books WHERE rowid != 2"`,
      `sqlite3 app.db "SELECT 1; UPDATE t SET x = 1"`,
      `sqlite3 app.db "PRAGMA user_version = 3"`,
      `sqlite3 app.db "WITH old AS (SELECT id FROM t) DELETE FROM t WHERE id IN old"`,
      `sqlite3 app.db ".mode csv" ".import data.csv t"`,
      "sqlite3 app.db < schema.sql",
      "sqlite3 app.db",
      `psql -c "CREATE TABLE t (id int)"`,
      "psql -f migrate.sql",
      `mysql -e "DROP TABLE users"`,
      `sqlite3 app.db "SELECT * FROM t" > out.csv`,
      `sqlite3 /Users/me/db.sqlite ".headers on" ".mode column…`
    ]
    expect(kinds(commands)).toEqual(commands.map((line) => [line, "command"]))
  })
})

describe("ShellCommand.kindOf: scratch files are setup", () => {
  it("writing a file in the temporary directory only sets up; a project file is still written", () => {
    const setup = ["cat > /tmp/fix.py << 'EOF'", "git diff > /tmp/patch.diff", "echo x > $TMPDIR/a"]
    expect(kinds(setup)).toEqual(setup.map((line) => [line, "look"]))
    expect(ShellCommand.kindOf("cat > src/fix.py << 'EOF'")).toBe("command")
    expect(ShellCommand.kindOf("echo done > /tmpfile")).toBe("command")
  })
})

describe("ShellCommand.headline: the line a script is told by", () => {
  it("the run after the body, not the line that writes the throwaway script", () => {
    const script = "cat > /tmp/fix.py << 'EOF'\nimport re\nopen('a.ts', 'w').write('x')\nEOF\npython3 /tmp/fix.py"
    expect(ShellCommand.headline(script)).toBe("python3 /tmp/fix.py")
    expect(ShellCommand.headline("cd pkg && cat > /tmp/fix.sed <<-END\n\ts/a/b/\n\tEND\n")).toBe(
      "cd pkg && cat > /tmp/fix.sed <<-END"
    )
  })

  it("a body line that looks like a command is data; a script without here-documents is its first line", () => {
    expect(ShellCommand.headline("cat > /tmp/notes.txt << EOF\nrm -rf build\nEOF\nls /tmp")).toBe(
      "cat > /tmp/notes.txt << EOF"
    )
    expect(ShellCommand.headline("cd pkg\nnpm test")).toBe("cd pkg")
    expect(ToolActions.inputCommand({ command: "cat > /tmp/f.py << 'EOF'\nx = 1\nEOF\npython3 /tmp/f.py" })).toBe(
      "python3 /tmp/f.py"
    )
  })
})

describe("ShellEdits / ShellCommand.editedFiles: in-place edits by shell", () => {
  it("sed -i (GNU and BSD forms) and perl -i name the files they rewrite", () => {
    expect(ShellEdits.inPlaceFiles(`sed -i '' 's/new Editor()/new Editor(theme)/g' test/editor.test.ts`)).toEqual([
      "test/editor.test.ts"
    ])
    expect(ShellEdits.inPlaceFiles("sed -i 's/a/b/' a.txt b.txt")).toEqual(["a.txt", "b.txt"])
    expect(ShellEdits.inPlaceFiles("sed -i.bak -e 's/a/b/' -e 's/c/d/' conf.ini")).toEqual(["conf.ini"])
    expect(ShellEdits.inPlaceFiles("sed --in-place -E 's/a+/b/' x.md")).toEqual(["x.md"])
    expect(ShellEdits.inPlaceFiles("perl -pi -e 's/foo/bar/g' src/a.pl src/b.pl")).toEqual(["src/a.pl", "src/b.pl"])
    expect(ShellEdits.inPlaceFiles("perl -i.bak -pe 's/x/y/' a.txt")).toEqual(["a.txt"])
  })

  it("sed and perl without -i only print", () => {
    expect(ShellEdits.inPlaceFiles("sed 's/a/b/' a.txt")).toEqual([])
    expect(ShellEdits.inPlaceFiles("sed -n '1,5p' a.txt")).toEqual([])
    expect(ShellEdits.inPlaceFiles("perl -pe 's/a/b/' a.txt")).toEqual([])
    // A glob or a variable names no file: the shell finds them.
    expect(ShellEdits.inPlaceFiles(`sed -i '' 's/a/b/' src/*.ts "$f"`)).toEqual([])
  })

  it("a line whose only work is in-place edits edits those files; other work makes it a command", () => {
    expect(ShellCommand.editedFiles("cd packages/tui && sed -i '' '/undefined,$/d' test/md.test.ts")).toEqual([
      "test/md.test.ts"
    ])
    expect(ShellCommand.editedFiles("sed -i 's/a/b/' a.ts && npm test")).toEqual(["a.ts"])
    expect(ShellCommand.editedFiles("sed -i 's/a/b/' a.ts && git commit -am x")).toEqual([])
    expect(ShellCommand.editedFiles("sed 's/a/b/' a.ts")).toEqual([])
  })

  it("ToolActions: an in-place edit is an edit of its file", () => {
    const [action] = ToolActions.actionsOf([
      {
        entryId: "e1",
        message: {
          role: "assistant",
          content: [
            {
              type: "tool-call",
              toolCallId: "c1",
              toolName: "bash",
              input: { command: "sed -i '' 's/(a), 0, 0)/(a, 0, 0, theme)/g' packages/tui/test/md.test.ts" }
            }
          ]
        }
      }
    ])
    expect([action?.kind, action?.path]).toEqual(["edit", "packages/tui/test/md.test.ts"])
  })

  it("ToolActions: a script of in-place edits after a here-document is an edit of each file it names", () => {
    const script = [
      "cat > /tmp/imports.sed << 'EOF'",
      's|from "../config.js"|from "../utils/config.js"|g',
      "EOF",
      "sed -i '' -f /tmp/imports.sed core/session.ts core/bash.ts"
    ].join("\n")
    const actions = ToolActions.actionsOf([
      {
        entryId: "e1",
        message: {
          role: "assistant",
          content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: script } }]
        }
      }
    ])
    expect(actions.map((action) => [action.kind, action.path])).toEqual([
      ["edit", "core/session.ts"],
      ["edit", "core/bash.ts"]
    ])
  })
})
