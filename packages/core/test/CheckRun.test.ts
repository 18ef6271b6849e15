/**
 * CheckRun: what a check run covered — a later passing run of the same tool
 * on the same or a broader scope covers an earlier one — and how a check
 * ended when an output filter hid its exit status (a count of failure lines,
 * the error lines shown).
 */
import { CheckRun, ToolActions } from "@context-engine/core"
import { describe, expect, it } from "vitest"

describe("CheckRun.covers: a passing run covers an earlier run of the same tool on the same or a narrower scope", () => {
  it("the same test id with other flags, its file, its directory, the whole suite", () => {
    const failed = "pytest tests/test_a.py::test_x -x"
    for (const later of [
      "pytest tests/test_a.py::test_x -v",
      "pytest tests/test_a.py",
      "pytest tests/",
      "pytest ./tests",
      "pytest",
      "pytest -q --cov=pkg --cov-report=term-missing",
      "python -m pytest tests",
      "source .venv/bin/activate && pytest tests/"
    ])
      expect([later, CheckRun.covers(later, failed)]).toEqual([later, true])
  })

  it("a narrower, a sibling or another tool's run covers nothing", () => {
    for (const [later, failed] of [
      ["pytest tests/test_a.py::test_x", "pytest tests/"],
      ["pytest tests/test_b.py", "pytest tests/test_a.py::test_x"],
      ["pytest tests/test_a.py::test_xy", "pytest tests/test_a.py::test_x"],
      ["npm test", "pytest tests/"],
      ["npm run lint", "npm test"],
      ["pytest tests/unit", "pytest"]
    ])
      expect([later, failed, CheckRun.covers(later!, failed!)]).toEqual([later, failed, false])
  })

  it("a selecting option the earlier run lacked narrows the later run; the earlier run's own selection is covered", () => {
    expect(CheckRun.covers(`pytest -k "never_opened"`, `pytest specs/cli_spec.py::test_list -k "never_opened"`)).toBe(
      true
    )
    expect(CheckRun.covers("pytest", `pytest specs/cli_spec.py -k "never_opened"`)).toBe(true)
    expect(CheckRun.covers(`pytest -k "never_opened"`, "pytest specs/cli_spec.py")).toBe(false)
    expect(CheckRun.covers("pytest --lf", "pytest tests/test_a.py")).toBe(false)
    expect(CheckRun.covers("npx vitest run -t parser", "npx vitest run src/a.test.ts")).toBe(false)
    expect(CheckRun.covers("cargo test -p core", "cargo test")).toBe(false)
  })

  it("runners, package scripts and go's package patterns", () => {
    expect(CheckRun.covers("npm run test", "npm test -- truncated-text.test.ts")).toBe(true)
    expect(CheckRun.covers("npx vitest run", "vitest run src/a.test.ts")).toBe(true)
    expect(CheckRun.covers("go test ./...", "go test ./internal/parser")).toBe(true)
    expect(CheckRun.covers("go test ./internal/...", "go test ./internal/parser -run TestX")).toBe(true)
    // `go test` tests the current directory's package only.
    expect(CheckRun.covers("go test", "go test ./internal/parser")).toBe(false)
    expect(CheckRun.covers("go test ./internal", "go test ./internal/parser")).toBe(false)
    expect(CheckRun.covers("cargo test", "cargo test parser::tests::tabs")).toBe(true)
  })

  it("only in the same directory, only when the line returned the check's status, not when the earlier line did work", () => {
    expect(CheckRun.covers("cd pkg && npm test", "cd pkg && npm test -- a.test.ts")).toBe(true)
    expect(CheckRun.covers("npm test", "cd pkg && npm test -- a.test.ts")).toBe(false)
    expect(CheckRun.covers("pytest; echo done", "pytest tests/test_a.py")).toBe(false)
    expect(CheckRun.covers("pytest || true", "pytest tests/test_a.py")).toBe(false)
    expect(CheckRun.covers("pytest 2>&1 | tail -5", "pytest tests/test_a.py")).toBe(true)
    expect(CheckRun.covers("pip install -e . && pytest", "pytest tests/test_a.py")).toBe(true)
    expect(CheckRun.covers("pytest", "pip install -e . && pytest tests/test_a.py")).toBe(false)
    expect(CheckRun.covers("npm run build && npm test", "npm run build && npm test -- a.test.ts")).toBe(true)
    // A failed chain is read by its last check, as any failed chain is (`CriticalIdentifiers.isSuperseded`).
    expect(CheckRun.covers("npm test", "npm run build && npm test")).toBe(true)
    expect(CheckRun.covers("npm run build", "npm run build && npm test")).toBe(false)
  })
})

