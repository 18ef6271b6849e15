/**
 * What an importer returns: the transcript, where its sessions start, and
 * every line it skipped or kept in a degraded form, with the reason.
 *
 * @since 0.1.0
 */
import type { Entry } from "@context-engine/core"
import { Schema } from "effect"

/**
 * Transcript formats the importers read.
 *
 * - `pi`: pi coding-agent session JSONL (`~/.pi/agent/sessions/…/*.jsonl`, v1–v3);
 * - `claude-code`: Claude Code session JSONL (`~/.claude/projects/<proj>/<session>.jsonl`);
 * - `swe-agent`: SWE-agent `.traj` JSON (function-calling and text-action histories);
 * - `openai-chat`: OpenAI Chat Completions messages / request / response JSON;
 * - `anthropic-messages`: Anthropic Messages request JSON (`system` + `messages`);
 * - `model-messages`: AI SDK `ModelMessage[]` JSON (or `{ messages }`);
 * - `aider`: aider `.aider.chat.history.md`;
 * - `claude-code-console`: Claude Code terminal output copied as text;
 * - `gemini-cli-console`: Gemini CLI terminal output copied as text.
 *
 * @category models
 */
export const FormatId = Schema.Literals([
  "pi",
  "claude-code",
  "swe-agent",
  "openai-chat",
  "anthropic-messages",
  "model-messages",
  "aider",
  "claude-code-console",
  "gemini-cli-console"
])
/** @category models */
export type FormatId = typeof FormatId.Type

/** @category constants */
export const formats: ReadonlyArray<FormatId> = FormatId.literals

/**
 * A line (or record) the importer could not take as it was.
 *
 * - `skipped`: nothing was imported from it (malformed JSON, a record of a
 *   known type with an impossible shape, a truncated final line);
 * - `kept-as-event`: an unknown record type, kept verbatim as an `event`
 *   entry named `<format>.unknown` so the transcript loses nothing;
 * - `repaired`: imported with a stated change (e.g. a duplicate source id
 *   given a suffix).
 *
 * @category schemas
 */
export const ImportIssue = Schema.Struct({
  /** 1-based line number in the source file; 0 for whole-document formats. */
  line: Schema.Number,
  action: Schema.Literals(["skipped", "kept-as-event", "repaired"]),
  reason: Schema.String
})
/** @category models */
export type ImportIssue = typeof ImportIssue.Type

/**
 * One session inside an imported file. Aider histories and terminal logs
 * hold many sessions; each starts a new parent chain (`parentId: null`).
 *
 * @category schemas
 */
export const SessionSpan = Schema.Struct({
  sessionId: Schema.String,
  firstEntryId: Schema.NullOr(Schema.String),
  entryCount: Schema.Number,
  /** ISO 8601, when the source says it. */
  startedAt: Schema.NullOr(Schema.String)
})
/** @category models */
export type SessionSpan = typeof SessionSpan.Type

/**
 * Options of every importer.
 *
 * @category models
 */
export interface ImportOptions {
  /**
   * `true`: the first skipped line fails the import with `TranscriptCorrupt`
   * naming its line. `false` (default): skip it, import the rest and list
   * it in {@link ImportResult.issues}.
   */
  readonly strict?: boolean
  /** Name used in ids and errors; defaults to the file path. */
  readonly source?: string
  /**
   * Keep only these keys of each entry's `meta` (default: every key). A
   * caller that reads none of the source's extra fields — `compact` reads
   * only `model` — need not hold them: pi's tool-result `details` and
   * per-message `usage` are ≈ 18 % of a pi session's bytes and ≈ 20 % of its
   * imported entries' heap (issue #13 req 6).
   */
  readonly metaKeys?: ReadonlyArray<string> | undefined
}

/**
 * An imported transcript.
 *
 * `transcript.entries` are in source order; ids are the source's own ids
 * where it has them (pi `id`, Claude Code `uuid`) and otherwise derived from
 * the line or position (`<prefix>:<line>`), so re-importing gives the same ids.
 *
 * @category models
 */
