/**
 * What an edit changed, in the handoff's Done list: the newest successful
 * edit of each file ends its Done item with the first line it brought
 * (`EditChange`), so a model continuing from the checkpoint knows what the
 * file now holds when the edit itself is no longer in view — for tool-call
 * edits (old/new text inputs, whole-file writes), a text-action agent's
 * `edit N:M` block and the edit blocks a harness applied. Under a tight
 * budget the quoted line goes before any item does.
 */
import { Checkpoint, CheckpointRenderer, CheckpointValidation, type Message } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import { fitToBudget } from "../src/checkpoint/Fit.ts"
import { withoutChange } from "../src/checkpoint/Progress.ts"
import * as ExtractiveSummarizer from "../src/ExtractiveSummarizer.ts"
import type { CoveredItem } from "../src/Summarizer.ts"
import { assistant, calls, checkpointOf, results, user, withIds } from "./support.ts"

const count = (text: string): number => Math.ceil(text.length / 4)
const doneOf = (messages: ReadonlyArray<Message.Message>, items?: ReadonlyArray<CoveredItem>): ReadonlyArray<string> =>
  ExtractiveSummarizer.summarizeSync({
    covered: items ?? withIds(messages),
    kept: [],
    maxTokens: 4_000,
    countTokens: count
  }).progress.done

/** One tool call and its result. */
const call = (id: string, name: string, input: unknown, result = "ok", isError = false): Array<Message.Message> => [
  calls({ id, name, input }),
  results({ id, name, text: result, error: isError })
]

