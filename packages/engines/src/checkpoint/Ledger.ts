/**
 * The cumulative artifact ledger (DESIGN.md "Checkpoints are handoffs"):
 * files read / modified / created, branches, commits, URLs and ports, each
 * with the transcript entries that touched it. Built from the covered range's
 * tool calls and the user's words, and merged onto the previous checkpoint's
 * ledger so nothing an earlier checkpoint recorded is lost — including
 * checkpoints a hook or a model wrote.
 *
 * @since 0.2.0
 */
import {
  Checkpoint,
  CriticalIdentifiers,
  IdentifierExtraction,
  MessageParts,
  ToolActions,
  UserSpeech
} from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"

type Artifact = Checkpoint.Artifact

/** `[branch hash] subject` — the first line git prints for a commit. */
const COMMIT_LINE_RE = /^\[([\w./+-]+)(?: \(root-commit\))? ([0-9a-f]{7,40})\] (.+)$/gm
/** ` create mode 100644 path` — the files a commit added, as git lists them under its first line. */
const CREATE_MODE_RE = /^\s*create mode \d{6} (\S.*?)\s*$/gm
const NEW_BRANCH_RE = /\bgit\s+(?:checkout\s+-[bB]|switch\s+-[cC]|branch)\s+([\w./+-]+)/

/** Status strength: a later, stronger status replaces a weaker one. */
const RANK: Record<string, number> = { mentioned: 0, read: 1, modified: 2, created: 3, committed: 3 }

const keyOf = (artifact: Pick<Artifact, "kind" | "value">): string => `${artifact.kind}\u0000${artifact.value}`

const entryIds = (earlier: ReadonlyArray<string>, later: ReadonlyArray<string>): Array<string> => {
  const all = [...new Set([...earlier, ...later])]
  const max = Checkpoint.MAX_ARTIFACT_ENTRY_IDS
  return all.length <= max ? all : [all[0]!, ...all.slice(all.length - (max - 1))]
}

/**
 * Merges two ledgers: one artifact per kind and value, the stronger status
 * (created / committed > modified > read > mentioned), entry ids unioned;
 * order of first appearance.
 *
 * @category combinators
 */
export const merge = (earlier: ReadonlyArray<Artifact>, later: ReadonlyArray<Artifact>): Array<Artifact> => {
  const byKey = new Map<string, Artifact>()
  for (const artifact of [...earlier, ...later]) {
    const known = byKey.get(keyOf(artifact))
    if (!known) {
      byKey.set(keyOf(artifact), { ...artifact, entryIds: entryIds([], artifact.entryIds) })
      continue
    }
    byKey.set(keyOf(artifact), {
      ...known,
      status: (RANK[artifact.status] ?? 0) > (RANK[known.status] ?? 0) ? artifact.status : known.status,
      entryIds: entryIds(known.entryIds, artifact.entryIds)
    })
  }
  return [...byKey.values()]
}

const fileArtifacts = (actions: ReadonlyArray<ToolActions.Action>): Array<Artifact> =>
  actions.flatMap((action): Array<Artifact> => {
    // An edit a harness reported (aider) is Done work, fitted newest first; the ledger's file lines are the files the
    // agent's tool calls touched — the critical identifiers the validator reads off the messages (`CriticalIdentifiers`)
    // — and those its sub-agents' calls wrote (`SubAgentWork`), which no message names.
    if (action.path === undefined || action.outcome._tag === "failed" || action.source === "harness-output") return []
    const status =
      action.kind === "create"
        ? "created"
        : action.kind === "edit"
          ? "modified"
          : action.kind === "read"
            ? "read"
            : undefined
    // A read of a file in the OS's temporary folders (a pasted screenshot's preview) names nothing the work keeps.
    if (status === "read" && IdentifierExtraction.isTransientPath(action.path)) return []
    return status ? [{ kind: "file", value: action.path, status, entryIds: [action.entryId] }] : []
  })

