/**
 * How the offline checkpoint reads test and check runs (`CheckRun`): a later
 * passing run of the same tool on a scope that covers an earlier failed run
 * supersedes the failure — in one range and across an iterative update —
 * while a narrower or unrelated pass does not; and a check whose output
 * went through a counting filter is read by the count it printed (failure
 * lines above 0 fail, 0 passes, any other count is an unknown outcome), not
 * by the filter's exit status. Small built conversations, then the real
 * transcripts that show each (../shared/transcripts).
 */
import { Checkpoint, CriticalIdentifiers, SubAgentWork, ToolActions } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Import from "../../transcripts/src/importers/Import.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import { type CoveredItem, mergeContent } from "../src/Summarizer.ts"
import { assistant, calls, editRun as edit, results, shellRun as run, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)
const summarize = (covered: ReadonlyArray<CoveredItem>) =>
  ExtractiveSummarizer.summarizeSync({ covered, kept: [], maxTokens: 4_000, countTokens: count })

const FAILURE = "FAILED tests/test_a.py::test_x - AssertionError: assert 1 == 2"

/** A failed narrow run, a fix, then `later` passing. */
const fixedThen = (failed: string, later: string) =>
  withIds([
    user("Fix the failing test in tests/test_a.py."),
    ...run(failed, `${FAILURE}\n1 failed in 0.12s`, true),
    ...edit("src/a.py"),
    ...run(later, "12 passed in 0.40s"),
    assistant("Done.")
  ])

describe("a passing run of the same tool on a covering scope supersedes a failed run", () => {
  it("`pytest tests/test_a.py::test_x` failed, then its file, its directory, the suite or the test again passed: no failed approach, no failure to resolve", () => {
    for (const later of ["pytest tests/", "pytest tests/test_a.py", "pytest -q", "pytest tests/test_a.py::test_x -v"]) {
      const covered = fixedThen("pytest tests/test_a.py::test_x", later)
      const content = summarize(covered)
      expect([later, content.failedApproaches ?? []]).toEqual([later, []])
      expect(content.nextSteps.join("\n")).not.toContain("Resolve the failure")
      expect(content.progress.done).toContain(`checks pass: \`${later}\``)
      // The validator's unresolved errors follow the same rule: a summary need not keep a fixed error.
      expect(CriticalIdentifiers.unresolvedErrors(ToolActions.actionsOf(covered))).toEqual([])
    }
  })

  it("a narrower or unrelated pass leaves the failure standing (`pytest tests/` failed, `pytest tests/test_a.py::test_x` passed)", () => {
    for (const [failed, later] of [
      ["pytest tests/", "pytest tests/test_a.py::test_x"],
      ["pytest tests/test_a.py::test_x", "pytest tests/test_b.py"],
      ["pytest tests/test_a.py::test_x", 'pytest tests/ -k "not test_x"'],
      ["pytest tests/test_a.py::test_x", "npm test"]
    ]) {
      const content = summarize(fixedThen(failed!, later!))
      expect([later, (content.failedApproaches ?? []).join("\n")]).toEqual([
        later,
        expect.stringContaining(`\`${failed}\` failed`)
      ])
      expect(content.nextSteps.join("\n")).toContain("Resolve the failure the work stopped at")
    }
  })
})

describe("iterative update: a later range's passing check supersedes the earlier range's failed check", () => {
  const content = (failed: ReadonlyArray<string>, done: ReadonlyArray<string>): Checkpoint.CheckpointContent => ({
    ...Checkpoint.emptyContent(),
    progress: { done: [...done], inProgress: [], blocked: [] },
    failedApproaches: [...failed]
  })

  it("a covering pass drops the failure; a narrower pass, a cut command and a declined call stay", () => {
    const earlier = content(
      [
        `bash \`pytest tests/test_a.py::test_x\` failed: ${FAILURE}`,
        `bash \`pytest tests/test_b.py\` failed (2 attempts): FAILED tests/test_b.py::test_y`,
        "bash `cd pkg && npm test -- a.test.ts` failed: FAIL src/a.test.ts",
        "bash `pytest tests/test_c.py` declined by the user: [Operation Cancelled]",
        "bash `git push origin main` failed: rejected"
      ],
      []
    )
    const merged = mergeContent(earlier, content([], ["checks pass: `pytest tests/`", "checks pass: `npm test`"]))
    expect(merged.failedApproaches).toEqual([
      "bash `cd pkg && npm test -- a.test.ts` failed: FAIL src/a.test.ts",
      "bash `pytest tests/test_c.py` declined by the user: [Operation Cancelled]",
      "bash `git push origin main` failed: rejected"
    ])
  })

  it("each run is read in the directory its line names: a root pass leaves a package's failure, the package's pass drops it", () => {
    const earlier = content(["Bash `npm test` in `packages/core` failed: FAIL src/a.test.ts"], [])
    expect(mergeContent(earlier, content([], ["checks pass: `npm test`"])).failedApproaches).toEqual([
      "Bash `npm test` in `packages/core` failed: FAIL src/a.test.ts"
    ])
    expect(
      mergeContent(earlier, content([], ["checks pass: `npm test` in `packages/core`"])).failedApproaches ?? []
    ).toEqual([])
  })
})

