/**
 * Builds transcript entries for the importers: stable unique ids, parent
 * chains in source order, session spans, and the issue list (lenient mode)
 * or the first `TranscriptCorrupt` (strict mode).
 *
 * @since 0.1.0
 */
import { type Checkpoint, Entry, Errors, type Message, MessageParts, MessageSeal } from "@context-engine/core"
import type { ImportIssue, SessionSpan } from "./ImportResult.ts"

type Meta = Message.JsonObject

/**
 * Header fields an importer may set on an entry. `id` defaults to
 * `<prefix>:<line>`; `parentId` defaults to the previous entry of the
 * session; `timestamp` to the previous entry's.
 *
 * @category models
 */
export interface EntryHeader {
  readonly id?: string | undefined
  readonly parentId?: string | null | undefined
  /** ISO 8601 string or epoch milliseconds. */
  readonly timestamp?: string | number | undefined
  readonly meta?: Meta | undefined
}

/**
 * The builder an importer writes to.
 *
 * @category models
 */
export interface EntryBuilder {
  readonly source: string
  readonly strict: boolean
  /** Starts a new session: the next entry gets `parentId: null`. */
  readonly startSession: (sessionId: string, startedAt?: string | number) => void
  /** Names the current session once its id is known (a record without one came first). */
  readonly renameSession: (sessionId: string) => void
  readonly message: (line: number, message: Message.Message, header?: EntryHeader) => string
  readonly checkpoint: (line: number, checkpoint: Checkpoint.Checkpoint, header?: EntryHeader) => string
  readonly event: (line: number, name: string, data: Message.JsonValue | undefined, header?: EntryHeader) => string
  /** Records a skipped line; throws `TranscriptCorrupt` in strict mode. */
  readonly skip: (line: number, reason: string) => void
  readonly note: (issue: ImportIssue) => void
  /** The entries written, in source order; empty when the builder streams them (`onEntry`). */
  readonly entries: () => ReadonlyArray<Entry.Entry>
  /** How many entries were written (streamed ones included). */
  readonly count: () => number
  readonly issues: () => ReadonlyArray<ImportIssue>
  readonly sessions: () => ReadonlyArray<SessionSpan>
  /** Id of the last entry written, or null. */
  readonly lastId: () => string | null
  readonly has: (id: string) => boolean
  /** Id of the entry written just before `id`; null when `id` came first or was never written. */
  readonly idBefore: (id: string) => string | null
}

const EPOCH = "1970-01-01T00:00:00.000Z"

/**
 * Normalizes a source timestamp (ISO string or epoch ms) to ISO 8601.
 *
 * @category utils
 */
export const isoTimestamp = (value: unknown): string | undefined => {
  if (typeof value === "number" && Number.isFinite(value)) {
    const date = new Date(value)
    return Number.isNaN(date.getTime()) ? undefined : date.toISOString()
  }
  if (typeof value === "string" && value.length > 0) return value
  return undefined
}

/**
 * Why a provider would reject the message (empty, or an assistant message with only reasoning), or undefined:
 * under `strict` such a message fails the import with its line.
 */
const unsendable = (message: Message.Message): string | undefined =>
  MessageParts.isEmptyMessage(message)
    ? `empty ${message.role} message (providers reject empty messages)`
    : MessageParts.isReasoningOnly(message)
      ? "assistant message with only reasoning (an interrupted response; providers reject it)"
      : undefined

/**
 * Creates a builder. `prefix` names derived ids (`<prefix>:<line>`).
 *
 * @category constructors
 */
