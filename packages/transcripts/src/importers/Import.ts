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
import { readFile } from "node:fs/promises"
import { type Entry, Errors } from "@context-engine/core"
import { Effect } from "effect"
import * as Detect from "./Detect.ts"
import * as EntryBuilder from "./EntryBuilder.ts"
import type { DocumentFormat } from "./Format.ts"
import { type FormatId, FormatNotDetected, type ImportOptions, type ImportResult } from "./ImportResult.ts"
import * as ImportSteps from "./ImportSteps.ts"
import * as LineSource from "./LineSource.ts"

const {
  checkContent,
  checkForced,
  checkForcedCount,
  choose,
  emptyResult,
  open,
  rejected,
  result,
  toImportError,
  tried
} = ImportSteps

/**
 * Options of {@link importFile}: a format id or `"auto"` (default), and a
 * progress callback (bytes read, file size in bytes).
 *
 * @category models
 */
export type FileOptions = ImportSteps.FileOptions

/**
 * Errors of the import functions.
 *
 * @category errors
 */
export type ImportError = ImportSteps.ImportError

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
 * Imports a file. Fails with `TranscriptUnreadable` (missing file, a
 * directory, no permission), `TranscriptCorrupt` (binary or empty file, a
 * malformed line in strict mode), `FormatNotDetected`, or
 * `FormatMismatch` (a forced `format` that imported nothing from a
 * non-empty file, or whose markers the file lacks while auto-detection
 * finds another format — an error in strict and lenient mode alike).
 *
 * @category importers
 */
export const importFile = (path: string, options: FileOptions = {}): Effect.Effect<ImportResult, ImportError> =>
  Effect.tryPromise({
    try: async () => {
      const { source, strict, explicit, size, format, empty } = await open(path, options)
      if (format !== "document" && empty) return emptyResult(format, source, size)
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
    catch: (error) => toImportError(options.source ?? path, error)
  })

/**
 * What {@link streamFile} resolves to: an {@link ImportResult} whose
 * `transcript.entries` is empty (the entries went to the sink), with the
 * number of entries streamed.
 *
 * @category models
 */
export interface StreamResult extends ImportResult {
  readonly entryCount: number
}

/**
 * The format of a file as {@link importFile} would read it (same checks and
 * errors, nothing imported): `kind` `"lines"` for the formats
 * {@link streamFile} streams, `"document"` for whole-JSON documents.
 *
 * @category importers
 */
export const detectFile = (
  path: string,
  options: FileOptions = {}
): Promise<{ readonly format: FormatId | "document"; readonly kind: "lines" | "document"; readonly bytes: number }> =>
  Effect.runPromise(
    Effect.tryPromise({
      try: async () => {
        const { format, size } = await open(path, options)
        return format === "document"
          ? { format, kind: "document" as const, bytes: size }
          : { format: format.id, kind: format.kind, bytes: size }
      },
      catch: (error) => toImportError(options.source ?? path, error)
    })
  )

/**
 * Streams a line-format file (JSONL and text formats) entry by entry:
 * `onEntry` receives each entry as the format's importer writes it, and
 * nothing holds the entries afterwards, so a caller that keeps only what it
 * needs imports a file of any size in bounded memory. Ids, parents, issues,
 * sessions, lines and bytes are those of {@link importFile}, and so are its
 * errors. A whole-JSON document format (OpenAI, Anthropic, AI SDK JSON,
 * SWE-agent `.traj`) is parsed whole by nature and does not stream: it fails
 * with `TranscriptCorrupt` saying to use {@link importFile} ({@link detectFile}
 * tells the kinds apart first).
 *
 * @category importers
 */
export const streamFile = (
  path: string,
  options: FileOptions,
  onEntry: (entry: Entry.Entry) => void
): Promise<StreamResult> =>
  Effect.runPromise(
    Effect.tryPromise({
      try: async () => {
        const { source, strict, explicit, size, format, empty } = await open(path, options)
        if (format === "document" || format.kind === "document")
          throw new Errors.TranscriptCorrupt({
            source,
            reason: `${format === "document" ? "a JSON document" : format.id} is a whole-document format; it does not stream (import it with importFile)`
          })
        if (empty) return { ...emptyResult(format, source, size), entryCount: 0 }
        const builder = EntryBuilder.make({
          source,
          strict,
          prefix: format.prefix,
          metaKeys: options.metaKeys,
          onEntry
        })
        const counts = await LineSource.fromFile(path, format.start(builder), {
          totalBytes: size,
          onProgress: options.onProgress
        })
        checkForcedCount(builder, explicit, format.id, source, counts.lines)
        return { ...result(format, builder, counts), entryCount: builder.count() }
      },
      catch: (error) => toImportError(options.source ?? path, error)
    })
  )

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