describe("CheckRun.covers: each line read in the directory it started in", () => {
  it("a bare run after an earlier call's kept cd is the package's run, not the root's", () => {
    expect(CheckRun.covers("npm test", "cd packages/core && npm test -- a.test.ts", { later: "packages/core" })).toBe(
      true
    )
    expect(CheckRun.covers("npm test", "npm test -- a.test.ts", { earlier: "packages/core" })).toBe(false)
    expect(
      CheckRun.covers("cd ../.. && npm test", "npm test", { later: "packages/core", earlier: "packages/core" })
    ).toBe(false)
    expect(CheckRun.covers("cd ../.. && npm test", "npm test", { later: "packages/core", earlier: "" })).toBe(true)
  })

  it("a directory we cannot name covers only itself; a cd we cannot follow covers nothing", () => {
    expect(CheckRun.covers("npm test", "npm test -- a.test.ts", { later: "?1", earlier: "?1" })).toBe(true)
    expect(CheckRun.covers("npm test", "npm test -- a.test.ts", { later: "?2", earlier: "?1" })).toBe(false)
    expect(CheckRun.covers('cd "$PKG" && npm test', 'cd "$PKG" && npm test -- a.test.ts')).toBe(false)
    expect(CheckRun.covers("cd /repo && npm test", "cd /repo && npm test -- a.test.ts", { later: "?2" })).toBe(true)
  })

  it("a root run and a package's run do not cover each other (a root script's reach is not on the line)", () => {
    expect(CheckRun.covers("npm test", "cd packages/core && npm test")).toBe(false)
    expect(CheckRun.covers("cd packages/core && npm test", "npm test")).toBe(false)
  })
})

