/**
 * What the offline checkpoint must not file as a decision or a constraint
 * (s6 new-user trial): the agent explaining something to the user is not a
 * decision, and error text or an account of the user's own situation is not
 * a rule. Small built conversations; each case is a kind of sentence, never
 * words of a particular transcript; each has a guard that the real thing of
 * the same shape is still kept.
 */
import { ToolActions, UserSpeech } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import * as Constraints from "../src/checkpoint/Constraints.ts"
import * as Decisions from "../src/checkpoint/Decisions.ts"
import { assistant, calls, results, user, withIds } from "./support.ts"

const decisionsOf = (text: string) =>
  Decisions.fromRange(withIds([user("set up the release script"), assistant(text)])).map((found) => found.decision)

describe("decisions are choices, not explanations", () => {
  it("a reason addressed to the user is an explanation", () => {
    expect(
      decisionsOf(
        'You\'re getting a "Permission denied" error because config.sh defines variables, it is not a command.'
      )
    ).toEqual([])
    expect(decisionsOf("Your build stops early since the lock file is stale.")).toEqual([])
  })

  it("a failure's cause is a finding, not a decision", () => {
    expect(decisionsOf("The previous command failed because the file was not staged.")).toEqual([])
    expect(decisionsOf("The import does not work since the module has no default export.")).toEqual([])
  })

  it("a clause that only points names no choice", () => {
    expect(decisionsOf("This is the crucial step, to avoid staging the generated fixture.")).toEqual([])
  })

  it("a finding — what a thing is doing, set against what was expected — is an observation, not a decision", () => {
    expect(decisionsOf("The config path is resolving to /home/app instead of /home/app/project.")).toEqual([])
    expect(decisionsOf("The tests are hitting the fallback branch rather than the cached one.")).toEqual([])
    expect(decisionsOf("The test failures are occurring because the option is None when no file is given.")).toEqual([])
    // A change the agent describes with "now" is what it made: still a decision.
    expect(decisionsOf("The test is now checking only the titles rather than their display order.")).toEqual([
      "The test is now checking only the titles"
    ])
  })

  it("a choice with its reason is still a decision — also one that works around an error", () => {
    expect(decisionsOf("We keep the retries in the client because the server drops idle connections.")).toEqual([
      "We keep the retries in the client"
    ])
    expect(decisionsOf("Wrap the parse error in a Result instead of throwing it.")).toEqual([
      "Wrap the parse error in a Result"
    ])
  })

  it("a reason stated before the agent's choice is a decision with that reason", () => {
    const found = Decisions.fromRange(
      withIds([
        user("create the app"),
        assistant(
          "Since no custom commands are available, I'll decompose the app into independent subtasks and run them in parallel."
        )
      ])
    )
    expect(found).toEqual([
      {
        decision: "Decompose the app into independent subtasks and run them in parallel.",
        rationale: "since no custom commands are available"
      }
    ])
    expect(decisionsOf("Because the server drops idle connections, we keep the retries in the client.")).toEqual([
      "We keep the retries in the client."
    ])
  })

  it("a choice stated with calls the user declined was refused, not made", () => {
    const session = (outcome: { text: string; error?: boolean }) =>
      Decisions.fromRange(
        withIds([
          user("make the fixture script find the database"),
          assistant("I will explicitly use /Users/me instead of $HOME."),
          calls({ id: "w1", name: "WriteFile", input: { path: "scripts/fixture.sh", content: "DB=/Users/me" } }),
          results({ id: "w1", name: "WriteFile", ...outcome }),
          user("now run it against the test database")
        ])
      ).map((found) => found.decision)
    expect(session({ text: "[Operation Cancelled]", error: true })).toEqual([])
    expect(session({ text: "Wrote scripts/fixture.sh" })).toEqual(["I will explicitly use /Users/me"])
  })

  it("a reason-first sentence whose other clause is not the agent's choice is a finding or narration", () => {
    expect(decisionsOf("Since the lock file is stale, the build stops early.")).toEqual([])
    expect(decisionsOf("Because the test failed, you should rerun it with the flag.")).toEqual([])
    // announcing a look is narration, whatever its reason
    expect(decisionsOf("Since the test failed, I'll check the logs.")).toEqual([])
  })
})