export interface ImportResult {
  readonly format: FormatId
  readonly source: string
  readonly transcript: { readonly sessionId: string; readonly entries: ReadonlyArray<Entry.Entry> }
  readonly sessions: ReadonlyArray<SessionSpan>
  readonly issues: ReadonlyArray<ImportIssue>
  /** Lines read (JSONL and text formats; 0 when imported from a parsed value). */
  readonly lines: number
  /** Bytes read. */
  readonly bytes: number
}

/**
 * Auto-detection found no format whose markers appear in the content.
 * `tried` lists every format checked, in order.
 *
 * @category errors
 */
export class FormatNotDetected extends Schema.TaggedError<FormatNotDetected>()("FormatNotDetected", {
  source: Schema.String,
  tried: Schema.Array(Schema.String),
  detail: Schema.String
}) {
  override get message(): string {
    return `Could not detect the transcript format of ${this.source} (${this.detail}). Tried: ${this.tried.join(", ")}. Pass --format to choose one.`
  }
}

/**
 * The transcript file cannot be read: it does not exist, is a directory or
 * another special file (a FIFO would block the read forever, a device never
 * ends), or the process may not read it.
 *
 * @category errors
 */
export class TranscriptUnreadable extends Schema.TaggedError<TranscriptUnreadable>()("TranscriptUnreadable", {
  source: Schema.String,
  problem: Schema.Literals(["not-found", "is-a-directory", "not-a-regular-file", "permission-denied", "other"]),
  /** The system error, e.g. `ENOENT: no such file or directory, stat 'x'`. */
  detail: Schema.String
}) {
  override get message(): string {
    switch (this.problem) {
      case "not-found":
        return `Transcript file ${this.source} not found`
      case "is-a-directory":
        return `${this.source} is a directory, not a transcript file`
      case "not-a-regular-file":
        return `${this.source} is not a regular file (${this.detail}); refusing to read it`
      case "permission-denied":
        return `Transcript file ${this.source} is not readable (permission denied)`
      default:
        return `Cannot read transcript file ${this.source}: ${this.detail}`
    }
  }
}

/**
 * A format was forced (not detected) and the content is not of that format.
 * Two cases, both errors in strict and lenient mode (nothing of the file would
 * be read as the caller meant):
 *
 * - `markers` set: the forced format's detector rejects the content — it has
 *   none of that format's markers (`markers` names them: the
 *   format's own `markers`). `detected` is what auto-detection makes of the same content (a
 *   format id, `"a JSON document"`, or `null` for none).
 * - otherwise: the content has none of its records: every line or item was
 *   skipped and nothing was imported. `firstIssue` is the first skip, with its
 *   line (0 for whole documents).
 *
 * @category errors
 */
export class FormatMismatch extends Schema.TaggedError<FormatMismatch>()("FormatMismatch", {
  source: Schema.String,
  format: Schema.String,
  lines: Schema.Number,
  firstIssue: Schema.NullOr(Schema.Struct({ line: Schema.Number, reason: Schema.String })),
  markers: Schema.optionalKey(Schema.String),
  detected: Schema.optionalKey(Schema.NullOr(Schema.String))
}) {
  override get message(): string {
    if (this.markers !== undefined) {
      const detected =
        this.detected === undefined || this.detected === null
          ? "auto-detection recognises no format in it either"
          : `auto-detection says it looks like ${this.detected}`
      const advice =
        this.detected === undefined || this.detected === null || this.detected.includes(" ")
          ? "Pass another --format, or --format auto to detect it."
          : `Pass --format ${this.detected}, or --format auto to detect it.`
      return `${this.source} does not look like ${this.format}: it has none of ${this.format}'s markers (${this.markers}); ${detected}. ${advice}`
    }
    const first =
      this.firstIssue === null
        ? "nothing in it is a record of that format"
        : `${this.firstIssue.line > 0 ? `line ${this.firstIssue.line}: ` : ""}${this.firstIssue.reason}`
    return `${this.source} does not read as ${this.format}: --format ${this.format} imported nothing${this.lines > 0 ? ` from ${this.lines} line(s)` : ""} (${first}). Pass another --format, or --format auto to detect it.`
  }
}
