/**
 * The one checkpoint renderer (DESIGN.md "Context view"): used by
 * `ActiveView`, so a store's resume view, every engine and the middleware
 * show a checkpoint the same way. Renders a checkpoint as Markdown for the
 * model: one user-role message,
 * clearly marked as reference material rather than a new instruction, placed
 * before the verbatim tail and never after the latest user message. The
 * section layout follows Pi's compaction prompt (Goal, Constraints &
 * Preferences, Progress with Done / In Progress / Blocked, Key Decisions,
 * Next Steps, Critical Context) with the read / modified file lists Pi
 * appends, plus the pending user asks and exact identifiers.
 *
 * @since 0.1.0
 */
import type * as Checkpoint from "./Checkpoint.ts"
import type * as Message from "./Message.ts"

/**
 * First line of every rendered checkpoint. Tells the model the message is a
 * handoff summary of earlier conversation (Codex's handoff-summary framing).
 *
 * @category constants
 */
export const HEADER =
  "[Context checkpoint — reference only, not a new request. It summarizes earlier conversation that is no longer shown; the messages after it continue verbatim.]"

const list = (items: ReadonlyArray<string>, bullet = "-"): string =>
  items.length === 0 ? "- (none)" : items.map((item) => `${bullet} ${item.replace(/\n+/g, " ")}`).join("\n")

const code = (items: ReadonlyArray<string>): string => items.map((item) => `\`${item.replace(/`/g, "'")}\``).join(", ")

/**
 * Markdown of structured content (without the header). An identifier that
 * another section already quotes verbatim is not repeated under Exact
 * Identifiers, so it is kept once.
 *
 * @category rendering
 */
export const renderContent = (content: Checkpoint.CheckpointContent): string => {
  const sections: Array<string> = []
  sections.push(`## Goal\n${content.goal.trim() || "(unknown)"}`)
  sections.push(`## Constraints & Preferences\n${list(content.constraints)}`)
  sections.push(
    [
      "## Progress",
      `### Done\n${list(content.progress.done, "- [x]")}`,
      `### In Progress\n${list(content.progress.inProgress, "- [ ]")}`,
      `### Blocked\n${list(content.progress.blocked)}`
    ].join("\n")
  )
  sections.push(
    `## Key Decisions\n${
      content.decisions.length === 0
        ? "- (none)"
        : content.decisions.map((item) => `- **${item.decision}**: ${item.rationale}`).join("\n")
    }`
  )
  sections.push(
    `## Next Steps\n${content.nextSteps.length === 0 ? "- (none)" : content.nextSteps.map((step, index) => `${index + 1}. ${step}`).join("\n")}`
  )
  sections.push(`## Critical Context\n${list(content.criticalContext)}`)
  sections.push(`## Pending User Asks\n${list(content.pendingUserAsks)}`)
  // Identifiers already quoted verbatim in another section are not repeated (they stay retained).
  const elsewhere = [...sections, ...content.filesRead, ...content.filesModified].join("\n")
  const fresh = (values: ReadonlyArray<string>) => values.filter((value) => !elsewhere.includes(value))
  const all = content.identifiers
  const ids = {
    paths: fresh(all.paths),
    ids: fresh(all.ids),
    hashes: fresh(all.hashes),
    urls: fresh(all.urls),
    ports: fresh(all.ports),
    commands: fresh(all.commands),
    errors: fresh(all.errors)
  }
  const idLines = (
    [
      ["Paths", ids.paths],
      ["IDs", ids.ids],
      ["Hashes", ids.hashes],
      ["URLs", ids.urls],
      ["Ports", ids.ports],
      ["Commands", ids.commands],
      ["Errors", ids.errors]
    ] as const
  )
    .filter(([, values]) => values.length > 0)
    .map(([label, values]) => `- ${label}: ${code(values)}`)
  sections.push(`## Exact Identifiers\n${idLines.length === 0 ? "- (none)" : idLines.join("\n")}`)
  if (content.filesRead.length > 0) sections.push(`<read-files>\n${content.filesRead.join("\n")}\n</read-files>`)
  if (content.filesModified.length > 0)
    sections.push(`<modified-files>\n${content.filesModified.join("\n")}\n</modified-files>`)
  return sections.join("\n\n")
}

/**
 * Markdown of a checkpoint: header, generation and covered range, then the
 * structured sections or the verbatim `text` (imported summaries).
 *
 * @category rendering
 */
export const render = (checkpoint: Checkpoint.Checkpoint): string => {
  const meta = `Checkpoint ${checkpoint.generation} (${checkpoint.id}), covering entries ${checkpoint.coveredRange.fromEntryId ?? "(start)"} … ${checkpoint.coveredRange.toEntryId}.`
  const body = checkpoint.content ? renderContent(checkpoint.content) : (checkpoint.text ?? "")
  const extra = checkpoint.content && checkpoint.text ? `\n\n${checkpoint.text}` : ""
  return `${HEADER}\n${meta}\n\n${body}${extra}`
}

/**
 * The checkpoint as the user-role message the model sees: one text part
 * holding {@link render}.
 *
 * @category rendering
 */
export const toMessage = (checkpoint: Checkpoint.Checkpoint): Message.Message => ({
  role: "user",
  content: [{ type: "text", text: render(checkpoint) }]
})
