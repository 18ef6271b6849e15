/**
 * Entry points: import a transcript file, string or parsed value into core
 * entries, detecting the format by content when asked (`format: "auto"`).
 *
 * ```ts
 * import { Import } from "@context-engine/transcripts"
 * const result = await Import.importFilePromise("session.jsonl")
 * console.log(result.format, result.transcript.entries.length, result.issues)
 * ```
 *
 * JSONL and text formats stream the file line by line (64 KiB chunks); JSON
 * document formats read the file once and parse it once.
 *
 * @since 0.1.0
 */
import { readFileSync } from "node:fs"
import { readFile, stat } from "node:fs/promises"
import { Errors } from "@context-engine/core"
import { Effect } from "effect"
import * as Detect from "./Detect.ts"
import * as EntryBuilder from "./EntryBuilder.ts"
import type { DocumentFormat, Format } from "./Format.ts"
import {
  type FormatId,
  FormatMismatch,
  FormatNotDetected,
  type ImportOptions,
  type ImportResult,
  TranscriptUnreadable
} from "./ImportResult.ts"
import * as LineSource from "./LineSource.ts"

/**
 * Options of {@link importFile}.
 *
 * @category models
 */
export interface FileOptions extends ImportOptions {
  /** A format id, or `"auto"` (default) to detect it from the content. */
  readonly format?: FormatId | "auto" | undefined
  /** Called after each chunk with bytes read and the file size in bytes. */
  readonly onProgress?: LineSource.OnProgress | undefined
}

/**
 * Errors of the import functions.
 *
 * @category errors
 */
export type ImportError = Errors.TranscriptCorrupt | FormatNotDetected | FormatMismatch | TranscriptUnreadable

const tried = Detect.all.map((format) => format.id)

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

