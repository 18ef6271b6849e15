/**
 * Exact-identifier extraction: file paths, ids, hashes, URLs, ports,
 * commands and error strings — the things a summary must keep verbatim
 * (Pi's compaction prompt: "Preserve exact file paths, function names, and
 * error messages"; Codex's handoff summary keeps "exact commands and
 * identifiers"). One module, used both to build extractive checkpoints and to
 * validate any checkpoint, so the summarizer and the validator agree on what
 * "an identifier of the covered range" is.
 *
 * {@link fromMessages} returns the *salient* identifiers of a range: all
 * identifiers in user and assistant text and in tool-call arguments, but from
 * tool-result bodies only error strings (a file read's contents mention paths
 * the agent never acted on). Reasoning is skipped (summaries omit thinking).
 *
 * @since 0.1.0
 */
import type { Identifiers } from "./Checkpoint.ts"
import type { ContentPart, Message } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"
import * as ReadTools from "./ReadTools.ts"
import * as SubstringIndex from "./SubstringIndex.ts"

/** @category models */
export type Category = keyof Identifiers

/**
 * The categories in a stable order.
 *
 * @category constants
 */
export const categories: ReadonlyArray<Category> = ["paths", "ids", "hashes", "urls", "ports", "commands", "errors"]

/**
 * Longest command or error string kept, in characters. Longer ones are cut at
 * this length (the kept prefix is still a verbatim substring of the source).
 *
 * @category constants
 */
export const MAX_IDENTIFIER_CHARS = 160

/**
 * Most error strings taken from one message: tool output and pasted logs can
 * hold thousands of near-identical error lines.
 *
 * @category constants
 */
export const MAX_ERRORS_PER_MESSAGE = 3

/**
 * An identifier set with no entries.
 *
 * @category constructors
 */
export const empty = (): Identifiers => ({
  paths: [],
  ids: [],
  hashes: [],
  urls: [],
  ports: [],
  commands: [],
  errors: []
})

