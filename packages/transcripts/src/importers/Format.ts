/**
 * The contract every importer module implements, and the content sample
 * that format detection looks at.
 *
 * @since 0.1.0
 */
import type { EntryBuilder } from "./EntryBuilder.ts"
import type { FormatId } from "./ImportResult.ts"
import type { LineSink } from "./LineSource.ts"

/**
 * The start of a file, as detection sees it.
 *
 * @category models
 */
export interface Sample {
  /** Up to the first 64 KiB, decoded as UTF-8. */
  readonly text: string
  /** The first non-empty line parsed as JSON, when it parses to an object. */
  readonly firstRecord: Record<string, unknown> | undefined
}

/**
 * A line-oriented importer (JSONL and text formats).
 *
 * @category models
 */
export interface LineFormat {
  readonly id: FormatId
  readonly kind: "lines"
  /** Prefix of derived entry ids. */
  readonly prefix: string
  /** This format's markers in words, as `detect` looks for them (named by `FormatMismatch` when a forced format has none). */
  readonly markers: string
  /** Whether the sample carries this format's markers. */
  readonly detect: (sample: Sample) => boolean
  readonly start: (builder: EntryBuilder) => LineSink
}

/**
 * A whole-document JSON importer. The document is parsed once by the
 * caller and handed over as a value.
 *
 * @category models
 */
export interface DocumentFormat {
  readonly id: FormatId
  readonly kind: "document"
  readonly prefix: string
  /** This format's markers in words, as `detect` looks for them (named by `FormatMismatch` when a forced format has none). */
  readonly markers: string
  /** Whether the parsed document has this format's shape. */
  readonly detect: (document: unknown) => boolean
  readonly fromValue: (builder: EntryBuilder, document: unknown) => void
}

/** @category models */
export type Format = LineFormat | DocumentFormat
