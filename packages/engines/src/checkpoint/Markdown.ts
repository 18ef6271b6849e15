/**
 * Reads summaries written elsewhere (an imported Pi compaction, a provider's
 * compaction text, a hook's Markdown) into handoff sections, so an iterative
 * update can carry them forward.
 *
 * @since 0.2.0
 */
import { Checkpoint } from "@context-engine/core"
import { clip, ITEM_CHARS } from "./Text.ts"

/**
 * Parses a Markdown summary written elsewhere (an imported Pi compaction)
 * into sections, so it can be carried forward: `## Goal` → goal, headings
 * naming constraints, done / completed, in progress, blocked, decisions,
 * next steps; every other heading's lines go to critical context.
 *
 * @category constructors
 */
export const contentFromMarkdown = (text: string): Checkpoint.CheckpointContent => {
  const content = Checkpoint.emptyContent()
  const out = {
    goal: [] as Array<string>,
    constraints: [] as Array<string>,
    done: [] as Array<string>,
    inProgress: [] as Array<string>,
    blocked: [] as Array<string>,
    decisions: [] as Array<string>,
    nextSteps: [] as Array<string>,
    pendingUserAsks: [] as Array<string>,
    criticalContext: [] as Array<string>
  }
  let field: keyof typeof out = "criticalContext"
  let heading = ""
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    const match = /^#{1,6}\s+(.*)$/.exec(line)
    if (match) {
      heading = match[1]!.trim()
      const name = heading.toLowerCase()
      field = /goal|objective/.test(name)
        ? "goal"
        : /pending (?:user )?asks?\b|user asks?\b/.test(name)
          ? "pendingUserAsks"
          : /constraint|preference/.test(name)
            ? "constraints"
            : /in progress|current/.test(name)
              ? "inProgress"
              : /done|complete/.test(name)
                ? "done"
                : /block/.test(name)
                  ? "blocked"
                  : /decision/.test(name)
                    ? "decisions"
                    : /next/.test(name)
                      ? "nextSteps"
                      : "criticalContext"
      continue
    }
    const item = line.replace(/^(?:[-*]\s+(?:\[[ x]\]\s+)?|\d+\.\s+|\|)/, "").trim()
    if (item.length === 0 || /^[-|: ]+$/.test(item) || item === "(none)") continue
    out[field].push(
      field === "criticalContext" && heading ? `${heading}: ${clip(item, ITEM_CHARS)}` : clip(item, ITEM_CHARS)
    )
  }
  return {
    ...content,
    goal: out.goal.join(" "),
    constraints: out.constraints,
    progress: { done: out.done, inProgress: out.inProgress, blocked: out.blocked },
    decisions: out.decisions.map((decision) => {
      const [head, ...rest] = decision.split(/\s+[-—:]\s+/)
      return { decision: head ?? decision, rationale: rest.join(" — ") || "(from earlier checkpoint)" }
    }),
    nextSteps: out.nextSteps,
    pendingUserAsks: out.pendingUserAsks,
    criticalContext: out.criticalContext
  }
}

/**
 * Structured content of the previous checkpoint (parsed from its text when
 * it has no structured content).
 *
 * @category getters
 */
export const previousContent = (
  previous: Checkpoint.Checkpoint | undefined
): Checkpoint.CheckpointContent | undefined =>
  previous === undefined ? undefined : (previous.content ?? contentFromMarkdown(previous.text ?? ""))
