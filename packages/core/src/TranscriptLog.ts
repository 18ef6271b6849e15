/**
 * The persisted form of transcript entries: one JSON document per record
 * (a JSONL line or an SQLite row), and a record-by-record decoder that
 * reports every problem with its line and reason (invalid JSON, unknown entry
 * kinds, unsupported schema versions, invalid entries, duplicate ids, parent
 * ids that point nowhere, a torn final line).
 *
 * Binary content is stored in JSON-safe forms: `Uint8Array` and `ArrayBuffer`
 * become base64 strings (the AI SDK's `DataContent` string form) and `URL`
 * objects become their `href`. The `url` of tagged file data
 * (`{ type: "url", url }`) is revived into a `URL` on read, because the
 * schema requires one there; everywhere else the string form is valid as is.
 *
 * @since 0.1.0
 */
import { Exit, Schema } from "effect"
import * as ContentHash from "./ContentHash.ts"
import { toInvalidInput } from "./Decode.ts"
import { CURRENT_SCHEMA_VERSION, Entry } from "./Entry.ts"
import { InvalidInput } from "./Errors.ts"

/**
 * What is wrong with one record.
 *
 * - `torn-line`: the final line has no newline: a write was cut short (crash).
 *   Never acknowledged, so it is ignored with a warning even by strict reads.
 *   When the line is nevertheless complete JSON (only the newline is missing)
 *   it is kept, still with a warning.
 * - `invalid-json`, `unknown-kind`, `unsupported-schema-version`,
 *   `invalid-entry`: the record is skipped by lenient reads.
 * - `duplicate-id`: a later record reuses an id; the first one wins.
 * - `dangling-parent`: `parentId` names no earlier entry; the entry is kept.
 * - `invalid-batch`: a batch record ({@link encodeBatch}) whose checksum or
 *   count does not match its entries; every entry of it is skipped (a batch
 *   is installed whole or not at all).
 *
 * @category models
 */
export type IssueKind =
  | "torn-line"
  | "invalid-json"
  | "unknown-kind"
  | "unsupported-schema-version"
  | "invalid-entry"
  | "duplicate-id"
  | "dangling-parent"
  | "invalid-batch"

/**
 * One problem found while reading a transcript.
 *
 * @category models
 */
export interface TranscriptIssue {
  /** The file path or `sqlite:<file>#<session>`. */
  readonly source: string
  /** 1-based line number (JSONL) or row sequence number (SQLite). */
  readonly line: number
  readonly kind: IssueKind
  readonly reason: string
  readonly entryId?: string
}

/** The entry kinds this build knows. @category constants */
export const KNOWN_KINDS: ReadonlyArray<string> = ["message", "checkpoint", "memory", "edit", "event"]

const toBase64 = (bytes: Uint8Array): string =>
  Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("base64")

const jsonSafe = (value: unknown): unknown => {
  if (value instanceof Uint8Array) return toBase64(value)
  if (value instanceof ArrayBuffer) return toBase64(new Uint8Array(value))
  if (value instanceof URL) return value.href
  if (Array.isArray(value)) return value.map(jsonSafe)
  if (value !== null && typeof value === "object") {
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(value)) if (inner !== undefined) out[key] = jsonSafe(inner)
    return out
  }
  return value
}

const revive = (value: unknown): unknown => {
  if (Array.isArray(value)) return value.map(revive)
  if (value !== null && typeof value === "object") {
    const record = value as Record<string, unknown>
    const out: Record<string, unknown> = {}
    for (const [key, inner] of Object.entries(record)) out[key] = revive(inner)
    if (record.type === "url" && typeof record.url === "string" && URL.canParse(record.url))
      out.url = new URL(record.url)
    return out
  }
  return value
}

const decodeEntryExit = Schema.decodeUnknownExit(Entry)

/**
 * Validates an entry and returns its persisted JSON text (one line, no
 * newline), with binary content converted to JSON-safe forms.
 *
 * @throws InvalidInput when the entry does not match the {@link Entry} schema
 *   (`path` names the bad field).
 * @category encoding
 */
export const encodeEntry = (entry: Entry): string => {
  const safe = jsonSafe(entry)
  const exit = decodeEntryExit(revive(safe))
  if (Exit.isFailure(exit)) throw invalid(exit)
  return JSON.stringify(safe)
}

const invalid = (exit: Exit.Exit<unknown, Schema.SchemaError>): InvalidInput => {
  const reason = Exit.isFailure(exit) ? exit.cause.reasons.find((candidate) => candidate._tag === "Fail") : undefined
  const error = (reason as { readonly error?: Schema.SchemaError } | undefined)?.error
  return error
    ? toInvalidInput("entry", error.issue)
    : new InvalidInput({ what: "entry", path: "", detail: "invalid value" })
}

const describeIssue = (exit: Exit.Exit<unknown, Schema.SchemaError>): string => {
  const error = invalid(exit)
  return `${error.path || "<root>"}: ${error.detail}`
}

/**
 * The outcome of decoding one record: the entry (absent when skipped) and
 * the issues found.
 *
 * @category models
 */
export interface Decoded {
  readonly entry: Entry | undefined
  readonly issues: ReadonlyArray<TranscriptIssue>
}

/**
 * A stateful record decoder for one session: remembers the ids it has seen
 * to report duplicates and dangling parents.
 *
 * @category models
 */