export const make = (options: {
  source: string
  strict: boolean
  prefix: string
  /** Keep only these `meta` keys (`ImportOptions.metaKeys`); default every key. */
  metaKeys?: ReadonlyArray<string> | undefined
  /**
   * Streams: each entry goes to this sink as soon as it is written and the
   * builder does not hold it (`entries()` stays empty). Ids, parents, issues
   * and sessions are the same as without it; the builder keeps only each
   * id and the id written before it.
   */
  onEntry?: ((entry: Entry.Entry) => void) | undefined
}): EntryBuilder => {
  const metaOf = (full: Meta | undefined): Meta | undefined => {
    if (full === undefined || options.metaKeys === undefined) return full
    const kept: Record<string, Message.JsonValue> = {}
    for (const key of options.metaKeys) if (full[key] !== undefined) kept[key] = full[key]
    return kept
  }
  const entries: Array<Entry.Entry> = []
  const issues: Array<ImportIssue> = []
  const sessions: Array<{
    sessionId: string
    firstEntryId: string | null
    entryCount: number
    startedAt: string | null
  }> = []
  // every id written → the id written just before it (null for the first)
  const ids = new Map<string, string | null>()
  let count = 0
  let previousId: string | null = null
  let previousTimestamp = EPOCH
  let sessionStart = true

  const skip = (line: number, reason: string): void => {
    if (options.strict)
      throw new Errors.TranscriptCorrupt({ source: options.source, ...(line > 0 ? { line } : {}), reason })
    issues.push({ line, action: "skipped", reason })
  }

  const uniqueId = (line: number, wanted: string | undefined): string => {
    const base = wanted ?? `${options.prefix}:${line}`
    if (!ids.has(base)) return base
    let n = 2
    while (ids.has(`${base}#${n}`)) n++
    const id = `${base}#${n}`
    if (wanted !== undefined)
      issues.push({ line, action: "repaired", reason: `duplicate entry id ${base} renamed ${id}` })
    return id
  }

  const push = <E extends Entry.Entry>(
    line: number,
    body: Record<string, unknown>,
    header: EntryHeader = {}
  ): string => {
    if (sessions.length === 0) startSession(options.prefix)
    const id = uniqueId(line, header.id)
    const parentId = header.parentId !== undefined ? header.parentId : sessionStart ? null : previousId
    const timestamp = isoTimestamp(header.timestamp) ?? previousTimestamp
    const entry = Entry.make({ id, parentId, timestamp, meta: metaOf(header.meta) }, body as Entry.Body) as E
    if (options.onEntry === undefined) entries.push(entry)
    else options.onEntry(entry)
    ids.set(id, previousId)
    count++
    const session = sessions[sessions.length - 1]!
    if (session.firstEntryId === null) session.firstEntryId = id
    session.entryCount++
    previousId = id
    previousTimestamp = timestamp
    sessionStart = false
    return id
  }

  const startSession = (sessionId: string, startedAt?: string | number): void => {
    sessions.push({ sessionId, firstEntryId: null, entryCount: 0, startedAt: isoTimestamp(startedAt) ?? null })
    sessionStart = true
  }

  return {
    source: options.source,
    strict: options.strict,
    startSession,
    renameSession: (sessionId) => {
      const session = sessions[sessions.length - 1]
      if (session !== undefined) session.sessionId = sessionId
    },
    message: (line, message, header) => {
      // Strict: a message no provider accepts fails with its line. Lenient: the transcript keeps it as recorded
      // (the real sessions' message counts include them); the request path never sends it (normalize stage).
      const problem = options.strict ? unsendable(message) : undefined
      if (problem !== undefined)
        throw new Errors.TranscriptCorrupt({
          source: options.source,
          ...(line > 0 ? { line } : {}),
          reason: problem,
          strictOnly: true
        })
      // Sealed (MessageSeal): an entry's message never changes, so the measurer keeps no shape to re-check it.
      return push(line, { kind: "message", message: MessageSeal.seal(message) }, header)
    },
    checkpoint: (line, checkpoint, header) => push(line, { kind: "checkpoint", checkpoint }, header),
    event: (line, name, data, header) =>
      push(line, { kind: "event", event: data === undefined ? { name } : { name, data } }, header),
    skip,
    note: (issue) => {
      if (issue.action === "skipped") skip(issue.line, issue.reason)
      else issues.push(issue)
    },
    entries: () => entries,
    count: () => count,
    issues: () => issues,
    sessions: () => sessions,
    lastId: () => previousId,
    has: (id) => ids.has(id),
    idBefore: (id) => ids.get(id) ?? null
  }
}

/**
 * Parses one JSONL line. Returns the value, or `undefined` after recording
 * why the line was skipped (invalid JSON; truncated final line).
 *
 * @category utils
 */
export const parseJsonLine = (
  builder: EntryBuilder,
  text: string,
  line: number,
  unterminated: boolean
): unknown | undefined => {
  try {
    return JSON.parse(text)
  } catch (error) {
    builder.skip(
      line,
      unterminated
        ? `truncated final line (no trailing newline, invalid JSON: ${(error as Error).message})`
        : `invalid JSON: ${(error as Error).message}`
    )
    return undefined
  }
}

/**
 * A JSON object (not null, not an array)?
 *
 * @category guards
 */
export const isObject = (u: unknown): u is Record<string, unknown> =>
  typeof u === "object" && u !== null && !Array.isArray(u)

/**
 * Removes `undefined` values so the object is a valid `JsonObject`.
 *
 * @category utils
 */
export const meta = (fields: Record<string, unknown>): Meta => {
  const out: Record<string, Message.JsonValue> = {}
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) out[key] = value as Message.JsonValue
  return out
}