const gitArtifacts = (actions: ReadonlyArray<ToolActions.Action>): Array<Artifact> =>
  actions.flatMap((action): Array<Artifact> => {
    if (action.outcome._tag !== "ok" || action.command === undefined) return []
    const out: Array<Artifact> = []
    const branch = NEW_BRANCH_RE.exec(action.command)?.[1]
    if (branch && !branch.startsWith("-"))
      out.push({ kind: "branch", value: branch, status: "created", entryIds: [action.entryId] })
    for (const match of action.outcome.text.matchAll(CREATE_MODE_RE))
      out.push({ kind: "file", value: match[1]!, status: "created", entryIds: [action.entryId] })
    for (const match of action.outcome.text.matchAll(COMMIT_LINE_RE)) {
      out.push({ kind: "branch", value: match[1]!, status: "mentioned", entryIds: [action.entryId] })
      out.push({
        kind: "commit",
        value: `${match[2]} ${match[3]!.trim().slice(0, 120)}`,
        status: "committed",
        entryIds: [action.entryId]
      })
    }
    return out
  })

const spokenArtifacts = (items: ReadonlyArray<CoveredItem>, isLive: (value: string) => boolean): Array<Artifact> =>
  items.flatMap((item): Array<Artifact> => {
    const text = UserSpeech.spokenText(item.message)
    if (text.length === 0) return []
    const ids = IdentifierExtraction.fromText(text, { maxErrors: 0 })
    return [
      ...ids.urls
        .filter(isLive)
        .map((value): Artifact => ({ kind: "url", value, status: "mentioned", entryIds: [item.entryId] })),
      ...ids.ports
        .filter(isLive)
        .map((value): Artifact => ({ kind: "port", value, status: "mentioned", entryIds: [item.entryId] }))
    ]
  })

/**
 * An elided part of a path as a console shows it: Gemini CLI shortens a long path in its tool lines with `...`
 * for its head or its middle segments (`...specs/apple_books/fixtures/_common.sh`, `src/.../bar.py`: its
 * `shortenPath`), other displays with `…`. Such a path names no file the next model can open.
 */
const ELISION_RE = /\.{3}|…/
/**
 * What a path is written with but is not part of it: the `@` of an `@path` mention (Gemini CLI's and Claude Code's
 * way to attach a file) and the `a/` / `b/` of git's diff headers (`--- a/path`, `+++ b/path`, git's default
 * prefixes for the two sides of a diff).
 */
const NOT_PATH_PREFIX_RE = /^(?:@(?=[\w.~]*\/)|[ab]\/)/

/**
 * The full path an elided one stands for: the path seen in the range (tool calls, text, tool output) that begins
 * with what is shown before the elision and ends with what is shown after it — when all such paths name one file
 * (each the end of the longest at a `/`: `specs/a.sh` and `/repo/specs/a.sh`), the shortest of them, as the
 * transcript names it; `undefined` when none or two different files match.
 *
 * @category getters
 */
export const resolvedElision = (elided: string, seen: ReadonlyArray<string>): string | undefined => {
  const parts = elided.split(ELISION_RE)
  const head = parts[0]!
  const tail = parts.at(-1)!
  if (head.length + tail.length < 3) return undefined
  const matches = seen.filter(
    (path) => path.length >= head.length + tail.length && path.startsWith(head) && path.endsWith(tail)
  )
  const longest = matches.reduce((a, b) => (b.length > a.length ? b : a), "")
  if (!matches.every((path) => path === longest || longest.endsWith(`/${path}`))) return undefined
  return matches.reduce<string | undefined>((a, b) => (a === undefined || b.length < a.length ? b : a), undefined)
}

/**
 * File artifacts with an elided path ({@link ELISION_RE}) resolved to the one full path the range shows
 * ({@link resolvedElision}), or left out: the ledger lists files to open. The range's text is read for paths only
 * when some path is elided.
 */
const withoutElisions = (all: ReadonlyArray<Artifact>, items: ReadonlyArray<CoveredItem>): Array<Artifact> => {
  const elided = (artifact: Artifact) => artifact.kind === "file" && ELISION_RE.test(artifact.value)
  if (!all.some(elided)) return [...all]
  const seen = new Set(all.flatMap((artifact) => (artifact.kind === "file" ? [artifact.value] : [])))
  for (const item of items)
    for (const path of IdentifierExtraction.fromText(MessageParts.plainText(item.message), { maxErrors: 0 }).paths)
      seen.add(path.replace(NOT_PATH_PREFIX_RE, ""))
  const full = [...seen].filter((path) => !ELISION_RE.test(path))
  return all.flatMap((artifact) => {
    if (!elided(artifact)) return [artifact]
    const value = resolvedElision(artifact.value, full)
    return value === undefined ? [] : [{ ...artifact, value }]
  })
}

