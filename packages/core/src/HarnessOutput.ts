/**
 * What an agent's harness printed after a model's message without sending it
 * to the model — the only record of what became of edits a model wrote as
 * text. aider has no tool calls: the model writes SEARCH/REPLACE (or whole
 * file) edit blocks in its reply, aider applies them and reports to the user
 * in its `> ` output lines ("Applied edit to a.py", "SearchReplaceNoExactMatch:
 * This SEARCH block failed to exactly match lines in a.py"), which the aider
 * importer keeps as `aider.output` events beside the messages.
 *
 * {@link byMessage} attaches each message's output to it (a view of messages
 * never holds events); {@link editActions} reads the edits and their outcomes
 * off it, so `ToolActions` lists them like any tool call's.
 *
 * @since 0.6.0
 */
import * as EditChange from "./EditChange.ts"
import type { Entry } from "./Entry.ts"
import type * as ToolActions from "./ToolActions.ts"

/**
 * The event the aider importer writes for a run of aider's `> ` output lines
 * (`data.text`, prefixes removed).
 *
 * @category constants
 */
export const AIDER_OUTPUT = "aider.output"

/** Events that hold a harness's output after a message (`data.text`). */
const OUTPUT_EVENTS: ReadonlySet<string> = new Set([AIDER_OUTPUT])

const textOf = (entry: Entry): string | undefined => {
  if (entry.kind !== "event" || !OUTPUT_EVENTS.has(entry.event.name)) return undefined
  const data = entry.event.data
  const text =
    typeof data === "object" && data !== null && !Array.isArray(data)
      ? (data as { readonly [key: string]: unknown }).text
      : undefined
  return typeof text === "string" ? text : undefined
}

/**
 * Per message entry id, the harness output that follows it on `branch`
 * (root first): the text of the output events between it and the next entry
 * of any other kind, joined by line breaks. Output after another event (a
 * session's start banner) belongs to no message. One pass over the branch.
 *
 * @category constructors
 */
export const byMessage = (branch: ReadonlyArray<Entry>): Map<string, string> => {
  const out = new Map<string, string>()
  let owner: string | undefined
  for (const entry of branch) {
    const text = textOf(entry)
    if (text === undefined) {
      owner = entry.kind === "message" ? entry.id : undefined
      continue
    }
    if (owner === undefined) continue
    const known = out.get(owner)
    out.set(owner, known === undefined ? text : `${known}\n${text}`)
  }
  return out
}

/** aider's report of an applied edit (`base_coder.apply_updates`: "Applied edit to <path>"). */
const APPLIED_RE = /^Applied edit to (.+?)\s*$/
/** aider's report of a new file it created for an edit ("Creating empty file <path>"). */
const CREATED_RE = /^Creating empty file (.+?)\s*$/
/** aider's report of an edit block that did not apply (`## SearchReplaceNoExactMatch: … lines in <path>`). */
const FAILED_RE = /^(?:#+\s*)?(SearchReplaceNoExactMatch: .*? in (.+?))\s*$/

const source = "harness-output"

/**
 * The edits a harness's output reports for the message `entryId`, in its
 * order: an applied edit (a created file's first one is `create`) with
 * outcome ok, an edit block that matched nothing with outcome failed and
 * aider's error line. Nothing for output that reports no edit. An applied
 * edit's `change` is read off the edit blocks of `reply`, the message's
 * text (`EditChange.ofEditBlocks`), when given.
 *
 * @category constructors
 */
export const editActions = (entryId: string, output: string, reply?: string): Array<ToolActions.Action> => {
  const created = new Set<string>()
  const actions: Array<ToolActions.Action> = []
  for (const line of output.split("\n")) {
    const create = CREATED_RE.exec(line)
    if (create !== null) created.add(create[1]!)
    const applied = APPLIED_RE.exec(line)
    if (applied !== null) {
      const path = applied[1]!
      // aider names a created file by its absolute path, an applied edit by its repository-relative one.
      const made = [...created].find((file) => file === path || file.endsWith(`/${path}`))
      const kind = made !== undefined && created.delete(made) ? "create" : "edit"
      const change = reply === undefined ? undefined : EditChange.ofEditBlocks(reply, path)
      actions.push({ entryId, toolName: kind, kind, path, outcome: { _tag: "ok", text: line.trim() }, source, change })
    }
    const failed = FAILED_RE.exec(line)
    if (failed !== null)
      actions.push({
        entryId,
        toolName: "edit",
        kind: "edit",
        path: failed[2]!,
        outcome: { _tag: "failed", error: failed[1]! },
        source
      })
  }
  return actions
}
