/**
 * The steps every file and text import shares (internal to the package):
 * opening and checking a file, choosing its format, turning failures into
 * the typed import errors, and the checks on what was imported.
 *
 * @since 0.6.0
 */
import { readFileSync } from "node:fs"
import { stat } from "node:fs/promises"
import { Errors } from "@context-engine/core"
import * as Detect from "./Detect.ts"
import type * as EntryBuilder from "./EntryBuilder.ts"
import type { Format } from "./Format.ts"
import {
  type FormatId,
  FormatMismatch,
  FormatNotDetected,
  type ImportIssue,
  type ImportOptions,
  type ImportResult,
  TranscriptUnreadable
} from "./ImportResult.ts"
import * as LineSource from "./LineSource.ts"

/**
 * Errors of the import functions.
 *
 * @category errors
 */
export type ImportError = Errors.TranscriptCorrupt | FormatNotDetected | FormatMismatch | TranscriptUnreadable

/** Options of a file import (`Import.FileOptions`). */
export interface FileOptions extends ImportOptions {
  /** A format id, or `"auto"` (default) to detect it from the content. */
  readonly format?: FormatId | "auto" | undefined
  /** Called after each chunk with bytes read and the file size in bytes. */
  readonly onProgress?: LineSource.OnProgress | undefined
}

export const tried = Detect.all.map((format) => format.id)

const PROBLEMS: Record<string, TranscriptUnreadable["problem"]> = {
  ENOENT: "not-found",
  ENOTDIR: "not-found",
  EISDIR: "is-a-directory",
  EACCES: "permission-denied",
  EPERM: "permission-denied"
}

const specialKind = (stats: {
  isFIFO(): boolean
  isCharacterDevice(): boolean
  isBlockDevice(): boolean
  isSocket(): boolean
}): string =>
  stats.isFIFO()
    ? "a FIFO"
    : stats.isCharacterDevice()
      ? "a character device"
      : stats.isBlockDevice()
        ? "a block device"
        : stats.isSocket()
          ? "a socket"
          : "a special file"

export const toImportError = (source: string, error: unknown): ImportError => {
  if (
    error instanceof Errors.TranscriptCorrupt ||
    error instanceof FormatNotDetected ||
    error instanceof FormatMismatch ||
    error instanceof TranscriptUnreadable
  )
    return error
  const code = (error as { code?: unknown } | null)?.code
  const detail = error instanceof Error ? error.message : String(error)
  if (typeof code === "string") return new TranscriptUnreadable({ source, problem: PROBLEMS[code] ?? "other", detail })
  return new Errors.TranscriptCorrupt({ source, reason: detail })
}

/**
 * A forced format that recognized nothing in non-empty content is the wrong format: every entry it made is an
 * unknown record it only kept as an event (e.g. a pi session read as Claude Code). Say so instead of returning it.
 */
export const checkForced = (imported: ImportResult, explicit: boolean): ImportResult => {
  mismatchUnlessRecognized(imported.issues, imported.transcript.entries.length, explicit, imported)
  return imported
}

const mismatchUnlessRecognized = (
  issues: ReadonlyArray<ImportIssue>,
  entries: number,
  explicit: boolean,
  at: { readonly source: string; readonly format: FormatId; readonly lines: number }
): void => {
  const unknown = issues.filter((issue) => issue.action === "kept-as-event").length
  if (!explicit || entries > unknown) return
  const first = issues.find((issue) => issue.action === "skipped")
  throw new FormatMismatch({
    source: at.source,
    format: at.format,
    lines: at.lines,
    firstIssue: first === undefined ? null : { line: first.line, reason: first.reason }
  })
}

/** {@link checkForced} for a streamed import: the builder counted the entries it did not keep. */
export const checkForcedCount = (
  builder: EntryBuilder.EntryBuilder,
  explicit: boolean,
  format: FormatId,
  source: string,
  lines: number
): void => mismatchUnlessRecognized(builder.issues(), builder.count(), explicit, { source, format, lines })

