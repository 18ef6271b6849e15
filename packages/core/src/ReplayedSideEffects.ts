/**
 * Side effects a summary would replay (shared case C16): a pending ask, an
 * in-progress item or a next step that asks again for a call that already
 * changed the world in the covered range — a clone, a file written, a
 * commit, a deploy — whose result says it succeeded. An agent continuing
 * from such a summary re-runs non-idempotent tools (Hermes re-ran one 12
 * times, vercel/eve re-cloned 16 times).
 *
 * An item replays a call when it names the call's action (a world-changing
 * verb of the tool name, `clone_repo` → clone / cloning) and its target (a
 * string argument of the call, 4–200 characters and not a bare number, or a
 * path's file name). Edits are not counted
 * (editing the same file again is ordinary work), nor read-only calls, shell
 * commands (tests are re-run on purpose) or calls whose outcome is unknown or
 * failed (those are to be checked or retried).
 *
 * @since 0.3.0
 */
import type { CheckpointContent } from "./Checkpoint.ts"
import * as JsonSafety from "./JsonSafety.ts"
import type { Message } from "./Message.ts"
import * as ToolActions from "./ToolActions.ts"

/** A crude stem: cloning / clones / cloned → clon, committing → commit, deploying → deploy. */
const stem = (word: string): string => {
  const base = word.toLowerCase().replace(/(?:ing|ed|es|s|e)$/, "")
  return base.length > 3 && base.at(-1) === base.at(-2) ? base.slice(0, -1) : base
}

/**
 * Verbs of calls that change the world and must not run twice (their stems):
 * a tool whose name holds none of them (a screenshot, a search) is not
 * counted. Format-level words of tool names, not of any conversation.
 */
const MUTATING = new Set(
  [
    "clone",
    "write",
    "create",
    "commit",
    "push",
    "merge",
    "deploy",
    "release",
    "publish",
    "delete",
    "remove",
    "drop",
    "send",
    "post",
    "upload",
    "transfer",
    "charge",
    "refund",
    "migrate",
    "provision",
    "install"
  ].map((verb) => stem(verb))
)

const words = (text: string): Array<string> => text.match(/[\p{L}\p{N}]+(?:_[\p{L}\p{N}]+)*/gu) ?? []

/** The action stems of a tool name (`git_commit` → commit, `cloneRepo` → clon). */
const verbsOf = (toolName: string): Set<string> =>
  new Set(
    toolName
      .replace(/([a-z])([A-Z])/g, "$1_$2")
      .split(/[_\-.\s]+/)
      .map(stem)
      .filter((verb) => MUTATING.has(verb))
  )

/** The targets of a call: its short string arguments (not bare numbers) and the file names of its paths, lower-cased. */
const targetsOf = (input: unknown): Array<string> =>
  JsonSafety.stringLeaves(input, 4).flatMap((value) => {
    const trimmed = value.trim()
    if (trimmed.length < 4 || trimmed.length > 200 || /^[\d.,:-]+$/.test(trimmed)) return []
    const name = trimmed.includes("/") ? trimmed.split("/").filter(Boolean).at(-1) : undefined
    return [trimmed.toLowerCase(), ...(name && name.length >= 4 && name.includes(".") ? [name.toLowerCase()] : [])]
  })

interface Done {
  readonly verbs: Set<string>
  readonly targets: ReadonlyArray<string>
}

const doneCalls = (covered: ReadonlyArray<Message>): Array<Done> => {
  const items = covered.map((message, index) => ({ entryId: String(index), message }))
  const actions = ToolActions.actionsOf(items)
  const inputs = covered.flatMap((message) =>
    message.role === "assistant" && typeof message.content !== "string"
      ? message.content.flatMap((part) => (part.type === "tool-call" ? [part.input] : []))
      : []
  )
  return actions.flatMap((action, index) =>
    action.outcome._tag === "ok" && (action.kind === "create" || action.kind === "other")
      ? [{ verbs: verbsOf(action.toolName), targets: targetsOf(inputs[index]) }]
      : []
  )
}

/**
 * The items of `content` (pending asks, in progress, next steps) that replay
 * a side effect the covered range shows as done.
 *
 * @category analysis
 */
export const of = (content: CheckpointContent, covered: ReadonlyArray<Message>): Array<string> => {
  const done = doneCalls(covered)
  if (done.length === 0) return []
  return [...content.pendingUserAsks, ...content.progress.inProgress, ...content.nextSteps].filter((item) => {
    const stems = new Set(words(item).map(stem))
    const text = item.toLowerCase()
    return done.some(
      (call) => [...call.verbs].some((verb) => stems.has(verb)) && call.targets.some((target) => text.includes(target))
    )
  })
}
