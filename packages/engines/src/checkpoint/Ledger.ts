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
    // A path shown cut (`...`) that the range does not resolve names no file to open (`withFullPaths`).
    if (ELISION_RE.test(action.path)) return []
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
 * The length Gemini CLI's tool lines keep a path within: `shortenPath`'s default `maxLen` (its
 * `packages/core/src/utils/paths.ts`), which the WriteFile, Edit and ReadFile descriptions use
 * (`Writing to ${shortenPath(relativePath)}`).
 */
const SHOWN_PATH_MAX_CHARS = 35

/**
 * How Gemini CLI's tool lines show `path` with middle segments dropped and no mark, or `undefined` when they show it
 * another way. Its `shortenPath` (before versions that print the `/path/.../long/file.txt` its docstring promised)
 * shows a path of more than {@link SHOWN_PATH_MAX_CHARS} characters as its root and first segment, then the longest
 * run of last segments that fits the limit counting a separator before each; the segments between are dropped
 * unmarked (`specs/apple_books/fixtures/create_fixture.sh` is shown as `specs/fixtures/create_fixture.sh`). When
 * that is still over the limit it shows `...` and the end of it (`...specs/fixtures/copy_book_to_fixture.sh`); when
 * every segment after the first fits, none was dropped and it is shown another way.
 */
const shownWithoutMark = (path: string): string | undefined => {
  if (path.length <= SHOWN_PATH_MAX_CHARS) return undefined
  const root = path.startsWith("/") ? "/" : ""
  const segments = path.slice(root.length).split("/")
  if (segments.length < 3 || segments.includes("")) return undefined
  let kept = 1
  let length = 1 + segments.at(-1)!.length
  while (kept < segments.length - 1 && length + 1 + segments.at(-1 - kept)!.length <= SHOWN_PATH_MAX_CHARS)
    length += 1 + segments.at(-1 - kept++)!.length
  if (length > SHOWN_PATH_MAX_CHARS || kept === segments.length - 1) return undefined
  return `${root}${segments[0]}/${segments.slice(-kept).join("/")}`
}

