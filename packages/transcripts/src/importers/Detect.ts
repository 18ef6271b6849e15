/**
 * Format detection by content, never by file extension.
 *
 * Order: JSONL formats are recognised from their first parseable record
 * among the first 20 lines, so a corrupt first line does not hide them (pi: a
 * `session` header or `message` line; Claude Code: `uuid`/`parentUuid`/
 * `sessionId` fields or a `summary` record with `leafUuid`); a file whose
 * content starts with `{` or `[` and is not JSONL is a JSON document,
 * recognised after parsing (SWE-agent `history` + `trajectory`, Anthropic
 * block types, OpenAI `tool_calls` / `tool_call_id` / `choices`, AI SDK part
 * types); text formats by their markers (Claude Code `⏺`/`⎿`, Gemini CLI `✦` and
 * boxed prompts, then aider `# aider chat started at` / `#### `, which
 * assistant markdown in the consoles can also contain).
 *
 * @since 0.1.0
 */
import * as AiderHistory from "./AiderHistory.ts"
import * as AnthropicMessages from "./AnthropicMessages.ts"
import * as ClaudeCode from "./ClaudeCode.ts"
import * as ClaudeCodeConsole from "./ClaudeCodeConsole.ts"
import { isObject } from "./EntryBuilder.ts"
import type { DocumentFormat, Format, LineFormat, Sample } from "./Format.ts"
import * as GeminiCliConsole from "./GeminiCliConsole.ts"
import type { FormatId } from "./ImportResult.ts"
import * as ModelMessages from "./ModelMessages.ts"
import * as OpenAIChat from "./OpenAIChat.ts"
import * as PiSession from "./PiSession.ts"
import * as SweAgent from "./SweAgent.ts"

/**
 * Line formats, in detection order.
 *
 * @category constants
 */
export const lineFormats: ReadonlyArray<LineFormat> = [
  PiSession.format,
  ClaudeCode.format,
  ClaudeCodeConsole.format,
  GeminiCliConsole.format,
  AiderHistory.format
]

/**
 * JSON document formats, in detection order (most specific first; a plain
 * text-only message list is taken as `model-messages`, which imports it
 * identically to the other two).
 *
 * @category constants
 */
export const documentFormats: ReadonlyArray<DocumentFormat> = [
  SweAgent.format,
  AnthropicMessages.format,
  OpenAIChat.format,
  ModelMessages.format
]

/**
 * Every format, for `--format` and error messages.
 *
 * @category constants
 */
export const all: ReadonlyArray<Format> = [...lineFormats, ...documentFormats]

/**
 * The importer for a format id.
 *
 * @category lookups
 */
export const byId = (id: FormatId): Format => all.find((format) => format.id === id)!

/**
 * Builds the detection sample from the start of a file.
 *
 * @category constructors
 */
export const sample = (text: string): Sample => {
  let firstRecord: Record<string, unknown> | undefined
  let looked = 0
  for (const line of text.split("\n", 200)) {
    const trimmed = line.trim()
    if (trimmed.length === 0) continue
    if (++looked > 20 || !trimmed.startsWith("{")) break
    try {
      const value: unknown = JSON.parse(trimmed)
      if (isObject(value)) firstRecord = value
      break
    } catch {
      // a malformed or truncated record (keep looking), or the first line of a multi-line document
    }
  }
  return { text, firstRecord }
}

/**
 * The line format whose markers the sample has, `"document"` for a JSON
 * document, or `undefined`.
 *
 * @category detection
 */
export const detectSample = (input: Sample): LineFormat | "document" | undefined => {
  const jsonl = lineFormats.filter((format) => format.id === "pi" || format.id === "claude-code")
  for (const format of jsonl) if (format.detect(input)) return format
  const start = input.text.trimStart()
  if (start.startsWith("{") || start.startsWith("[")) return "document"
  for (const format of lineFormats) if (!jsonl.includes(format) && format.detect(input)) return format
  return undefined
}

/**
 * The document format whose shape the value has, or `undefined`.
 *
 * @category detection
 */
export const detectDocument = (document: unknown): DocumentFormat | undefined =>
  documentFormats.find((format) => format.detect(document))

const parsedDocument = (text: string): DocumentFormat | undefined => {
  try {
    return detectDocument(JSON.parse(text.trim()))
  } catch {
    return undefined
  }
}

/**
 * What auto-detection makes of content that a forced format's detector
 * rejects: the format id it detects instead, or `undefined` when it detects
 * nothing (then the forced format stands: `--format` is the way to read a file
 * auto-detection cannot place, as `FormatNotDetected` advises). `whole` gives
 * the full text, parsed only when a forced line format meets a JSON document.
 *
 * A plain role/content list detects as `model-messages`, which
 * `openai-chat` and `anthropic-messages` import identically: not a mismatch.
 *
 * @category detection
 */
export const forcedMismatch = (
  format: Format,
  input: Sample | { readonly document: unknown },
  whole?: () => string
): FormatId | undefined => {
  if ("document" in input) {
    if (format.kind !== "document" || format.detect(input.document)) return undefined
    const found = detectDocument(input.document)
    if (found?.id === "model-messages" && (format.id === "openai-chat" || format.id === "anthropic-messages"))
      return undefined
    return found?.id
  }
  const detected = detectSample(input)
  if (detected === undefined) return undefined
  if (format.kind === "document") return detected === "document" ? undefined : detected.id
  if (format.detect(input)) return undefined
  if (detected !== "document") return detected.id
  return whole === undefined ? undefined : parsedDocument(whole())?.id
}
