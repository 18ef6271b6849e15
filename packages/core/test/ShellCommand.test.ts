/**
 * ShellCommand: what a command line does — a look, a check (tests,
 * type-check, lint, build), staging (git's index only) or a command — by its
 * strongest step, so a side effect hidden in a chain or a pipe still counts;
 * and ToolActions' classification of shell calls by it (a check and staging
 * are side effects whose failure matters, but not work done).
 */
import { ShellCommand, ToolActions } from "@context-engine/core"
import { describe, expect, it } from "vitest"

describe("ShellCommand.steps", () => {
  it("splits at &&, ||, ;, & and | outside quotes and brackets; 2>&1 is a redirection", () => {
    expect(ShellCommand.steps(`cd pkg && npm run check 2>&1 | grep -E "(error|success)" | head -20`)).toEqual([
      { text: "cd pkg", operator: "" },
      { text: "npm run check 2>&1", operator: "&&" },
      { text: `grep -E "(error|success)"`, operator: "|" },
      { text: "head -20", operator: "|" }
    ])
    expect(ShellCommand.steps("a || b; c & d")).toEqual([
      { text: "a", operator: "" },
      { text: "b", operator: "||" },
      { text: "c", operator: ";" },
      { text: "d", operator: "&" }
    ])
    expect(ShellCommand.steps(`find . -exec rm {} \\; ; echo 'x;y'`).map((step) => step.text)).toEqual([
      "find . -exec rm {} \\;",
      "echo 'x;y'"
    ])
  })
})

describe("ShellCommand.kindOf", () => {
  const kinds = (lines: ReadonlyArray<string>) => lines.map((line) => [line, ShellCommand.kindOf(line)])

  it("verification runs are checks, through runners, prefixes and output filters", () => {
    const checks = [
      "npm run check",
      "cd packages/coding-agent && npm run check 2>&1 | tail -5",
      `npm run check 2>&1 | grep "error TS"`,
      "npm run build 2>&1 | tail -3",
      "pnpm test:unit",
      "npm test",
      "yarn lint",
      "npx tsc --noEmit",
      "pytest tests/test_a.py -x",
      "python -m pytest -q",
      "FOO=1 timeout 30 cargo test",
      "go vet ./... && go test ./internal/...",
      "ruff check .",
      "make",
      "npm test > /dev/null 2>&1",
      "source .venv/bin/activate && pytest --spec",
      ". venv/bin/activate; python -m pytest"
    ]
    expect(kinds(checks)).toEqual(checks.map((line) => [line, "check"]))
  })

  it("index-only git commands are staging; a destructive restore or a reset of HEAD is not", () => {
    const staging = [
      "git add docs/a.md",
      "git add --patch docs/a.md",
      "git restore --staged src/a.py",
      "git rm --cached secrets.env",
      "git reset HEAD src/a.py",
      "git reset"
    ]
    expect(kinds(staging)).toEqual(staging.map((line) => [line, "stage"]))
    expect(ShellCommand.kindOf("git restore docs/a.md")).toBe("command")
    expect(ShellCommand.kindOf("git reset HEAD~1")).toBe("command")
    expect(ShellCommand.kindOf("git reset --hard")).toBe("command")
  })

  it("a side effect hidden in a chain, a pipe or a redirection makes the line a command", () => {
    const commands = [
      "npm run build && cp dist/a.js ../site/",
      "git add -A && git commit -m 'wip'",
      "npm test | tee test.log",
      "echo done > status.txt",
      "cat > fix.py << 'EOF'",
      "ls && rm -rf build",
      "find . -name '*.pyc' -delete",
      "find . -name '*.pyc' -exec rm {} \\;",
      "eslint --fix src",
      "npm run lint:fix",
      "vitest run -u",
      "python reproduce.py",
      "./scripts/deploy.sh",
      "source env.sh && ./migrate.sh",
      "make install"
    ]
    expect(kinds(commands)).toEqual(commands.map((line) => [line, "command"]))
  })

  it("reading lines stay looks; a > inside quotes writes nothing", () => {
    const looks = [
      "git status",
      "git diff HEAD~1 | head -50",
      `grep -n "a > b" src/a.ts`,
      "find . -name '*.ts' | xargs grep -l Theme",
      "cd src && ls -la"
    ]
    expect(kinds(looks)).toEqual(looks.map((line) => [line, "look"]))
  })

  it("quiet tests that answer only by their exit status are looks", () => {
    const looks = ["test -f dist/index.js", "[ -e build/app.js ]", "[[ -d node_modules ]]", "cmp -s a.txt b.txt"]
    expect(kinds(looks)).toEqual(looks.map((line) => [line, "look"]))
  })
})