export interface Decoder {
  /** Decodes one record. `torn` marks a final line without a newline. */
  readonly decode: (text: string, line: number, torn?: boolean) => Decoded
  /** Ids seen so far. */
  readonly ids: ReadonlySet<string>
}

/**
 * Creates a {@link Decoder} for records of `source`. `ids` are the entry
 * ids already known (a writer adds the ids it writes itself).
 *
 * @category constructors
 */
export const makeDecoder = (source: string, ids: Set<string> = new Set()): Decoder => {
  const issue = (line: number, kind: IssueKind, reason: string, entryId?: string): TranscriptIssue =>
    entryId === undefined ? { source, line, kind, reason } : { source, line, kind, reason, entryId }
  const skip = (line: number, kind: IssueKind, reason: string, entryId?: string): Decoded => ({
    entry: undefined,
    issues: [issue(line, kind, reason, entryId)]
  })
  const decode = (text: string, line: number, torn = false): Decoded => {
    if (torn) {
      try {
        JSON.parse(text)
      } catch {
        return skip(line, "torn-line", `final line of ${text.length} characters has no newline (interrupted write)`)
      }
      // Only the newline is missing (a hand edit, or a write cut just before it): the line is whole, keep it.
      const whole = decode(text, line, false)
      return {
        entry: whole.entry,
        issues: [issue(line, "torn-line", "final line has no newline but is complete JSON: kept"), ...whole.issues]
      }
    }
    if (text.trim().length === 0) return { entry: undefined, issues: [] }
    let json: unknown
    try {
      json = JSON.parse(text)
    } catch (error) {
      return skip(line, "invalid-json", error instanceof Error ? error.message : String(error))
    }
    if (json === null || typeof json !== "object" || Array.isArray(json)) {
      return skip(line, "invalid-json", "expected a JSON object")
    }
    const record = json as Record<string, unknown>
    const id = typeof record.id === "string" ? record.id : undefined
    if (typeof record.kind !== "string" || !KNOWN_KINDS.includes(record.kind)) {
      return skip(line, "unknown-kind", `unknown entry kind ${JSON.stringify(record.kind)}`, id)
    }
    if (record.schemaVersion !== CURRENT_SCHEMA_VERSION) {
      return skip(
        line,
        "unsupported-schema-version",
        `schemaVersion ${JSON.stringify(record.schemaVersion)} is not ${CURRENT_SCHEMA_VERSION}; treated as absent`,
        id
      )
    }
    const exit = decodeEntryExit(revive(record))
    if (Exit.isFailure(exit)) return skip(line, "invalid-entry", describeIssue(exit), id)
    const entry = exit.value
    if (ids.has(entry.id)) return skip(line, "duplicate-id", `id ${entry.id} already appeared earlier`, entry.id)
    ids.add(entry.id)
    if (entry.parentId !== null && !ids.has(entry.parentId)) {
      return {
        entry,
        issues: [issue(line, "dangling-parent", `parentId ${entry.parentId} names no earlier entry`, entry.id)]
      }
    }
    return { entry, issues: [] }
  }
  return { decode, ids }
}

/** The `frame` value of a batch record. @category constants */
export const BATCH_FRAME = "context-engine.batch"

const BATCH_PREFIX = `{"frame":"${BATCH_FRAME}"`

const checksum = (texts: ReadonlyArray<string>): string => ContentHash.text(texts.join("\n"))

/**
 * Frames several encoded entries ({@link encodeEntry} texts) as one record:
 * `{"frame":"context-engine.batch","schemaVersion":1,"count":N,"checksum":"…","entries":[…]}`,
 * one line. `checksum` is `ContentHash.text` (length and 64-bit hash) of the
 * entry texts joined with `\n`. Stores that cannot commit several records in one transaction (the
 * JSONL file) write a compaction's edits, memory entries and checkpoint as
 * one batch record, so a reader sees all of them or none: a write cut short
 * leaves a torn final line (ignored, then removed by the next writer), and a
 * record whose bytes were damaged fails the checksum (`invalid-batch`).
 *
 * @category encoding
 */
export const encodeBatch = (texts: ReadonlyArray<string>): string =>
  `${BATCH_PREFIX},"schemaVersion":${CURRENT_SCHEMA_VERSION},"count":${texts.length},"checksum":"${checksum(texts)}","entries":[${texts.join(",")}]}`

/**
 * Unpacks a record: a batch record ({@link encodeBatch}) becomes its entry
 * texts (or the reason it is invalid); any other record is itself.
 *
 * @category encoding
 */
export const expandRecord = (
  text: string
): { readonly texts: ReadonlyArray<string> } | { readonly invalid: string } => {
  if (!text.startsWith(BATCH_PREFIX)) return { texts: [text] }
  let frame: { count?: unknown; checksum?: unknown; entries?: unknown }
  try {
    frame = JSON.parse(text) as typeof frame
  } catch (error) {
    return { invalid: `batch record is not JSON: ${error instanceof Error ? error.message : String(error)}` }
  }
  if (!Array.isArray(frame.entries)) return { invalid: "batch record has no entries array" }
  // JSON.stringify(JSON.parse(t)) === t for every t written by JSON.stringify, so the checksum is reproducible.
  const texts = frame.entries.map((entry) => JSON.stringify(entry))
  if (frame.count !== texts.length) return { invalid: `batch count ${String(frame.count)} ≠ ${texts.length} entries` }
  if (frame.checksum !== checksum(texts)) return { invalid: "batch checksum does not match its entries" }
  return { texts }
}