describe("a check read through a counting filter", () => {
  it("`pytest -q 2>&1 | grep -c FAILED` printing 3 is a failed approach, not a passing check", () => {
    const content = summarize(
      withIds([
        user("Fix the failing tests."),
        ...edit("src/a.py"),
        ...run("pytest -q 2>&1 | grep -c FAILED", "3\n"),
        assistant("Three tests still fail.")
      ])
    )
    expect(content.failedApproaches).toEqual(["bash `pytest -q 2>&1 | grep -c FAILED` failed: 3"])
    expect(content.progress.done.join("\n")).not.toContain("checks pass")
  })

  it("a count of 0 passes, though grep's exit status 1 came back as an error", () => {
    const content = summarize(
      withIds([
        user("Fix the failing tests."),
        ...edit("src/a.py"),
        ...run(`npm test 2>&1 | grep -c "✗"`, "0\n\nCommand exited with code 1", true),
        assistant("No failures left.")
      ])
    )
    expect(content.failedApproaches ?? []).toEqual([])
    expect(content.progress.done).toContain('checks pass: `npm test 2>&1 | grep -c "✗"`')
  })

  it("a count of every line is an outcome unknown: listed to be run again, neither passed nor failed", () => {
    const content = summarize(
      withIds([
        user("Fix the failing tests."),
        ...edit("src/a.py"),
        ...run("npm test 2>&1 | wc -l", "      57\n"),
        assistant("Let me look.")
      ])
    )
    expect(content.failedApproaches ?? []).toEqual([])
    expect(content.progress.done.join("\n")).not.toContain("checks pass")
    expect(content.progress.blocked).toEqual([
      "bash `npm test 2>&1 | wc -l` ran, but its output filter hid whether it passed (it printed `57`, e3): outcome unknown — run it without the filter before relying on it"
    ])
  })
})

const messagesOf = async (file: string): Promise<Array<CoveredItem>> =>
  (await Import.importFilePromise(transcript(file))).transcript.entries.flatMap((entry) =>
    entry.kind === "message" ? [{ entryId: entry.id, message: entry.message }] : []
  )

describe("real transcripts", () => {
  it("Claude Code console: the test id run that selected nothing is superseded by `pytest -xvs -k …` passing", async () => {
    // Day 20: `pytest -xvs specs/cli_spec.py::…::it_shows_recently_read_books_with_progress -k "never_opened"` came
    // back "1 deselected / 0 selected" (pytest's exit status 5); "Wrong test path" — `pytest -xvs -k
    // "never_opened"` passed, then the whole suite with coverage.
    const items = (await messagesOf("claude-code-console/bookminder-day-020.md")).filter((item) => {
      const at = Number.parseInt(item.entryId.replace(/^\D+/, ""), 10)
      return at >= 6590 && at <= 6760
    })
    const failed = (summarize(items).failedApproaches ?? []).join("\n")
    expect(failed).not.toContain("it_shows_recently_read_books_with_progress")
  })

  it("Claude Code: a sub-agent's Bash kept `cd types` — the directory its later `pwd` printed is the one its calls start in", async () => {
    const { entries } = (
      await Import.importFilePromise(transcript("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl"))
    ).transcript
    const work = [...SubAgentWork.byMessage(entries).values()].find((messages) =>
      JSON.stringify(messages).includes("cd types && npx tsc")
    )!
    const actions = ToolActions.actionsOf(work.map((message, index) => ({ entryId: `s${index}`, message })))
    const pwd = actions.find((action) => action.command === "pwd && ls -la")!
    // What the shell itself printed: the first line of `pwd`'s output.
    const printed = pwd.outcome._tag === "ok" ? pwd.outcome.text.split("\n")[0] : undefined
    expect(printed).toBe("/path/to/Demo/todo-app/types")
    expect(pwd.directory).toBe(printed)
    // The Bash call that failed there wrote `types/README.md` from inside `types` (a path the shell no longer had).
    const readme = actions.find((action) => action.command?.startsWith("cat > types/README.md") === true)!
    expect([readme.outcome._tag, readme.directory]).toEqual(["failed", printed])
  })

  it('pi: `npm run check 2>&1 | grep "error TS" | wc -l` printing 11 failed — it is not a passing check', async () => {
    const items = await messagesOf("pi/large-session.jsonl")
    const end = items.findIndex((item) => JSON.stringify(item.message).includes(`grep \\"error TS\\" | wc -l`))
    const content = summarize(items.slice(0, end + 2))
    expect(content.progress.done.join("\n")).not.toContain("wc -l")
    expect(content.failedApproaches).toContainEqual(
      expect.stringMatching(
        /^bash `cd packages\/coding-agent && npm run check 2>&1 \| grep "error TS" \| wc -l` failed(?: \(\d+ attempts\))?: 11$/
      )
    )
  })
})