describe("constraints are the user's rules, not reported errors or their own situation", () => {
  const rules = (...texts: Array<string>) =>
    Constraints.fromSpeech(texts.map((text, index) => ({ entryId: `u${index}`, text }))).join("\n")

  it("error text the user pastes in a short message is not a rule, nor an insistence when pasted again", () => {
    const pasted = "Exception can only concatenate str (not int) to str"
    const handler = "Unhandled exception in event loop: label = prefix + item.style"
    const out = rules(pasted, handler, "ok", handler)
    expect(out).toBe("")
    expect(rules("TypeError: cannot read properties of undefined (reading 'only')")).toBe("")
  })

  it("a user's account of what they cannot do is not a rule for the agent", () => {
    expect(rules("I cannot paste it because the viewer shows only the last one.")).toBe("")
    expect(rules("I couldn't find it, the log keeps only a day of history.")).toBe("")
  })

  it("a correction keeps its directions and drops the user's verdict on what happened", () => {
    const out = rules(
      "No! That whole conclusion is bogus. Our long session was chasing one gap and we fixed a real issue. Run the full suite before you commit."
    )
    expect(out).toContain("Run the full suite before you commit.")
    expect(out).not.toContain("bogus")
    expect(out).not.toContain("long session")
  })

  it("an alarmed question after a bare 'Wait!!!' is not a rule; a direction after it is", () => {
    // Gemini CLI, bookminder day 16: "Wait!!! … What did you `rm` last time?!?!" was filed as a constraint.
    expect(rules("Wait!!! What did you `rm` last time?!?!")).toBe("")
    expect(rules("Wait! Don't delete the fixture database.")).toContain("Don't delete the fixture database.")
  })

  it("praise of what the agent did is not a rule, though it holds 'only'; the task after it is the user's ask", () => {
    // aider history: "that was smart, only using other_files and no chat_files." was filed as a constraint.
    expect(rules("that was smart, only using other_files and no chat_files.")).toBe("")
    expect(rules("Wow, this is really neat, only one pass.")).toBe("")
    expect(rules("it's better to only read the changed files.")).toContain(
      "it's better to only read the changed files."
    )
    expect(rules("that's right, but only keep the last run.")).toContain("only keep the last run")
  })

  it("'I want you to …' said once is the ask for now; said to recur, or with a rule word, it is a rule", () => {
    // Gemini CLI day 16: "Then I want you to summarize the current status …" was filed as a constraint.
    expect(rules("Then I want you to summarize the current status of our efforts and a brief plan.")).toBe("")
    expect(rules("I want you to run the linter before every commit.")).toContain("before every commit")
    expect(rules("I want you to only touch the fixtures.")).toContain("only touch the fixtures")
  })

  it("a correction that is the user's account of what they own is not a rule", () => {
    // Gemini CLI day 16: "No, I don't own Prag Prog, but asked for Extreme Programming Explained, can you see?"
    expect(rules("No, I don't own that book, but asked for the other one, can you see?")).toBe("")
    expect(rules("No, use the other book instead.")).toContain("use the other book instead")
  })

  it("rules that mention errors, and the user's own preferences, are still rules", () => {
    const out = rules(
      "Never swallow an exception, always log it.",
      "Error handling must go through the shared helper.",
      "I want the tests to run only on changed packages."
    )
    expect(out).toContain("Never swallow an exception")
    expect(out).toContain("Error handling must go through the shared helper.")
    expect(out).toContain("I want the tests to run only on changed packages.")
  })
})

describe('a "don\'t" that names a thing is not a prohibition', () => {
  const rules = (...texts: Array<string>) =>
    Constraints.fromSpeech(texts.map((text, index) => ({ entryId: `u${index}`, text })))

  it("inside a noun phrase (hyphenated, quoted, after a number) or a relative clause it makes no constraint", () => {
    expect(rules("The don't-retry flag is set by the client.")).toEqual([])
    expect(rules("I put a 'don't touch' list in the README.")).toEqual([])
    expect(rules("Files that don't exist are skipped by the loader.")).toEqual([])
    // A correction whose other words are the user's verdict: no rule is left, not even the bare "No!".
    expect(rules("NO! and also that 2% don't care conclusion is bogus.")).toEqual([])
    expect(Constraints.strength('"The don\'t-retry flag is set."')).toBe(0)
  })

  it("addressed to the agent it is still a rule, and binds strongly", () => {
    const out = rules(
      "Don't retry the upload.",
      "Please don't touch the fixtures.",
      "You don't need to rebuild.",
      "ok, and don't push yet",
      "Do not commit the lock file."
    )
    expect(out).toHaveLength(5)
    for (const item of out) expect(Constraints.strength(item)).toBeGreaterThanOrEqual(2)
  })
})

describe("a console's hard line wrap is not a sentence break", () => {
  it("a reason sentence wrapped at the terminal's width is read whole", () => {
    const wrapped =
      "The error is not because the glob pattern\n  is wrong, but because the fixture script does not create the database file."
    expect(decisionsOf(wrapped)).toEqual([])
    expect(
      decisionsOf("We keep the retries in the client\n  because the server drops idle connections.\nNext line.")
    ).toEqual(["We keep the retries in the client"])
  })
})

describe("a text-action agent's short output is its command's output, not the user's words", () => {
  const footer = "(Open file: n/a)\n(Current directory: /repo)\nbash-$"
  const session = withIds([
    user(
      `Fix the rounding bug in the serializer. Reproduce it first.\nISSUE:\nTimeDelta(milliseconds=345) serializes as 344.\nINSTRUCTIONS:\nUse the commands below.\nWhen done, submit.\n${footer}`
    ),
    assistant("Let's create a script that reproduces it.\n\n```\ncreate reproduce.py\n```"),
    user(`[File: /repo/reproduce.py (1 lines total)]\n1:\n${footer}`),
    assistant("Now run it.\n\n```\npython reproduce.py\n```"),
    user(`344\n${footer}`),
    assistant("It printed a number rather than the rounded one, as the issue says.\n\n```\npython -c 'print(1)'\n```"),
    user(`Rounding looks wrong here, the value should be rounded up.\n${footer}`)
  ])

  it("is read as the observation of the command before it: that command is an action", () => {
    const actions = ToolActions.actionsOf(session)
    expect(actions.map((action) => action.command)).toEqual([
      "create reproduce.py",
      "python reproduce.py",
      "python -c 'print(1)'"
    ])
    expect(actions[1]!.outcome).toMatchObject({ _tag: "ok" })
  })

  it("is not the user's words; the task message, which ends with the same prompt, still is", () => {
    for (const index of [4, 6]) expect(UserSpeech.isSpeech(session[index]!.message)).toBe(false)
    expect(UserSpeech.isSpeech(session[0]!.message)).toBe(true)
  })
})