describe("CheckRun.shownOutcome: a filter hid the check's exit status", () => {
  const ok = (text: string): ToolActions.Outcome => ({ _tag: "ok", text })
  const failed: ToolActions.Outcome = { _tag: "failed", error: "Command exited with code 1" }

  it("a count of failure lines above 0 fails, with the count as its error", () => {
    expect(CheckRun.shownOutcome("pytest -q 2>&1 | grep -c FAILED", ok("3\n"), "3\n")).toEqual({
      _tag: "failed",
      error: "3"
    })
    expect(CheckRun.shownOutcome(`npm test | grep -c "✗"`, ok("2"), "2")).toEqual({ _tag: "failed", error: "2" })
    const counted = `cd packages/coding-agent && npm run check 2>&1 | grep "error TS" | wc -l`
    expect(CheckRun.shownOutcome(counted, ok("      11\n"), "      11\n")).toEqual({ _tag: "failed", error: "11" })
  })

  it("a count of 0 passes, also when grep's exit status 1 made the harness report a failure", () => {
    expect(CheckRun.shownOutcome("pytest 2>&1 | grep -c FAILED", ok("0"), "0")).toEqual({ _tag: "ok", text: "0" })
    const output = "0\n\nCommand exited with code 1"
    expect(CheckRun.shownOutcome("pytest 2>&1 | grep -c FAILED", failed, output)).toEqual({ _tag: "ok", text: output })
    expect(CheckRun.shownOutcome(`npm run check | grep -cE "(error|warning)"`, ok("0"), "0")?._tag).toBe("ok")
  })

  it("a count of every line, of other lines or of failures beside other lines, or no number: ran, outcome unknown", () => {
    for (const [line, output] of [
      ["npm test | wc -l", "57"],
      ["pytest | grep -c PASSED", "12"],
      ["pytest | grep -vc FAILED", "0"],
      [`npm run check | grep -cE "(error|warning)"`, "2"],
      ["pytest | grep -c FAILED", "grep: invalid option"]
    ])
      expect([line, CheckRun.shownOutcome(line!, ok(output!), output!)]).toEqual([
        line,
        { _tag: "unknown", text: output }
      ])
  })

  it("a quiet search for failure lines answers by its exit status: a match fails the check, none passes it", () => {
    expect(CheckRun.shownOutcome("npm test 2>&1 | grep -q FAIL", ok(""), "")).toEqual({
      _tag: "failed",
      error: "grep -q FAIL"
    })
    expect(CheckRun.shownOutcome(`pytest | grep -qE "FAILED|Error"`, failed, "")).toEqual({ _tag: "ok", text: "" })
    // A search for other lines, or an inverted one: its empty output tells nothing.
    expect(CheckRun.shownOutcome("pytest | grep -q passed", ok(""), "")).toEqual({ _tag: "unknown", text: "" })
    expect(CheckRun.shownOutcome("pytest | grep -qv FAILED", failed, "")).toEqual({ _tag: "unknown", text: "" })
  })

  it("a filtered check whose shown output holds an error line failed", () => {
    const output = "src/a.ts(3,1): error TS2304: Cannot find name 'x'.\n"
    expect(CheckRun.shownOutcome(`npm run check 2>&1 | grep "error TS"`, ok(output), output)).toEqual({
      _tag: "failed",
      error: "src/a.ts(3,1): error TS2304: Cannot find name 'x'."
    })
  })

  it("no error line, an unfiltered line (its exit status is its own), a command that is not a check: the harness's outcome", () => {
    const waiting = "Waiting for the debugger to disconnect..."
    expect(CheckRun.shownOutcome("npm run check 2>&1 | tail -3", ok(waiting), waiting)).toBe(undefined)
    expect(CheckRun.shownOutcome("npm run check", ok("error TS2304: x"), "error TS2304: x")).toBe(undefined)
    expect(CheckRun.shownOutcome("python app.py | tail -3", ok("ERROR: retrying"), "ERROR: retrying")).toBe(undefined)
    expect(CheckRun.shownOutcome("grep -c FAILED log.txt", ok("3"), "3")).toBe(undefined)
  })

  it("ToolActions reads a filtered check's outcome off its output", () => {
    const action = (command: string, value: string, isError = false) =>
      ToolActions.actionsOf([
        {
          entryId: "e1",
          message: {
            role: "assistant",
            content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command } }]
          }
        },
        {
          entryId: "e2",
          message: {
            role: "tool",
            content: [
              {
                type: "tool-result",
                toolCallId: "c1",
                toolName: "bash",
                output: isError ? { type: "error-text", value } : { type: "text", value }
              }
            ]
          }
        }
      ])[0]?.outcome
    expect(action(`npm run check | grep "error TS"`, "src/a.ts(3,1): error TS2304: Cannot find name 'x'.")).toEqual({
      _tag: "failed",
      error: "src/a.ts(3,1): error TS2304: Cannot find name 'x'."
    })
    expect(action("pytest -q 2>&1 | grep -c FAILED", "3")).toEqual({ _tag: "failed", error: "3" })
    expect(action("pytest -q 2>&1 | grep -c FAILED", "0", true)).toEqual({ _tag: "ok", text: "0" })
    expect(action("npm test 2>&1 | wc -l", "57")).toEqual({ _tag: "unknown", text: "57" })
  })
})
