/**
 * CriticalIdentifiers.isSuperseded: a failed call is superseded by a later
 * call of the same target (an edit's file, whatever its command), or a later successful command running its chain's
 * last step; with `otherMessagesOnly`, calls of its own message do not count.
 */
import { CriticalIdentifiers, type Message, type ToolActions } from "@context-engine/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

const lastStep = (command: string): string =>
  command
    .split(/&&|\|\||;/)
    .at(-1)!
    .trim()

// The rule as its docstring states it, over an explicit list of the later calls.
// An edit's or create's target is its file; any other call's is its command, path or tool name.
const targetOf = (action: ToolActions.Action): string =>
  (action.kind === "edit" || action.kind === "create") && action.path !== undefined
    ? action.path
    : (action.command ?? action.path ?? action.toolName)
const stated = (actions: ReadonlyArray<ToolActions.Action>, index: number, otherMessagesOnly: boolean): boolean => {
  const action = actions[index]!
  const target = targetOf(action)
  const step = action.command === undefined ? "" : lastStep(action.command)
  const later = actions.filter((other, at) => at > index && !(otherMessagesOnly && other.entryId === action.entryId))
  return later.some(
    (other) =>
      targetOf(other) === target ||
      (other.outcome._tag === "ok" && step.length > 0 && (other.command ?? "").includes(step))
  )
}

const action: fc.Arbitrary<ToolActions.Action> = fc.record({
  entryId: fc.constantFrom("e1", "e2", "e3"),
  toolName: fc.constantFrom("bash", "edit"),
  kind: fc.constantFrom("command" as const, "edit" as const),
  path: fc.option(fc.constantFrom("a.ts", "b.ts"), { nil: undefined }),
  command: fc.option(fc.constantFrom("pnpm tsc", "pnpm add x && pnpm tsc", "pnpm tsc && pnpm test", "ls"), {
    nil: undefined
  }),
  outcome: fc.oneof(
    fc.constant({ _tag: "ok" as const, text: "done" }),
    fc.constant({ _tag: "failed" as const, error: "exit 1" }),
    fc.constant({ _tag: "unknown" as const })
  )
})

describe("CriticalIdentifiers.isSuperseded", () => {
  it("follows the stated rule for every call, with and without otherMessagesOnly", () => {
    fc.assert(
      fc.property(fc.array(action, { minLength: 1, maxLength: 12 }), (actions) => {
        actions.forEach((_, index) => {
          expect(CriticalIdentifiers.isSuperseded(actions, index)).toBe(stated(actions, index, false))
          expect(CriticalIdentifiers.isSuperseded(actions, index, { otherMessagesOnly: true })).toBe(
            stated(actions, index, true)
          )
        })
      }),
      { numRuns: 300 }
    )
  })

  it("a parallel call of the same message supersedes only when calls of its own message count", () => {
    const failed: ToolActions.Action = {
      entryId: "e1",
      toolName: "edit",
      kind: "edit",
      path: "a.ts",
      outcome: { _tag: "unknown" }
    }
    const parallel: ToolActions.Action = { ...failed, outcome: { _tag: "ok", text: "edited" } }
    expect(CriticalIdentifiers.isSuperseded([failed, parallel], 0)).toBe(true)
    expect(CriticalIdentifiers.isSuperseded([failed, parallel], 0, { otherMessagesOnly: true })).toBe(false)
    expect(
      CriticalIdentifiers.isSuperseded([failed, parallel, { ...parallel, entryId: "e2" }], 0, {
        otherMessagesOnly: true
      })
    ).toBe(true)
  })
})