/** A forced format whose markers the content lacks, where auto-detection finds `detected` instead. */
export const rejected = (source: string, format: Format, detected: FormatId): FormatMismatch =>
  new FormatMismatch({
    source,
    format: format.id,
    lines: 0,
    firstIssue: null,
    markers: format.markers,
    detected
  })

export const result = (
  format: Format,
  builder: EntryBuilder.EntryBuilder,
  counts: { lines: number; bytes: number }
): ImportResult => {
  const sessions = builder.sessions()
  return {
    format: format.id,
    source: builder.source,
    transcript: { sessionId: sessions[0]?.sessionId ?? format.prefix, entries: builder.entries() },
    sessions,
    issues: builder.issues(),
    lines: counts.lines,
    bytes: counts.bytes
  }
}

/**
 * The format to read `text` (the first 64 KiB) as. A forced format stands unless its detector rejects the content
 * and auto-detection finds another format (`whole` reads the full text when that needs a JSON parse): then nothing
 * would be read as meant, so it is a `FormatMismatch` in strict and lenient mode alike.
 */
export const choose = (
  source: string,
  text: string,
  wanted: FormatId | "auto" | undefined,
  whole: () => string
): Format | "document" => {
  if (wanted !== undefined && wanted !== "auto") {
    const forced = Detect.byId(wanted)
    const detected = text.trim().length === 0 ? undefined : Detect.forcedMismatch(forced, Detect.sample(text), whole)
    if (detected !== undefined) throw rejected(source, forced, detected)
    return forced
  }
  const detected = Detect.detectSample(Detect.sample(text))
  if (detected === undefined)
    throw new FormatNotDetected({ source, tried, detail: "no format's markers appear in the first 64 KiB" })
  return detected
}

export const checkContent = (source: string, head: Buffer, size: number, strict: boolean, explicit: boolean): void => {
  const binary = LineSource.binaryReason(head)
  if (binary !== undefined) throw new Errors.TranscriptCorrupt({ source, reason: `binary file: ${binary}` })
  if (size === 0 || head.toString("utf8").trim().length === 0) {
    if (strict || !explicit) throw new Errors.TranscriptCorrupt({ source, reason: `file is empty (${size} bytes)` })
  }
}

export const emptyResult = (format: Format, source: string, bytes: number): ImportResult => ({
  format: format.id,
  source,
  transcript: { sessionId: format.prefix, entries: [] },
  sessions: [],
  issues: [{ line: 0, action: "skipped", reason: `file is empty (${bytes} bytes)` }],
  lines: 0,
  bytes
})

/** A regular file, read far enough to know its format (`choose`); `empty` when it holds only whitespace. */
export interface Opened {
  readonly source: string
  readonly strict: boolean
  readonly explicit: boolean
  readonly size: number
  readonly format: Format | "document"
  readonly empty: boolean
}

export const open = async (path: string, options: FileOptions): Promise<Opened> => {
  const source = options.source ?? path
  const strict = options.strict ?? false
  const stats = await stat(path)
  if (stats.isDirectory())
    throw new TranscriptUnreadable({ source, problem: "is-a-directory", detail: `EISDIR: ${path} is a directory` })
  // A FIFO blocks the read forever and a device never ends: only regular files are read.
  if (!stats.isFile())
    throw new TranscriptUnreadable({ source, problem: "not-a-regular-file", detail: specialKind(stats) })
  const size = stats.size
  const head = LineSource.head(path)
  const explicit = options.format !== undefined && options.format !== "auto"
  checkContent(source, head, size, strict, explicit)
  const text = head.toString("utf8")
  const format = choose(source, text, options.format, () => readFileSync(path, "utf8"))
  return { source, strict, explicit, size, format, empty: format !== "document" && text.trim().length === 0 }
}
