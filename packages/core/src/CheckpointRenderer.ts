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

const section = (title: string, items: ReadonlyArray<string>, bullet = "-"): Array<string> =>
  items.length === 0 ? [] : [`${title}\n${list(items, bullet)}`]

/** Newest artifacts of one group shown; the rest are counted (they stay in the stored ledger). */
const ARTIFACTS_SHOWN = { read: 8, other: 10 } as const

const group = (label: string, values: ReadonlyArray<string>, shown: number): Array<string> =>
  values.length === 0
    ? []
    : [
        `${label}: ${code(values.slice(-shown))}${values.length > shown ? ` (+${values.length - shown} older in the ledger)` : ""}`
      ]

/**
 * The directory every absolute path lies strictly under (ending in `/`), or "" when fewer than two share one
 * below the root — so a long list names each file once, briefly. Strictly: a path that is the directory
 * itself (`/repo/src/` beside `/repo/src/a.ts`) would be shown as nothing, so the base is its parent then.
 */
const commonDirectory = (paths: ReadonlyArray<string>): string => {
  if (paths.length < 2) return ""
  let prefix = paths[0]!.slice(0, paths[0]!.lastIndexOf("/") + 1)
  for (const path of paths)
    while (prefix.length > 0 && !(path.startsWith(prefix) && path.length > prefix.length))
      // "/" shortens to "", never to itself.
      prefix = prefix.length <= 1 ? "" : prefix.slice(0, prefix.lastIndexOf("/", prefix.length - 2) + 1)
  return prefix.length > 1 ? prefix : ""
}

/**
 * One Artifacts line of paths — the one home of how the ledger shows a list of paths (files modified,
 * created and read). The rule: a path is shown relative to a base only when the line states that base
 * (`(under `/repo/src/`)`), and only the absolute paths that lie under it are shortened; every shown path
 * joined to its stated base is the path the ledger holds, which is the path the transcript showed.
 *
 * A relative path is shown as the agent wrote it: it is relative to the agent's working directory, which the
 * ledger does not know, so it is never shortened (a relative `src/a.ts` beside `src/b.ts` names its
 * directory; the trial's `module1.ts`, `module2.ts` hid `packages/api/src/handlers/`) and never put after
 * a stated absolute base it was not under (`(under `/repo/specs/`): …, `specs/x/.gitkeep`` read as
 * `/repo/specs/specs/x/.gitkeep`, a path that does not exist). When a line mixes absolute paths under a base
 * with relative ones, the relative ones follow after `; relative to the working directory:` — a second
 * stated base, so no path can be read as joined to the wrong one. Without a base (one absolute path, or none
 * that share a directory) every path is shown in full, in the ledger's order.
 *
 * `shown` keeps the newest paths (the ledger's last ones) and counts the rest, which stay in the stored
 * ledger; the base is that of the paths shown.
 */
const pathLine = (
  label: string,
  paths: ReadonlyArray<string>,
  { note, shown = paths.length }: { readonly note?: string; readonly shown?: number } = {}
): Array<string> => {
  if (paths.length === 0) return []
  const listed = paths.slice(-shown)
  const older = paths.length > listed.length ? ` (+${paths.length - listed.length} older in the ledger)` : ""
  const base = commonDirectory(listed.filter((path) => path.startsWith("/")))
  const head = (stated: string | undefined) => {
    const notes = [note, stated && `under ${code([stated])}`].filter(Boolean)
    return `${label}${notes.length > 0 ? ` (${notes.join(", ")})` : ""}`
  }
  if (!base) return [`${head(undefined)}: ${code(listed)}${older}`]
  const under = listed.filter((path) => path.startsWith(base)).map((path) => path.slice(base.length))
  const relative = listed.filter((path) => !path.startsWith("/"))
  const rest = relative.length > 0 ? `; relative to the working directory: ${code(relative)}` : ""
  return [`${head(base)}: ${code(under)}${rest}${older}`]
}

/** The ledger as a few grouped lines; commits already listed under Done are not repeated. */
const artifactLines = (artifacts: ReadonlyArray<Checkpoint.Artifact>, done: string): Array<string> => {
  const of = (kind: Checkpoint.Artifact["kind"], test: (a: Checkpoint.Artifact) => boolean = () => true) =>
    artifacts.filter((a) => a.kind === kind && test(a)).map((a) => a.value)
  return [
    ...pathLine(
      "files modified",
      of("file", (a) => a.status === "modified")
    ),
    ...pathLine(
      "files created",
      of("file", (a) => a.status === "created")
    ),
    ...artifacts
      .filter((a) => a.kind === "branch")
      .slice(-ARTIFACTS_SHOWN.other)
      .map((a) => `branch ${code([a.value])} (${a.status})`),
    ...group(
      "commits",
      of("commit", (a) => !done.includes(a.value.split(" ")[0]!)),
      ARTIFACTS_SHOWN.other
    ),
    ...group("URLs", of("url"), ARTIFACTS_SHOWN.other),
    ...group("ports", of("port"), ARTIFACTS_SHOWN.other),
    ...pathLine(
      "files read",
      of("file", (a) => a.status === "read"),
      { note: "newest", shown: ARTIFACTS_SHOWN.read }
    )
  ]
}

