/**
 * The offline checkpoint's Done lists work, not verification: a check run
 * (tests, type-check, lint, build) reports the state the work left and
 * staging only drafts a commit, so neither is listed as done — except the
 * checks that passed after the last change, once each, as "checks pass".
 * A side effect chained after a check or staging still counts. A failed
 * check stays a failure until a later run of the same check supersedes it.
 */
import type { Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import type { CoveredItem } from "../src/Summarizer.ts"
import { assistant, calls, editRun as edit, results, shellRun as run, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)
const summarize = (covered: ReadonlyArray<CoveredItem>) =>
  ExtractiveSummarizer.summarizeSync({ covered, kept: [], maxTokens: 4_000, countTokens: count })

describe("done: checks and staging are not work done", () => {
  it("check runs before the last change and staging commands are left out; the commit is listed", () => {
    const content = summarize(
      withIds([
        user("Make the parser accept tabs, then commit it."),
        ...edit("src/parser.ts"),
        ...run("npm run check 2>&1 | tail -3", "Found 0 errors."),
        ...run("npm run build", "built in 1.2s"),
        ...edit("src/lexer.ts"),
        ...run("git add src/parser.ts src/lexer.ts", ""),
        ...run("git restore --staged src/lexer.ts", ""),
        ...run("git add -A && git commit -m 'parser: accept tabs'", "[main 1a2b3c4] parser: accept tabs"),
        assistant("Committed.")
      ])
    )
    const done = content.progress.done.join("\n")
    expect(done).toContain("edited `src/parser.ts`")
    expect(done).toContain("edited `src/lexer.ts`")
    expect(done).toContain("1a2b3c4")
    expect(done).not.toContain("npm run check")
    expect(done).not.toContain("npm run build")
    expect(done).not.toContain("git restore --staged")
    expect(done).not.toContain("ran `git add src/parser.ts")
  })

  it("the checks that passed after the last change are one line each, at their newest run", () => {
    const content = summarize(
      withIds([
        user("Fix the failing test."),
        ...run("npm test", "1 failed", true),
        ...edit("src/a.ts"),
        ...run("npm test", "Tests: 12 passed"),
        ...run("npm run lint", "No problems."),
        ...run("npm test", "Tests: 12 passed"),
        assistant("All green.")
      ])
    )
    expect(content.progress.done.filter((item) => item.startsWith("checks pass:"))).toEqual([
      "checks pass: `npm run lint`",
      "checks pass: `npm test`"
    ])
  })

  it("a side effect chained after a check or staging is work: `npm run build && cp …` is listed", () => {
    const content = summarize(
      withIds([
        user("Publish the docs build."),
        ...run("npm run build && cp -r dist ../site/docs", "copied 14 files"),
        assistant("Published.")
      ])
    )
    expect(content.progress.done.join("\n")).toContain("ran `npm run build && cp -r dist ../site/docs`")
  })

  it("a failed check the work never ran again stays a failed approach", () => {
    const content = summarize(
      withIds([
        user("Fix the type errors."),
        ...edit("src/a.ts"),
        ...run("npx tsc --noEmit", "src/a.ts(3,1): error TS2304: Cannot find name 'x'.", true),
        assistant("One error left.")
      ])
    )
    expect((content.failedApproaches ?? []).join("\n")).toContain("error TS2304")
    expect(content.progress.done.join("\n")).not.toContain("checks pass")
  })
})

describe("failed approaches: a re-run with another output filter supersedes the failure", () => {
  it("`npm run check 2>&1 | tail -5` failed, then `… | tail -3` passed: no failed approach, no failure to resolve", () => {
    const content = summarize(
      withIds([
        user("Make the check pass."),
        ...run("cd pkg && npm run check 2>&1 | tail -5", "npm error command failed\nnpm error command sh -c tsgo"),
        ...edit("src/a.ts"),
        ...run("cd pkg && npm run check 2>&1 | tail -3", "Waiting for the debugger to disconnect..."),
        assistant("The check passes.")
      ])
    )
    expect(content.failedApproaches ?? []).toEqual([])
    expect(content.nextSteps.join("\n")).not.toContain("Resolve the failure")
    expect(content.progress.done).toContain("checks pass: `cd pkg && npm run check 2>&1 | tail -3`")
  })

  it('a last run through `| grep "error TS"` that printed type errors is the failure that stands', () => {
    const content = summarize(
      withIds([
        user("Make the check pass."),
        ...run("npm run check 2>&1 | tail -5", "npm error command failed"),
        ...edit("src/a.ts"),
        ...run(`npm run check 2>&1 | grep "error TS"`, "src/a.ts(3,1): error TS2304: Cannot find name 'x'."),
        assistant("One error left.")
      ])
    )
    const failed = (content.failedApproaches ?? []).join("\n")
    expect(failed).toContain("error TS2304")
    expect(failed).not.toContain("tail -5")
    expect(content.progress.done.join("\n")).not.toContain("checks pass")
  })

  it("a text-action agent's script re-run without its filter supersedes the filtered failure", () => {
    const act = (command: string) => assistant(`Running it.\n\n\`\`\`\n${command}\n\`\`\``)
    const output = (text: string) => user(`${text}\n(Open file: /repo/a.py)\n(Current directory: /repo)\nbash-$`)
    const content = summarize(
      withIds([
        user("Fix the crash in load()."),
        act("python reproduce.py 2>&1 | tail -20"),
        output("Traceback (most recent call last):\nValueError: bad input"),
        act("python reproduce.py"),
        output("Result: True")
      ])
    )
    expect((content.failedApproaches ?? []).join("\n")).not.toContain("reproduce.py")
  })
})

describe("failed approaches: a console Shell re-run with another description is the same command", () => {
  it("Gemini CLI's `pytest --spec (…)` that failed is superseded by a later `pytest --spec (…)` that passed", () => {
    const shell = (id: string, summary: string, text: string): Array<Message.Message> => [
      calls({ id, name: "Shell", input: { summary } }),
      results({ id, name: "Shell", text })
    ]
    const content = summarize(
      withIds([
        user("Fix the failing spec."),
        ...shell(
          "s1",
          "pytest --spec (Run all tests to understand the requirements.)",
          "E AssertionError: assert 1 == 2\n1 failed"
        ),
        ...edit("specs/a_spec.py"),
        ...shell("s2", "pytest --spec (Run all tests to verify the fix.)", "12 passed"),
        assistant("All specs pass.")
      ])
    )
    expect((content.failedApproaches ?? []).join("\n")).not.toContain("pytest")
    expect(content.progress.done).toContain("checks pass: `pytest --spec`")
  })
})