/** `path` and each of its ends at a `/`: the names a tool line relative to some folder can give the file. */
const namesOf = (path: string): Array<string> =>
  [...path.matchAll(/\//g)].map((slash) => path.slice(slash.index + 1)).concat(path)

/** The paths `seen` by the marker-less short form of each of their names ({@link shownWithoutMark}). */
const byShortForm = (seen: ReadonlyArray<string>): Map<string, Array<string>> => {
  const index = new Map<string, Array<string>>()
  for (const path of seen)
    for (const name of namesOf(path)) {
      const short = shownWithoutMark(name)
      if (short !== undefined) index.set(short, [...(index.get(short) ?? []), path])
    }
  return index
}

/**
 * Whether a console's tool line could have shown `path` as the marker-less `shown` ({@link shownWithoutMark}):
 * only a path of two segments or more within the limit.
 */
const mayBeShortened = (shown: string): boolean =>
  shown.length <= SHOWN_PATH_MAX_CHARS && /^\/?[^/]+\/.*[^/]$/.test(shown) && !ELISION_RE.test(shown)

/** {@link resolvedElision} with the short forms of the paths seen computed once for many paths. */
const resolve = (
  elided: string,
  seen: ReadonlyArray<string>,
  shortForms: () => ReadonlyMap<string, ReadonlyArray<string>>,
  shown: boolean
): string | undefined => {
  const parts = elided.split(ELISION_RE)
  const head = parts[0]!
  const tail = parts.at(-1)!
  const marked = parts.length > 1
  if (marked ? head.length + tail.length < 3 : !shown || !mayBeShortened(elided)) return undefined
  const matches = marked
    ? [
        ...seen.filter(
          (path) => path.length >= head.length + tail.length && path.startsWith(head) && path.endsWith(tail)
        ),
        ...(head.length > 0 ? [] : [...shortForms()].flatMap(([short, paths]) => (short.endsWith(tail) ? paths : [])))
      ]
    : [...(seen.includes(elided) ? [elided] : []), ...(shortForms().get(elided) ?? [])]
  if (!marked && matches.length === 0) return elided
  const longest = matches.reduce((a, b) => (b.length > a.length ? b : a), "")
  if (!matches.every((path) => path === longest || longest.endsWith(`/${path}`))) return undefined
  return matches.reduce<string | undefined>((a, b) => (a === undefined || b.length < a.length ? b : a), undefined)
}

/**
 * The full path a shortened one stands for, among the paths `seen` in the range (tool calls, text, tool output):
 * - an elided path ({@link ELISION_RE}) stands for a path that begins with what is shown before the elision and
 *   ends with what is shown after it, or, when only its end is shown, whose marker-less short form
 *   ({@link shownWithoutMark}) ends with it;
 * - with `shown: true` (the path is as a console's tool line showed it, `ToolActions.Action.pathShown`), a path
 *   without a mark stands for a longer path that Gemini CLI shortens to exactly it, or for itself (a path within
 *   the limit is shown unchanged) — itself when no longer path shortens to it and when `seen` names it.
 *
 * When all such paths name one file (each the end of the longest at a `/`: `specs/a.sh` and `/repo/specs/a.sh`),
 * the shortest of them, as the transcript names it; `undefined` when none or two different files match.
 *
 * @category getters
 */
export const resolvedElision = (
  elided: string,
  seen: ReadonlyArray<string>,
  { shown = false }: { readonly shown?: boolean } = {}
): string | undefined => resolve(elided, seen, () => byShortForm(seen), shown)

/**
 * The actions with each path a console showed shortened ({@link resolvedElision}) as the full path the range
 * shows, read off the range's tool calls, text and tool output — not off the lines that showed paths, which may be
 * shortened themselves (a console prints each call as its own message; a path shown longer than the limit is
 * whole). A path shown without a mark that no longer path shortens to is the path itself; one two files could be
 * shown as names no path, as the ledger lists files to open and nothing tells which file it was; one shown with
 * `...` that the range does not resolve is kept as shown (visibly cut; the ledger leaves it out). The range's text
 * is read only when some path may be shortened.
 *
 * @category combinators
 */
export const withFullPaths = (
  items: ReadonlyArray<CoveredItem>,
  actions: ReadonlyArray<ToolActions.Action>
): Array<ToolActions.Action> => {
  const open = (action: ToolActions.Action) =>
    action.path !== undefined &&
    (ELISION_RE.test(action.path) || (action.pathShown === true && mayBeShortened(action.path)))
  if (!actions.some(open)) return actions.map(({ pathShown: _, ...action }) => action)
  const shownIn = new Set(actions.flatMap((action) => (action.pathShown ? [action.entryId] : [])))
  const seen = new Set(actions.flatMap((action) => (action.path !== undefined && !open(action) ? [action.path] : [])))
  for (const item of items) {
    if (shownIn.has(item.entryId)) continue
    for (const path of IdentifierExtraction.fromText(MessageParts.plainText(item.message), { maxErrors: 0 }).paths)
      seen.add(path.replace(NOT_PATH_PREFIX_RE, ""))
  }
  const full = [...seen].filter((path) => !ELISION_RE.test(path))
  let shortForms: Map<string, Array<string>> | undefined
  const index = () => (shortForms ??= byShortForm(full))
  return actions.map(({ pathShown, ...action }) => {
    if (!open({ ...action, pathShown })) return action
    const path = resolve(action.path!, full, index, pathShown === true)
    return path !== undefined
      ? { ...action, path }
      : ELISION_RE.test(action.path!)
        ? action
        : { ...action, path: undefined }
  })
}

/**
 * The ledger of a covered range: files from the tool calls, branches and
 * commits from git commands and their output (with the files a commit
 * created, from git's `create mode` lines), URLs and ports from the user's
 * words that are live when the range is summarized (`isLive`,
 * `CriticalIdentifiers.livenessIn`: said in the range's recent turns or acted
 * on by a later call — the links of a page pasted long ago are not the
 * work's). A path a console showed shortened is the full path the range shows ({@link withFullPaths}); one the
 * range does not resolve is left out. The ledger stays cumulative: what an earlier checkpoint recorded
 * is merged in, never re-judged.
 *
 * @category constructors
 */
export const fromRange = (
  items: ReadonlyArray<CoveredItem>,
  actions: ReadonlyArray<ToolActions.Action>,
  isLive: (value: string) => boolean = CriticalIdentifiers.livenessIn(items, actions)
): Array<Artifact> => {
  const all = [
    ...fileArtifacts(withFullPaths(items, actions)),
    ...gitArtifacts(actions),
    ...spokenArtifacts(items, isLive)
  ]
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