const toImportError = (source: string, error: unknown): ImportError => {
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
const checkForced = (imported: ImportResult, explicit: boolean): ImportResult => {
  const unknown = imported.issues.filter((issue) => issue.action === "kept-as-event").length
  if (!explicit || imported.transcript.entries.length > unknown) return imported
  const first = imported.issues.find((issue) => issue.action === "skipped")
  throw new FormatMismatch({
    source: imported.source,
    format: imported.format,
    lines: imported.lines,
    firstIssue: first === undefined ? null : { line: first.line, reason: first.reason }
  })
}

/** A forced format whose markers the content lacks, where auto-detection finds `detected` instead. */
const rejected = (source: string, format: Format, detected: FormatId): FormatMismatch =>
  new FormatMismatch({
    source,
    format: format.id,
    lines: 0,
    firstIssue: null,
    markers: format.markers,
    detected
  })

const result = (
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

const parseDocument = (source: string, withMark: string): unknown => {
  const text = LineSource.withoutByteOrderMark(withMark)
  try {
    return JSON.parse(text)
  } catch (error) {
    const message = (error as Error).message
    const position = /position (\d+)/.exec(message)?.[1]
    // V8 appends its own "(line L column C)", which counts a final newline as one more line: drop it, count here
    const what = message.replace(/ at position \d+.*$/, "").replace(/ in JSON$/, "")
    const content = text.trimEnd()
    const atEnd = position === undefined || Number(position) >= content.length
    const offset = atEnd ? content.length : Number(position)
    const before = content.slice(0, offset)
    const line = before.split("\n").length
    const column = offset - before.lastIndexOf("\n")
    throw new Errors.TranscriptCorrupt({
      source,
      ...(content.length > 0 ? { line } : {}),
      reason: atEnd
        ? `invalid JSON document: it ends before the JSON is complete (truncated?): ${what}`
        : `invalid JSON document: ${what} at column ${column}`
    })
  }
}

const runDocument = (
  format: DocumentFormat | undefined,
  document: unknown,
  options: { source: string; strict: boolean; metaKeys?: ReadonlyArray<string> | undefined },
  counts: { lines: number; bytes: number }
): ImportResult => {
  const detected = format === undefined ? undefined : Detect.forcedMismatch(format, { document })
  if (format !== undefined && detected !== undefined) throw rejected(options.source, format, detected)
  const chosen = format ?? Detect.detectDocument(document)
  if (chosen === undefined)
    throw new FormatNotDetected({
      source: options.source,
      tried,
      detail: "the JSON document has none of the known shapes"
    })
  const builder = EntryBuilder.make({ ...options, prefix: chosen.prefix })
  chosen.fromValue(builder, document)
  return result(chosen, builder, counts)
}

/**
 * The format to read `text` (the first 64 KiB) as. A forced format stands unless its detector rejects the content
 * and auto-detection finds another format (`whole` reads the full text when that needs a JSON parse): then nothing
 * would be read as meant, so it is a `FormatMismatch` in strict and lenient mode alike.
 */
const choose = (
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

const checkContent = (source: string, head: Buffer, size: number, strict: boolean, explicit: boolean): void => {
  const binary = LineSource.binaryReason(head)
  if (binary !== undefined) throw new Errors.TranscriptCorrupt({ source, reason: `binary file: ${binary}` })
  if (size === 0 || head.toString("utf8").trim().length === 0) {
    if (strict || !explicit) throw new Errors.TranscriptCorrupt({ source, reason: `file is empty (${size} bytes)` })
  }
}

const emptyResult = (format: Format, source: string, bytes: number): ImportResult => ({
  format: format.id,
  source,
  transcript: { sessionId: format.prefix, entries: [] },
  sessions: [],
  issues: [{ line: 0, action: "skipped", reason: `file is empty (${bytes} bytes)` }],
  lines: 0,
  bytes
})

/**
 * Imports a file. Fails with `TranscriptUnreadable` (missing file, a
 * directory, no permission), `TranscriptCorrupt` (binary or empty file, a
 * malformed line in strict mode), {@link FormatNotDetected}, or
 * `FormatMismatch` (a forced `format` that imported nothing from a
 * non-empty file, or whose markers the file lacks while auto-detection
 * finds another format — an error in strict and lenient mode alike).
 *
 * @category importers
 */
export const importFile = (path: string, options: FileOptions = {}): Effect.Effect<ImportResult, ImportError> => {
  const source = options.source ?? path
  const strict = options.strict ?? false
  return Effect.tryPromise({
    try: async () => {
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
      if (format !== "document" && text.trim().length === 0) return emptyResult(format, source, size)
      if (format === "document" || format.kind === "document") {
        const whole = await readFile(path, "utf8")
        options.onProgress?.(size, size)
        const document = parseDocument(source, whole)
        return checkForced(
          runDocument(
            format === "document" ? undefined : format,
            document,
            { source, strict, metaKeys: options.metaKeys },
            { lines: 0, bytes: size }
          ),
          explicit
        )
      }
      const builder = EntryBuilder.make({ source, strict, prefix: format.prefix, metaKeys: options.metaKeys })
      const counts = await LineSource.fromFile(path, format.start(builder), {
        totalBytes: size,
        onProgress: options.onProgress
      })
      return checkForced(result(format, builder, counts), explicit)
    },
    catch: (error) => toImportError(source, error)
  })
}

/**
 * Promise form of {@link importFile}; rejects with the same typed errors.
 *
 * @category importers
 */
export const importFilePromise = (path: string, options: FileOptions = {}): Promise<ImportResult> =>
  Effect.runPromise(importFile(path, options))

/**
 * Imports transcript text already in memory (same rules as a file).
 *
 * @category importers
 */
export const importText = (
  text: string,
  options: ImportOptions & { readonly format?: FormatId | "auto" | undefined } = {}
): Effect.Effect<ImportResult, ImportError> => {
  const source = options.source ?? "<text>"
  const strict = options.strict ?? false
  return Effect.try({
    try: () => {
      const bytes = Buffer.byteLength(text)
      const explicit = options.format !== undefined && options.format !== "auto"
      checkContent(source, Buffer.from(text.slice(0, 64 * 1024)), bytes, strict, explicit)
      const format = choose(source, text.slice(0, 64 * 1024), options.format, () => text)
      if (format !== "document" && text.trim().length === 0) return emptyResult(format, source, bytes)
      if (format === "document" || format.kind === "document")
        return checkForced(
          runDocument(
            format === "document" ? undefined : format,
            parseDocument(source, text),
            { source, strict, metaKeys: options.metaKeys },
            { lines: 0, bytes }
          ),
          explicit
        )
      const builder = EntryBuilder.make({ source, strict, prefix: format.prefix, metaKeys: options.metaKeys })
      const lines = LineSource.fromString(text, format.start(builder))
      return checkForced(result(format, builder, { lines, bytes }), explicit)
    },
    catch: (error) => toImportError(source, error)
  })
}

/**
 * Synchronous form of {@link importText}: returns the result or throws the
 * typed error.
 *
 * @category importers
 */
export const importTextSync = (
  text: string,
  options: ImportOptions & { readonly format?: FormatId | "auto" | undefined } = {}
): ImportResult => Effect.runSync(importText(text, options))

/**
 * Imports an already-parsed JSON document (OpenAI, Anthropic, AI SDK or
 * SWE-agent shape), detecting the shape unless `format` is given.
 *
 * @category importers
 */
export const importValue = (
  document: unknown,
  options: ImportOptions & { readonly format?: FormatId | "auto" | undefined } = {}
): Effect.Effect<ImportResult, ImportError> => {
  const source = options.source ?? "<value>"
  return Effect.try({
    try: () => {
      const format = options.format !== undefined && options.format !== "auto" ? Detect.byId(options.format) : undefined
      if (format !== undefined && format.kind !== "document")
        throw new Errors.TranscriptCorrupt({ source, reason: `${format.id} is a line format; pass its text instead` })
      return runDocument(
        format,
        document,
        { source, strict: options.strict ?? false, metaKeys: options.metaKeys },
        { lines: 0, bytes: 0 }
      )
    },
    catch: (error) => toImportError(source, error)
  })
}

/**
 * Synchronous form of {@link importValue}: returns the result or throws the
 * typed error.
 *
 * @category importers
 */
export const importValueSync = (
  document: unknown,
  options: ImportOptions & { readonly format?: FormatId | "auto" | undefined } = {}
): ImportResult => Effect.runSync(importValue(document, options))