describe("ToolActions: checks and staging are side effects, not work", () => {
  const actions = ToolActions.actionsOf([
    {
      entryId: "e1",
      message: {
        role: "assistant",
        content: [
          { type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "npm run check 2>&1 | tail -3" } },
          {
            type: "tool-call",
            toolCallId: "c2",
            toolName: "Shell",
            input: { summary: "git add docs/a.md (Stage it.)" }
          },
          { type: "tool-call", toolCallId: "c3", toolName: "bash", input: { command: "git add -A && git commit -m x" } }
        ]
      }
    }
  ])

  it("classifies each call by its command line", () => {
    expect(actions.map((action) => action.kind)).toEqual(["check", "stage", "command"])
  })

  it("isSideEffect keeps all three (a failed check is a failure); isWork only the commit", () => {
    expect(actions.map(ToolActions.isSideEffect)).toEqual([true, true, true])
    expect(actions.map(ToolActions.isWork)).toEqual([false, false, true])
  })
})

describe("ShellCommand.withoutOutputFilters: the command a re-run with another output filter runs again", () => {
  it("drops pure filters piped after the last command and the redirections that end it", () => {
    expect(ShellCommand.withoutOutputFilters("cd pkg && npm run check 2>&1 | tail -5")).toBe("cd pkg && npm run check")
    expect(ShellCommand.withoutOutputFilters(`cd pkg && npm run check 2>&1 | grep "error TS" | wc -l`)).toBe(
      "cd pkg && npm run check"
    )
    expect(ShellCommand.withoutOutputFilters(`npm run check 2>&1 | grep -E "(error|success)" | head -20`)).toBe(
      "npm run check"
    )
    expect(ShellCommand.withoutOutputFilters("python reproduce.py > /dev/null 2>&1")).toBe("python reproduce.py")
  })

  it("keeps a pipe that writes or acts, and a filter before a later command", () => {
    expect(ShellCommand.withoutOutputFilters("npm test 2>&1 | tee test.log")).toBe("npm test 2>&1 | tee test.log")
    expect(ShellCommand.withoutOutputFilters("git ls-files | xargs rm")).toBe("git ls-files | xargs rm")
    expect(ShellCommand.withoutOutputFilters("npm test | tail -3 > last.txt")).toBe("npm test | tail -3 > last.txt")
    expect(ShellCommand.withoutOutputFilters("make | tail -3 && cp a b")).toBe("make | tail -3 && cp a b")
    expect(ShellCommand.withoutOutputFilters("sort -o out.txt")).toBe("sort -o out.txt")
  })
})

describe("ShellCommand.fromDisplay: the command of Gemini CLI's one-line Shell display", () => {
  it("drops the model's description, the directory and the background mark", () => {
    expect(ShellCommand.fromDisplay("pytest --spec (Run all tests with spec output to verify the fix.)")).toBe(
      "pytest --spec"
    )
    expect(ShellCommand.fromDisplay("npm test [in web] (Run the tests (unit only).) [background]")).toBe("npm test")
    expect(ShellCommand.fromDisplay("git add docs/a.md (Stage the latest changes to docs/a.md and the")).toBe(
      "git add docs/a.md"
    )
  })

  it("keeps parentheses that are part of the command", () => {
    expect(ShellCommand.fromDisplay(`grep -E "(error|success)" log.txt`)).toBe(`grep -E "(error|success)" log.txt`)
    expect(ShellCommand.fromDisplay("(cd web && npm test)")).toBe("(cd web && npm test)")
    expect(ShellCommand.fromDisplay("echo $(date)")).toBe("echo $(date)")
  })
})