describe("CriticalIdentifiers.targetOf: a re-run with another output filter is the same call", () => {
  const run = (command: string, outcome: ToolActions.Outcome, entryId = "e1"): ToolActions.Action => ({
    entryId,
    toolName: "bash",
    kind: "check",
    command,
    outcome
  })

  it("a failed `npm run check 2>&1 | tail -5` is superseded by a later `npm run check 2>&1 | tail -3`", () => {
    const actions = [
      run("cd pkg && npm run check 2>&1 | tail -5", { _tag: "failed", error: "npm error command failed" }),
      run("cd pkg && npm run check 2>&1 | tail -3", { _tag: "ok", text: "" }, "e2")
    ]
    expect(CriticalIdentifiers.targetOf(actions[0]!)).toBe(CriticalIdentifiers.targetOf(actions[1]!))
    expect(CriticalIdentifiers.isSuperseded(actions, 0)).toBe(true)
    expect(CriticalIdentifiers.unresolvedErrors(actions)).toEqual([])
  })

  it("a pipe that writes is another call: `npm test | tee log` does not supersede `npm test`", () => {
    const actions = [
      run("npm test", { _tag: "failed", error: "1 failed" }),
      run("npm test | tee log", { _tag: "ok", text: "" }, "e2")
    ]
    expect(CriticalIdentifiers.targetOf(actions[0]!)).not.toBe(CriticalIdentifiers.targetOf(actions[1]!))
  })
})

describe("CriticalIdentifiers.isSuperseded: the failed chain's last step is split outside quotes", () => {
  it("a quoted ';' in a commit message is not a step: an unrelated later command does not supersede the commit", () => {
    const actions: Array<ToolActions.Action> = [
      {
        entryId: "e1",
        toolName: "bash",
        kind: "command",
        command: `git commit -m "parser: tabs; spaces"`,
        outcome: { _tag: "failed", error: "nothing to commit" }
      },
      { entryId: "e2", toolName: "bash", kind: "command", command: `echo spaces"`, outcome: { _tag: "ok", text: "" } }
    ]
    expect(CriticalIdentifiers.isSuperseded(actions, 0)).toBe(false)
  })
})

const said = (text: string): Message.Message => ({ role: "user", content: [{ type: "text", text }] })
const reply = (text: string): Message.Message => ({ role: "assistant", content: [{ type: "text", text }] })

/**
 * A session whose first turn pastes a page of links and an asset path the work never uses, whose second gives an
 * API base URL the agent then writes into a file, followed by 20 turns (`RECENT_USER_TURNS`) of other work, the
 * newest of which names a URL to check.
 */
const session: Array<Message.Message> = [
  said(
    "For reference, the landing page links https://chat.example.org/invite/abc and https://video.example.org/watch?v=xyz, its hero image is /assets/hero.jpg"
  ),
  reply("Noted."),
  said("Use https://api.example.com/v2 as the API base URL for the client"),
  {
    role: "assistant",
    content: [
      {
        type: "tool-call",
        toolCallId: "w1",
        toolName: "write",
        input: { path: "src/client.ts", content: 'export const BASE_URL = "https://api.example.com/v2"\n' }
      }
    ]
  },
  {
    role: "tool",
    content: [{ type: "tool-result", toolCallId: "w1", toolName: "write", output: { type: "text", value: "ok" } }]
  },
  ...Array.from({ length: 19 }, (_, turn) => [
    said(`rename the helper in the retry loop, step ${turn}`),
    reply(`Renamed it (step ${turn}).`)
  ]).flat(),
  said("now check that https://status.example.com/health answers"),
  reply("It answers.")
]

describe("CriticalIdentifiers.of: the user's identifiers that are still live", () => {
  it("keeps a URL said in the recent turns and one a later call acted on, not links only mentioned in older chat", () => {
    const critical = CriticalIdentifiers.of(session)
    expect(critical.urls).toEqual(["https://api.example.com/v2", "https://status.example.com/health"])
    expect(critical.paths).toEqual(["src/client.ts"])
  })

  it("an identifier the user repeats in a recent turn is live again", () => {
    expect(CriticalIdentifiers.of(session).paths).not.toContain("/assets/hero.jpg")
    const repeated = [...session, said("the hero image /assets/hero.jpg is too large, shrink it")]
    expect(CriticalIdentifiers.of(repeated).paths).toContain("/assets/hero.jpg")
  })

  it("a console file mention (@path) counts as acted on when a later call names the path", () => {
    const mentioned: Array<Message.Message> = [
      said("look at @docs/setup.md before you start, @docs/history.md is only background"),
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "r1", toolName: "read", input: { path: "docs/setup.md" } }]
      },
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "r1", toolName: "read", output: { type: "text", value: "…" } }]
      },
      ...session.slice(5)
    ]
    expect(CriticalIdentifiers.of(mentioned).paths).toEqual(["@docs/setup.md"])
  })
})