const URL_RE = /\bhttps?:\/\/[^\s"'`<>()[\]{}]+/g
const UUID_RE = /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi
const ISSUE_RE = /(?<![\w&#/])#\d{1,6}\b/g
const TICKET_RE = /\b[A-Z][A-Z0-9]{1,9}-\d{1,6}\b/g
const HASH_RE = /\b[0-9a-f]{7,64}\b/g
const ABSOLUTE_PATH_RE = /(?<![\w:/.~-])(?:~|\.{1,2})?\/[\w.@+-]+(?:\/[\w.@+-]+)+\/?/g
const RELATIVE_PATH_RE = /(?<![\w:/.~@-])[\w@+-][\w.@+-]*(?:\/[\w.@+-]+)+/g
const FILE_EXTENSIONS =
  "ts|tsx|mts|cts|js|jsx|mjs|cjs|json|jsonl|md|mdx|py|rs|go|java|kt|rb|php|c|h|cc|cpp|hpp|cs|swift|yaml|yml|toml|ini|sh|bash|zsh|css|scss|html|sql|txt|lock|env|xml|gradle|proto|vue|svelte"
const BARE_FILE_RE = new RegExp(`(?<![\\w/.-])[\\w@+-][\\w.@+-]*\\.(?:${FILE_EXTENSIONS})\\b`, "g")
const HAS_EXTENSION_RE = new RegExp(`\\.(?:${FILE_EXTENSIONS})$`)
/**
 * Whether `name` ends in a common source, config or document file extension
 * (`theme.ts`, `settings.json`): a file name, which the path extraction and
 * the artifact ledger already keep, not a code identifier.
 *
 * @category guards
 */
export const isFileName = (name: string): boolean => HAS_EXTENSION_RE.test(name)
/**
 * Whether `path` lies in macOS's per-user temporary and cache folders
 * (`/var/folders/<xx>/<id>/T/…`, also as `/private/var/folders`): the
 * `TMPDIR` that `mkdtemp` and apps write to — a screenshot's preview
 * (`…/T/TemporaryItems/NSIRD_screencaptureui_…`), a test's scratch directory —
 * and the system clears. A file in transit, not one the work keeps.
 *
 * @category guards
 */
export const isTransientPath = (path: string): boolean => /^(?:\/private)?\/var\/folders\//.test(path)
const LOCAL_PORT_RE = /\b(?:localhost|127\.0\.0\.1|0\.0\.0\.0)(?::\d{2,5})\b/g
const PORT_WORD_RE = /\bports?\s*[:=]?\s*(\d{2,5})\b/gi
const COMMAND_WORDS =
  "npm|pnpm|npx|yarn|bun|node|deno|tsc|tsx|vitest|jest|git|gh|cd|ls|cat|grep|rg|find|sed|awk|python|python3|pip|uv|cargo|rustc|go|make|docker|kubectl|curl|wget|ssh|mkdir|rm|mv|cp|chmod|psql|sqlite3|bash|sh|pytest"
const INLINE_COMMAND_RE = new RegExp(`\`((?:${COMMAND_WORDS})\\s[^\`\\n]{1,300})\``, "g")
const PROMPT_COMMAND_RE = new RegExp(`^\\s*\\$\\s+((?:${COMMAND_WORDS})\\b[^\\n]*)`, "gm")
const ERROR_LINE_RE =
  /(?:\b[A-Z][A-Za-z]*(?:Error|Exception)(?::|\s+at\b|$)|\berror TS\d+:|^\s*(?:error|Error)(?:\[\w+\])?:|\bERR!|\bFATAL\b|\bfatal:|\bpanic:|\bTraceback\b|^\s*FAIL(?:ED)?\b|\bERROR\b|\bSegmentation fault\b|\bcommand not found\b|\bNo such file or directory\b)/

const PROSE_ERROR_RE =
  /\b[A-Z][A-Za-z]*(?:Error|Exception): |\berror(?: TS\d+)?: |\bERR! |^\s*(?:FATAL|fatal:|panic:|FAIL)\b/

const trimTrailing = (value: string): string => value.replace(/[.,;:!?'")\]}>]+$/, "")

const clip = (value: string): string =>
  value.length > MAX_IDENTIFIER_CHARS ? value.slice(0, MAX_IDENTIFIER_CHARS) : value

const collect = (text: string, re: RegExp, group = 0): Array<string> => {
  const found: Array<string> = []
  for (const match of text.matchAll(re)) {
    const value = match[group]
    if (value !== undefined && value.length > 0) found.push(value)
  }
  return found
}

const isHash = (value: string): boolean => /[0-9]/.test(value) && /[a-f]/.test(value) && !/^\d+$/.test(value)

/**
 * Error strings in a text: each line that matches a common error marker
 * (`TypeError`, `error TS2345:`, `npm ERR!`, `FATAL`, `panic:`, `Traceback`,
 * `FAIL`), trimmed and cut (still verbatim substrings of the source) at {@link MAX_IDENTIFIER_CHARS}.
 * In `prose` mode (user and assistant text) only `SomeError: …`,
 * `error TS1234: …`, `ERR! …` or a line starting with `FATAL` / `panic:` /
 * `FAIL` counts, and the string starts at the marker.
 *
 * @category extraction
 */
export const errorLines = (
  text: string,
  limit = Number.POSITIVE_INFINITY,
  mode: "output" | "prose" = "output"
): Array<string> => {
  const found: Array<string> = []
  if (limit <= 0) return found
  for (const line of text.split("\n")) {
    if (found.length >= limit) break
    const match = (mode === "output" ? ERROR_LINE_RE : PROSE_ERROR_RE).exec(line)
    if (match === null) continue
    const from = mode === "output" ? line : line.slice(match.index)
    const value = clip(from.trim())
    if (value.length >= 6 && !found.includes(value)) found.push(value)
  }
  return found
}

/**
 * Identifiers in free text. Error strings are limited to `maxErrors` lines.
 *
 * @category extraction
 */
export const fromText = (text: string, options: { readonly maxErrors?: number } = {}): Identifiers => {
  const urls = collect(text, URL_RE).map(trimTrailing)
  let rest = text.replace(URL_RE, " ")
  const uuids = collect(rest, UUID_RE)
  rest = rest.replace(UUID_RE, " ")
  const paths = [
    ...collect(rest, ABSOLUTE_PATH_RE),
    ...collect(rest, RELATIVE_PATH_RE).filter((path) => HAS_EXTENSION_RE.test(trimTrailing(path))),
    ...collect(rest.replace(ABSOLUTE_PATH_RE, " ").replace(RELATIVE_PATH_RE, " "), BARE_FILE_RE)
  ]
    .map(trimTrailing)
    .filter((path) => path.length > 2 && !/^\/+$/.test(path) && !isTransientPath(path))
  const hashes = collect(rest.replace(ABSOLUTE_PATH_RE, " "), HASH_RE).filter(isHash)
  const ports = [...collect(rest, LOCAL_PORT_RE), ...collect(rest, PORT_WORD_RE, 1)]
  const commands = [...collect(text, INLINE_COMMAND_RE, 1), ...collect(text, PROMPT_COMMAND_RE, 1)].map((command) =>
    clip(command.trim())
  )
  return normalize({
    paths,
    ids: [...uuids, ...collect(rest, ISSUE_RE), ...collect(rest, TICKET_RE)],
    hashes,
    urls,
    ports,
    commands,
    errors: errorLines(text, options.maxErrors ?? Number.POSITIVE_INFINITY, "prose")
  })
}

const PATH_KEYS = new Set(["path", "file_path", "filePath", "file", "filename", "paths", "target", "dir", "directory"])
const COMMAND_KEYS = new Set(["command", "cmd", "script"])

/**
 * Identifiers in a tool call's arguments: path-like keys (`path`,
 * `file_path`, …) are paths, command keys (`command`, `cmd`) are commands
 * (first line, cut at {@link MAX_IDENTIFIER_CHARS}) and are also scanned for
 * paths and URLs; `url` keys are URLs.
 *
 * @category extraction
 */
export const fromToolInput = (input: unknown): Identifiers => {
  const found = empty() as { -readonly [K in Category]: Array<string> }
  const visit = (value: unknown, key: string | undefined, depth: number): void => {
    if (depth > 6 || value === null || value === undefined) return
    if (typeof value === "string") {
      if (key !== undefined && PATH_KEYS.has(key) && value.length > 0 && value.length < 400) found.paths.push(value)
      else if (key !== undefined && COMMAND_KEYS.has(key)) {
        const firstLine = value.trim().split("\n")[0] ?? ""
        if (firstLine.length > 0) found.commands.push(clip(firstLine))
        const inner = fromText(value, { maxErrors: 0 })
        for (const path of inner.paths) found.paths.push(path)
        for (const url of inner.urls) found.urls.push(url)
      } else if (key === "url" || key === "uri") found.urls.push(value)
      return
    }
    if (Array.isArray(value)) {
      for (const item of value) visit(item, key, depth + 1)
      return
    }
    if (typeof value === "object") {
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) visit(v, k, depth + 1)
    }
  }
  visit(input, undefined, 0)
  return normalize(found)
}

/**
 * Whether a line of command output is a runtime's notice, never the failure
 * itself: Node's inspector notices ("Debugger attached.", "Debugger listening
 * on …", "Waiting for the debugger to disconnect...", "For help, see: …
 * inspector" — on stderr whenever a debugger auto-attaches, as in VS Code's
 * terminal), VS Code's js-debug bootloader notice, npm's script banner
 * (`> pkg@1.0.0 test`, `> vitest run`) and Node's process warnings.
 *
 * @category guards
 */
export const isRuntimeNotice = (line: string): boolean =>
  /^\s*(?:Debugger attached\.|Debugger listening on \S+|Waiting for the debugger to disconnect\.\.\.|For help,? see: https:\/\/nodejs\.org\/\S*inspector\S*|Error in the js-debug bootloader\b.*|> \S.*|\(node:\d+\) (?:\[\w+\] )?\w*Warning: .*|\(Use `node --trace-[\w-]+ \.\.\.` to show where the warning was created\))\s*$/.test(
    line
  )

/**
 * Error strings of a tool result: the first line of an `error-text` /
 * `error-json` output that is not a runtime's notice ({@link isRuntimeNotice}), plus up to {@link MAX_ERRORS_PER_MESSAGE} error lines
 * of its body. The body of a successful file read (`read`, `view`, `cat`,
 * `grep`, …) is file content, not an outcome, and is not scanned.
 *
 * @category extraction
 */
export const fromToolResult = (part: Extract<ContentPart, { type: "tool-result" }>): Identifiers => {
  const text = MessageParts.outputText(part.output)
  const isError = MessageParts.outputIsError(part.output)
  const errors = isError || !ReadTools.isReadTool(part.toolName) ? errorLines(text, MAX_ERRORS_PER_MESSAGE) : []
  if (isError && errors.length === 0) {
    const first = text
      .trim()
      .split("\n")
      .find((line) => line.trim().length > 0 && !isRuntimeNotice(line))
      ?.trim()
    if (first && first.length >= 6) errors.push(clip(first))
  }
  return { ...empty(), errors }
}

/**
 * The salient identifiers of one message (see the module doc). Cached per
 * message object; do not mutate the result.
 *
 * @category extraction
 */
export const fromMessage = (message: Message): Identifiers => {
  let found = byMessage.get(message)
  if (found === undefined) {
    found = extractMessage(message)
    byMessage.set(message, found)
  }
  return found
}

/** Messages are immutable values (DESIGN.md): each is scanned once, however often a range is validated. */
const byMessage = new WeakMap<Message, Identifiers>()

const extractMessage = (message: Message): Identifiers => {
  if (message.role === "system") return empty()
  if (typeof message.content === "string") return fromText(message.content, { maxErrors: MAX_ERRORS_PER_MESSAGE })
  const sets: Array<Identifiers> = []
  for (const part of message.content as ReadonlyArray<ContentPart>) {
    if (part.type === "text") sets.push(fromText(part.text, { maxErrors: MAX_ERRORS_PER_MESSAGE }))
    else if (part.type === "tool-call") sets.push(fromToolInput(part.input))
    else if (part.type === "tool-result") sets.push(fromToolResult(part))
  }
  const merged = mergeAll(sets)
  return { ...merged, errors: merged.errors.slice(0, MAX_ERRORS_PER_MESSAGE * 4) }
}

/**
 * The salient identifiers of a range of messages, deduplicated, in order of
 * first appearance.
 *
 * @category extraction
 */
export const fromMessages = (messages: ReadonlyArray<Message>): Identifiers => mergeAll(messages.map(fromMessage))

const normalize = (ids: Identifiers): Identifiers => {
  const out = empty() as { -readonly [K in Category]: Array<string> }
  for (const category of categories) {
    const seen = new Set<string>()
    for (const raw of ids[category]) {
      const value = raw.trim()
      if (value.length === 0 || seen.has(value)) continue
      seen.add(value)
      out[category].push(value)
    }
  }
  return out
}

/**
 * Union of identifier sets, deduplicated, first appearance first.
 *
 * @category combinators
 */
export const merge = (...sets: ReadonlyArray<Identifiers>): Identifiers => mergeAll(sets)

/**
 * {@link merge} over an array of any length (no argument spread, so 200K
 * messages do not overflow the call stack).
 *
 * @category combinators
 */
export const mergeAll = (sets: ReadonlyArray<Identifiers>): Identifiers => {
  const out = empty() as { -readonly [K in Category]: Array<string> }
  for (const set of sets)
    for (const category of categories) for (const value of set[category]) out[category].push(value)
  return normalize(out)
}

/**
 * Every identifier with its category, in category order.
 *
 * @category getters
 */
export const flatten = (ids: Identifiers): Array<{ readonly category: Category; readonly value: string }> =>
  categories.flatMap((category) => ids[category].map((value) => ({ category, value })))

/**
 * Number of identifiers in a set.
 *
 * @category getters
 */
export const size = (ids: Identifiers): number => categories.reduce((sum, category) => sum + ids[category].length, 0)

/** One index per identifier set: fitting a checkpoint asks about the same set hundreds of times. */
const indices = new WeakMap<
  Identifiers,
  { readonly flat: ReturnType<typeof flatten>; readonly index: SubstringIndex.SubstringIndex }
>()

const indexOf = (ids: Identifiers) => {
  let cached = indices.get(ids)
  if (cached === undefined) {
    const flat = flatten(ids)
    cached = { flat, index: SubstringIndex.make(flat.map((item) => item.value)) }
    indices.set(ids, cached)
  }
  return cached
}

/**
 * Identifiers of `ids` that do not occur verbatim in `text`. One pass over
 * `text` (an Aho–Corasick index of `ids`, built once per `ids` object and
 * reused), so a check costs O(text length), not O(identifiers × text
 * length). Treat `ids` as immutable once passed here.
 *
 * @category validation
 */
export const missingFrom = (ids: Identifiers, text: string): Identifiers => {
  const { flat, index } = indexOf(ids)
  const found = new Set(index.foundIn(text))
  const out = empty() as { -readonly [K in Category]: Array<string> }
  flat.forEach((item, id) => {
    if (!found.has(id)) out[item.category].push(item.value)
  })
  return out
}

/**
 * Identifiers of `ids` that occur verbatim inside another, different
 * identifier of `ids` (e.g. a path inside a command). One index over all
 * values and one pass over each: O(total length + matches), not
 * O(identifiers²).
 *
 * @category validation
 */
export const containedInOthers = (ids: Identifiers): Array<{ readonly category: Category; readonly value: string }> => {
  const { flat, index } = indexOf(ids)
  const inside = new Set<string>()
  for (const item of flat)
    for (const id of index.foundIn(item.value)) {
      const value = flat[id]!.value
      if (value !== item.value) inside.add(value)
    }
  return flat.filter((item) => inside.has(item.value))
}