/**
 * How a rendering is cut for a person to skim (the CLI's report prints the checkpoint with each list cut); the
 * model is always sent the whole rendering.
 *
 * @category models
 */
export interface RenderOptions {
  /**
   * Identifiers shown per Exact Identifiers line, the rest counted after the list and outside its code spans
   * (`` `a`, `b`, … 3 more ``): the count is not an identifier, and it counts those the line would show.
   */
  readonly identifiersShown?: number | undefined
}

/** One Exact Identifiers line: the values as code, the first `shown` of them, the rest counted. */
const identifierLine = (label: string, values: ReadonlyArray<string>, shown = values.length): string =>
  `- ${label}: ${code(values.slice(0, shown))}${values.length > shown ? `, … ${values.length - shown} more` : ""}`

const identifierSection = (
  content: Checkpoint.CheckpointContent,
  elsewhere: string,
  options: RenderOptions
): Array<string> => {
  // Identifiers already quoted verbatim in another section are not repeated (they stay retained).
  const fresh = (values: ReadonlyArray<string>) => values.filter((value) => !elsewhere.includes(value))
  const all = content.identifiers
  const idLines = (
    [
      ["Code", fresh(content.keyIdentifiers ?? [])],
      ["Paths", fresh(all.paths)],
      ["IDs", fresh(all.ids)],
      ["Hashes", fresh(all.hashes)],
      ["URLs", fresh(all.urls)],
      ["Ports", fresh(all.ports)],
      ["Commands", fresh(all.commands)],
      ["Errors", fresh(all.errors)]
    ] as const
  )
    .filter(([, values]) => values.length > 0)
    .map(([label, values]) => identifierLine(label, values, options.identifiersShown))
  return idLines.length === 0 ? [] : [`## Exact Identifiers\n${idLines.join("\n")}`]
}

/**
 * Markdown of structured content (without the header): the handoff
 * sections in the order the next model needs them — Goal, Pending User
 * Asks, Constraints & Preferences (the user's words), Progress (Done / In
 * Progress / Blocked), Failed Approaches, Key Decisions, Next Steps,
 * Critical Context, Artifacts (the ledger), Exact Identifiers. Goal,
 * Progress and Next Steps always appear; other sections only when they have
 * items. An identifier that another section already quotes is not repeated.
 *
 * @category rendering
 */
export const renderContent = (content: Checkpoint.CheckpointContent, options: RenderOptions = {}): string => {
  const progress = content.progress
  const sections: Array<string> = [
    `## Goal\n${content.goal.trim() || "(unknown)"}`,
    ...section("## Pending User Asks", content.pendingUserAsks),
    ...section("## Constraints & Preferences", content.constraints),
    [
      "## Progress",
      `### Done\n${list(progress.done, "- [x]")}`,
      ...section("### In Progress", progress.inProgress, "- [ ]"),
      ...section("### Blocked / Unknown Outcome", progress.blocked)
    ].join("\n"),
    ...section("## Failed Approaches (do not retry blindly)", content.failedApproaches ?? []),
    ...section(
      "## Key Decisions",
      content.decisions.map((item) => `**${item.decision}**: ${item.rationale}`)
    ),
    `## Next Steps\n${content.nextSteps.length === 0 ? "- (none)" : content.nextSteps.map((step, index) => `${index + 1}. ${step}`).join("\n")}`,
    ...section("## Critical Context", content.criticalContext)
  ]
  const artifacts = content.artifacts ?? []
  if (artifacts.length > 0) sections.push(...section("## Artifacts", artifactLines(artifacts, sections.join("\n"))))
  else {
    if (content.filesRead.length > 0) sections.push(`<read-files>\n${content.filesRead.join("\n")}\n</read-files>`)
    if (content.filesModified.length > 0)
      sections.push(`<modified-files>\n${content.filesModified.join("\n")}\n</modified-files>`)
  }
  sections.push(
    ...identifierSection(content, [...sections, ...content.filesRead, ...content.filesModified].join("\n"), options)
  )
  sections.push(...section("## Left Out", content.dropped ?? []))
  return sections.join("\n\n")
}

/**
 * Markdown of a checkpoint: header, generation and covered range, then the
 * structured sections or the verbatim `text` (imported summaries).
 *
 * @category rendering
 */
export const render = (checkpoint: Checkpoint.Checkpoint, options: RenderOptions = {}): string => {
  const meta = `Checkpoint ${checkpoint.generation} (${checkpoint.id}), covering entries ${checkpoint.coveredRange.fromEntryId ?? "(start)"} … ${checkpoint.coveredRange.toEntryId}.`
  const body = checkpoint.content ? renderContent(checkpoint.content, options) : (checkpoint.text ?? "")
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