describe("a run is read in the directory its harness's shell started it in", () => {
  /** One call of the shell tool `name` and its result. */
  let id = 0
  const shell = (name: string, command: string, text: string, error = false) => {
    const call = `dir_${id++}`
    return [calls({ id: call, name, input: { command } }), results({ id: call, name, text, error })]
  }
  const failing = "FAIL src/a.test.ts\n1 failed"

  it("Claude Code's Bash keeps a cd: a bare `npm test` after `cd packages/core` is the package's run", () => {
    const content = summarize(
      withIds([
        user("Fix the core tests."),
        ...shell("Bash", "cd packages/core && npm test -- a.test.ts", failing, true),
        ...edit("packages/core/src/a.ts"),
        ...shell("Bash", "npm test", "12 passed"),
        assistant("Done.")
      ])
    )
    expect(content.failedApproaches ?? []).toEqual([])
    expect(content.progress.done).toContain("checks pass: `npm test` in `packages/core`")
  })

  it("Claude Code's Bash: the package's failure stands after a pass back at the root, and says where it ran", () => {
    const content = summarize(
      withIds([
        user("Fix the core tests."),
        ...shell("Bash", "cd packages/core", ""),
        ...shell("Bash", "npm test", failing, true),
        ...edit("packages/core/src/a.ts"),
        ...shell("Bash", "cd ../..", ""),
        ...shell("Bash", "npm test", "12 passed"),
        assistant("Done.")
      ])
    )
    expect(content.failedApproaches).toEqual(["Bash `npm test` in `packages/core` failed: FAIL src/a.test.ts"])
    expect(content.progress.done).toContain("checks pass: `npm test`")
  })

  it("a shell tool we cannot tell (`bash`): after a cd call, the same line again is in doubt and the failure stands", () => {
    const content = summarize(
      withIds([
        user("Fix the core tests."),
        ...shell("bash", "cd packages/core", ""),
        ...shell("bash", "npm test", failing, true),
        ...edit("packages/core/src/a.ts"),
        ...shell("bash", "cd ../..", ""),
        ...shell("bash", "npm test", "12 passed"),
        assistant("Done.")
      ])
    )
    expect((content.failedApproaches ?? []).join("\n")).toContain("`npm test` failed")
  })

  it("Gemini CLI's shell starts every call afresh: a cd call moves nothing, the re-run supersedes the failure", () => {
    const content = summarize(
      withIds([
        user("Fix the tests."),
        ...shell("run_shell_command", "cd packages/core", ""),
        ...shell("run_shell_command", "npm test -- a.test.ts", failing, true),
        ...edit("src/a.ts"),
        ...shell("run_shell_command", "npm test", "12 passed"),
        assistant("Done.")
      ])
    )
    expect(content.failedApproaches ?? []).toEqual([])
  })
})

describe("quiet checks answer by their exit status", () => {
  it("a false `test -f` is no failed approach, a true `[ -e … ]` no work done", () => {
    const content = summarize(
      withIds([
        user("Build it."),
        ...edit("src/a.ts"),
        ...run("test -f dist/a.js", "Error: Exit code 1", true),
        ...run("[ -e dist/b.js ]", ""),
        assistant("Done.")
      ])
    )
    expect(content.failedApproaches ?? []).toEqual([])
    expect(content.progress.done.join("\n")).not.toContain("dist/")
  })

  it("a check piped into `grep -q FAIL` that exited 0 found a failure line: a failure to resolve", () => {
    const content = summarize(
      withIds([user("Fix the tests."), ...edit("src/a.ts"), ...run("npm test 2>&1 | grep -q FAIL", ""), assistant("?")])
    )
    expect(content.failedApproaches).toEqual(["bash `npm test 2>&1 | grep -q FAIL` failed: grep -q FAIL"])
    expect(content.progress.done.join("\n")).not.toContain("checks pass")
  })
})