describe("tool-call edits say what they changed", () => {
  it("each edit input format: the first line of the new text the old text did not hold", () => {
    const done = doneOf([
      user("Make the retry policy configurable and document it."),
      ...call("e1", "edit", {
        path: "src/retry.ts",
        oldText: "export const retry = (attempts: number) => {\n  const delayMs = 100",
        newText: "export const retry = (attempts: number, delayMs = 100) => {"
      }),
      ...call("e2", "Edit", {
        file_path: "src/policy.ts",
        old_string: "const policy = {}",
        new_string: "const policy = {}\nexport const backoffFactor = 2"
      }),
      ...call("e3", "MultiEdit", {
        file_path: "src/client.ts",
        edits: [
          { old_string: "import { a } from './a'", new_string: "import { a } from './a'" },
          { old_string: "client.send()", new_string: "client.send({ retry: retry(3) })" }
        ]
      }),
      ...call("e4", "str_replace_editor", {
        command: "str_replace",
        path: "/repo/setup.py",
        old_str: "version='1.0'",
        new_str: "version='1.1'"
      }),
      ...call("e5", "write", { path: "docs/retry.md", content: "\n# Retry policy\n\nSet `delayMs` per call." })
    ])
    expect(done).toEqual([
      "edited `src/retry.ts` — adds `export const retry = (attempts: number, delayMs = 100) => {`",
      "edited `src/policy.ts` — adds `export const backoffFactor = 2`",
      "edited `src/client.ts` — adds `client.send({ retry: retry(3) })`",
      "edited `/repo/setup.py` — adds `version='1.1'`",
      "created `docs/retry.md` — adds `# Retry policy`"
    ])
  })

  it("a line that only re-wraps or drops what was there gives way to the line that brings a new name", () => {
    const done = doneOf([
      user("Only require the phone number when billing is on."),
      ...call("e1", "Edit", {
        file_path: "src/check.py",
        old_string: "required = [\n    'name', 'email', 'phone',\n    'address'\n]",
        new_string:
          "required = [\n    'name', 'email', 'address'\n]\nif 'billing' in form:\n    required.append('phone')"
      })
    ])
    expect(done).toEqual(["edited `src/check.py` — adds `if 'billing' in form:`"])
  })

  it("an edit that only takes lines out says the first line it removed", () => {
    const done = doneOf([
      user("Drop the unused import."),
      ...call("e1", "Edit", {
        file_path: "src/app.py",
        old_string: "import os\nimport sys\n",
        new_string: "import os\n"
      })
    ])
    expect(done).toEqual(["edited `src/app.py` — removes `import sys`"])
  })

  it("a failed edit adds no clause: the newest successful edit of the file gives it", () => {
    const done = doneOf([
      user("Rename the flag."),
      ...call("e1", "Edit", { file_path: "src/flags.ts", old_string: "a", new_string: "export const verbose = true" }),
      ...call(
        "e2",
        "Edit",
        { file_path: "src/flags.ts", old_string: "missing", new_string: "export const quiet = false" },
        "String to replace not found in file.",
        true
      ),
      ...call(
        "e3",
        "Edit",
        { file_path: "src/other.ts", old_string: "missing", new_string: "export const never = 1" },
        "String to replace not found in file.",
        true
      )
    ])
    expect(done).toEqual(["edited `src/flags.ts` — adds `export const verbose = true`"])
    expect(done.join("\n")).not.toContain("quiet")
    expect(done.join("\n")).not.toContain("never")
  })

  it("a later edit of the same file replaces the clause", () => {
    const done = doneOf([
      user("Tune the timeout."),
      ...call("e1", "edit", { path: "src/net.ts", oldText: "x", newText: "const timeoutMs = 500" }),
      ...call("e2", "edit", { path: "src/net.ts", oldText: "const timeoutMs = 500", newText: "const timeoutMs = 2000" })
    ])
    expect(done).toEqual(["edited `src/net.ts` (2 edits) — adds `const timeoutMs = 2000`"])
  })

  it("a long line is cut between words, never inside an identifier, the ellipsis outside the quotes", () => {
    const line =
      "const configurationValue = computeTheEffectiveConfigurationFromEnvironmentVariables(process.env, defaultConfigurationValues)"
    const [item] = doneOf([
      user("Read the configuration."),
      ...call("e1", "write", { path: "src/config.ts", content: line })
    ])
    const quoted = /— adds `([^`]*)`(…?)$/.exec(item ?? "")
    expect(quoted?.[2]).toBe("…")
    const prefix = quoted?.[1] ?? ""
    expect(line.startsWith(prefix)).toBe(true)
    expect(prefix.length).toBeLessThanOrEqual(100)
    // The cut falls between two identifiers: the next character of the line does not continue the last word.
    expect(prefix).toBe(
      "const configurationValue = computeTheEffectiveConfigurationFromEnvironmentVariables(process.env,"
    )
  })
})

/** A SWE-agent style step: the command in a closing fence, its output as the next user message. */
const act = (command: string) => assistant(`Next step.\n\n\`\`\`\n${command}\n\`\`\``)
const screen = (file: string, lines: ReadonlyArray<string>, first = 1) =>
  user(
    `[File: ${file} (${lines.length} lines total)]\n${lines.map((line, index) => `${first + index}:${line}`).join("\n")}\n(Open file: ${file})\n(Current directory: /repo)\nbash-$`
  )

describe("text-action edits say what they changed", () => {
  it("an `edit N:M` block against lines N–M as the file viewer last showed them", () => {
    const file = "/repo/src/loader.py"
    const done = doneOf(
      [
        user("Return None for empty input in the loader."),
        act("open src/loader.py"),
        screen(file, ["def load(x):", "    if x is None:", "        return None", "    return x[0]"]),
        act("edit 2:4\n    if not x:\n        return None\n    return x[0]\nend_of_edit"),
        screen(file, ["def load(x):", "    if not x:", "        return None", "    return x[0]"])
      ],
      undefined
    )
    expect(done).toEqual(["edited `/repo/src/loader.py` — adds `if not x:`"])
  })

  it("an edit block a harness applied: the block of the applied file, not the block that matched nothing", () => {
    const block = (path: string, search: string, replace: string) =>
      `${path}\n\`\`\`python\n<<<<<<< SEARCH\n${search}\n=======\n${replace}\n>>>>>>> REPLACE\n\`\`\``
    const items: Array<CoveredItem> = [
      { entryId: "m0", message: user("Make the delay configurable and document it.") },
      {
        entryId: "m1",
        message: assistant(
          `Two changes.\n\n${block("docs/client.md", "Delay: 1", "Delay: configurable")}\n\n${block("net/client.py", "delay = 1", "delay = config.delay")}`
        ),
        harnessOutput:
          "Applied edit to net/client.py\n## SearchReplaceNoExactMatch: This SEARCH block failed to exactly match lines in docs/client.md"
      }
    ]
    expect(doneOf([], items)).toEqual(["edited `net/client.py` — adds `delay = config.delay`"])
  })
})

describe("console transcripts keep only a call's summary: the diff its result shows", () => {
  it("a summary-only edit's Done item quotes the line its displayed diff added", () => {
    const done = doneOf([
      user("Stop selecting the sample flag."),
      ...call(
        "c1",
        "Update",
        { summary: "src/query.py" },
        "Updated src/query.py with 1 addition and 1 removal\n   12 -      SELECT title, sample\n   12 +      SELECT title"
      )
    ])
    expect(done).toEqual(["edited `src/query.py` — adds `SELECT title`"])
  })
})

describe("under a tight budget the quoted line goes first", () => {
  const line = (index: number) =>
    `export const handlerNumber${index} = registerTheHandlerWithAVeryDescriptiveName(routeTable, middlewareStack, ${index})`
  const content: Checkpoint.CheckpointContent = {
    ...Checkpoint.emptyContent(),
    goal: "Register the route handlers",
    progress: {
      done: Array.from({ length: 6 }, (_, index) => `edited \`src/route${index}.ts\` — adds \`${line(index)}\``),
      inProgress: [],
      blocked: []
    },
    decisions: Array.from({ length: 4 }, (_, index) => ({
      decision: `route ${index} keeps its own middleware stack`,
      rationale: "because handlers differ in auth"
    })),
    nextSteps: ["register the remaining routes"]
  }
  const plain = { ...content, progress: { ...content.progress, done: content.progress.done.map(withoutChange) } }
  const tokens = (fitted: Checkpoint.CheckpointContent) => count(CheckpointRenderer.renderContent(fitted))

  it("a budget that holds every item but not the quoted lines keeps every item without them", () => {
    const roomy = tokens(plain) + 80
    // The quoted lines alone do not fit beside the items.
    expect(tokens(content)).toBeGreaterThan(roomy)
    const fitted = fitToBudget(content, roomy, count)
    expect(fitted.progress.done).toEqual(plain.progress.done)
    expect(fitted.decisions).toEqual(content.decisions)
    expect(tokens(fitted)).toBeLessThanOrEqual(roomy)
  })

  it("a budget that holds them keeps them", () => {
    const fitted = fitToBudget(content, tokens(content) + 80, count)
    expect(fitted.progress.done).toEqual(content.progress.done)
  })
})

describe("an iterative update: a file edited in both ranges", () => {
  const summarize = (
    messages: ReadonlyArray<Message.Message>,
    prefix: string,
    previous?: Checkpoint.CheckpointContent
  ) =>
    ExtractiveSummarizer.summarizeSync({
      covered: withIds(messages, prefix),
      ...(previous ? { previous: checkpointOf(previous, "a8") } : {}),
      kept: [],
      maxTokens: 4_000,
      countTokens: count
    }).progress.done

  it("is one Done item: both ranges' edits counted, the newer edit's change, created when the earlier range created it", () => {
    const first = ExtractiveSummarizer.summarizeSync({
      covered: withIds(
        [
          user("Add a retry helper and use it in the client."),
          ...call("a1", "write", { path: "src/retry.ts", content: "export const retry = () => {}" }),
          ...call("a2", "edit", { path: "src/client.ts", oldText: "send()", newText: "retry(send)" }),
          ...call("a3", "edit", { path: "src/client.ts", oldText: "retry(send)", newText: "retry(send, 3)" })
        ],
        "a"
      ),
      kept: [],
      maxTokens: 4_000,
      countTokens: count
    })
    expect(first.progress.done).toEqual([
      "created `src/retry.ts` — adds `export const retry = () => {}`",
      "edited `src/client.ts` (2 edits) — adds `retry(send, 3)`"
    ])
    const done = summarize(
      [
        user("Give the retry helper a delay."),
        ...call("b1", "edit", { path: "src/retry.ts", oldText: "() => {}", newText: "(delayMs = 100) => {}" }),
        ...call("b2", "edit", { path: "src/docs.md", oldText: "x", newText: "Retries wait `delayMs`." })
      ],
      "b",
      first
    )
    expect(done).toEqual([
      "edited `src/client.ts` (2 edits) — adds `retry(send, 3)`",
      "created `src/retry.ts` (2 edits) — adds `(delayMs = 100) => {}`",
      'edited `src/docs.md` — adds "Retries wait `delayMs`."'
    ])
  })
})

describe("Codex patches say what they changed", () => {
  const patch = [
    "*** Begin Patch",
    "*** Update File: src/retry.ts",
    "@@ export const retry",
    "-export const retry = (attempts: number) => {",
    "+export const retry = (attempts: number, delayMs = 100) => {",
    "*** Add File: docs/retry.md",
    "+# Retry policy",
    "*** End Patch"
  ].join("\n")
  const session = withIds([
    user("Give the retry helper a delay and document it."),
    ...call("p1", "apply_patch", patch, "Success. Updated the following files:\nM src/retry.ts\nA docs/retry.md"),
    ...call("p2", "shell", { command: ["apply_patch", patch.replace("delayMs = 100", "delayMs = 250")] }, "Success.")
  ])
  const content = ExtractiveSummarizer.summarizeSync({
    covered: session,
    kept: [],
    maxTokens: 4_000,
    countTokens: count
  })

  it("each file a patch touches is a Done item with its change, and a modified file of the ledger", () => {
    expect(content.progress.done).toEqual([
      "edited `src/retry.ts` (2 edits) — adds `export const retry = (attempts: number, delayMs = 250) => {`",
      "created `docs/retry.md` (2 edits) — adds `# Retry policy`"
    ])
    expect(content.filesModified).toEqual(["src/retry.ts", "docs/retry.md"])
  })

  it("passes the validator: the paths and lines it names are the patch's own", () => {
    const report = CheckpointValidation.validate({
      checkpoint: checkpointOf(content, "e4"),
      covered: session.map((item) => item.message),
      checkpointTokens: count(CheckpointRenderer.renderContent(content)),
      replacedTokens: 100_000
    })
    expect(report.checks.filter((check) => !check.ok)).toEqual([])
  })
})