/**
 * The ledger of a covered range: files from the tool calls, branches and
 * commits from git commands and their output (with the files a commit
 * created, from git's `create mode` lines), URLs and ports from the user's
 * words that are live when the range is summarized (`isLive`,
 * `CriticalIdentifiers.livenessIn`: said in the range's recent turns or acted
 * on by a later call — the links of a page pasted long ago are not the
 * work's). A path a console showed with an elided part is resolved to the full path the range shows, or left
 * out ({@link withoutElisions}). The ledger stays cumulative: what an earlier checkpoint recorded
 * is merged in, never re-judged.
 *
 * @category constructors
 */
export const fromRange = (
  items: ReadonlyArray<CoveredItem>,
  actions: ReadonlyArray<ToolActions.Action>,
  isLive: (value: string) => boolean = CriticalIdentifiers.livenessIn(items, actions)
): Array<Artifact> => {
  const all = withoutElisions(
    [...fileArtifacts(actions), ...gitArtifacts(actions), ...spokenArtifacts(items, isLive)],
    items
  )
  // git and console logs print repository-relative paths: one a tool call named by its absolute path is that file
  // (the first absolute path that ends in `/<relative path>`; one lookup per path: a scan of every absolute path per
  // relative one was quadratic on long sessions, issue #13 req 6).
  const absoluteBySuffix = new Map<string, string>()
  for (const artifact of all) {
    if (artifact.kind !== "file" || !artifact.value.startsWith("/")) continue
    for (let slash = artifact.value.indexOf("/"); slash !== -1; slash = artifact.value.indexOf("/", slash + 1)) {
      const suffix = artifact.value.slice(slash + 1)
      if (!absoluteBySuffix.has(suffix)) absoluteBySuffix.set(suffix, artifact.value)
    }
  }
  return merge(
    [],
    all.map((artifact) => {
      if (artifact.kind !== "file" || artifact.value.startsWith("/")) return artifact
      const same = absoluteBySuffix.get(artifact.value)
      return same !== undefined ? { ...artifact, value: same } : artifact
    })
  )
}

/**
 * A ledger from a checkpoint that has none (written before ledgers, by a
 * hook or a model): its read / modified file lists.
 *
 * @category constructors
 */
export const fromContent = (content: Checkpoint.CheckpointContent): Array<Artifact> =>
  content.artifacts !== undefined
    ? [...content.artifacts]
    : [
        ...content.filesRead.map((value): Artifact => ({ kind: "file", value, status: "read", entryIds: [] })),
        ...content.filesModified.map((value): Artifact => ({ kind: "file", value, status: "modified", entryIds: [] }))
      ]

/**
 * One line per artifact for the rendered checkpoint, e.g.
 * `` `src/a.ts` (modified; pi:12, pi:40) ``.
 *
 * @category rendering
 */
export const line = (artifact: Artifact): string =>
  `\`${artifact.value.replace(/`/g, "'")}\` (${artifact.status}${artifact.entryIds.length > 0 ? `; ${artifact.entryIds.join(", ")}` : ""})`

/**
 * The ledger a new checkpoint carries whoever wrote it (issue #11
 * requirement 2): the previous checkpoint's ledger, then the covered range's,
 * then what the summary itself lists. It is data the engine computed, so it is
 * re-attached to hook- and model-written summaries and stays cumulative
 * through every later checkpoint.
 *
 * @category constructors
 */
export const carried = (
  content: Checkpoint.CheckpointContent,
  previous: Checkpoint.CheckpointContent | undefined,
  items: ReadonlyArray<CoveredItem>
): Array<Artifact> =>
  merge(
    merge(previous ? fromContent(previous) : [], fromRange(items, ToolActions.actionsOf(items))),
    fromContent(content)
  )
