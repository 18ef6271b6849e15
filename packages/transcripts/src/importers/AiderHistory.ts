/**
 * Importer for aider's markdown chat history (`.aider.chat.history.md`).
 *
 * - `# aider chat started at <time>` starts a session (a new parent chain
 *   and a `session.start` event); the file holds many sessions;
 * - a run of `#### ` lines is one user message (prefix and the markdown
 *   line-break `  ` removed);
 * - a run of `> ` lines is aider's own output (command echo, lint and test
 *   output, token reports, applied and failed edits): an `aider.output` event
 *   (`HarnessOutput`), since aider shows it to the user, not the model
 *   (output the user adds to the chat reappears in the next `#### `
 *   message). aider's `append_chat_history` prefixes only the first line of
 *   a multi-line output message, so unprefixed lines that follow output
 *   with no blank line between are output too ("Cost: …" after "Tokens: …");
 * - other lines are assistant markdown (SEARCH/REPLACE edit blocks stay
 *   text: aider has no structured tool calls); the model named in the
 *   session's banner (`Main model: …` / `Model: …`) goes in `meta.model`.
 *
 * Blank lines belong to the block around them and are trimmed at its ends.
 *
 * @since 0.1.0
 */
import { Entry, HarnessOutput } from "@context-engine/core"
import type { EntryBuilder } from "./EntryBuilder.ts"
import type { LineFormat } from "./Format.ts"

const SESSION = /^# aider chat started at (.*)$/u

type Kind = "user" | "output" | "assistant"

const clean = (line: string, prefix: number): string => {
  const body = line.slice(prefix)
  return body.endsWith("  ") ? body.slice(0, -2) : body
}

/** aider's startup banner names the model: `Main model: <id> with …` (≥ 0.50) or `Model: <id> with …`. */
const MODEL = /^(?:Main model|Model): (\S+?)⚡?(?: with |$)/mu

const emit = (
  builder: EntryBuilder,
  kind: Kind,
  line: number,
  lines: ReadonlyArray<string>,
  model: string | undefined
) => {
  const text = lines
    .join("\n")
    .replace(/^\s*\n/u, "")
    .replace(/\s+$/u, "")
  if (kind === "output") {
    if (text.length > 0) builder.event(line, HarnessOutput.AIDER_OUTPUT, { text })
    return
  }
  if (kind === "assistant" && text.length === 0) return
  builder.message(
    line,
    { role: kind, content: [{ type: "text", text }] },
    kind === "assistant" && model !== undefined ? { meta: { model } } : {}
  )
}

const toIso = (stamp: string): string | undefined => {
  const match = /^(\d{4}-\d{2}-\d{2}) (\d{2}:\d{2}:\d{2})$/u.exec(stamp.trim())
  return match ? `${match[1]}T${match[2]}` : undefined
}

/**
 * The aider history importer.
 *
 * @category importers
 */
export const format: LineFormat = {
  id: "aider",
  kind: "lines",
  prefix: "aider",
  markers: "a line `# aider chat started at …` or a `#### ` prompt line",
  detect: ({ text }) => /^# aider chat started at /mu.test(text) || /^#### /mu.test(text),
  start: (builder) => {
    let kind: Kind | undefined
    let startLine = 0
    let lines: Array<string> = []
    let blank = 0
    let model: string | undefined
    const flush = () => {
      if (kind === "output") model = MODEL.exec(lines.join("\n"))?.[1] ?? model
      if (kind !== undefined) emit(builder, kind, startLine, lines, model)
      kind = undefined
      lines = []
      blank = 0
    }
    const add = (next: Kind, line: number, text: string) => {
      if (kind !== next) {
        flush()
        kind = next
        startLine = line
      } else for (; blank > 0; blank--) lines.push("")
      blank = 0
      lines.push(text)
    }
    return {
      line: (raw, line) => {
        if (line === 1 && raw.startsWith("-*- mode:")) return
        const session = SESSION.exec(raw)
        if (session !== null) {
          flush()
          model = undefined
          const startedAt = toIso(session[1]!)
          builder.startSession(`aider:${session[1]!.trim()}`, startedAt)
          builder.event(
            line,
            Entry.SESSION_START_EVENT,
            { startedAt: session[1]!.trim() },
            startedAt ? { timestamp: startedAt } : {}
          )
          return
        }
        if (raw.startsWith("####")) return add("user", line, clean(raw, raw.startsWith("#### ") ? 5 : 4))
        // `> ` (or a bare `>`) marks aider output; `>>>>>>> REPLACE` of an edit block is assistant text
        if (raw.startsWith("> ") || raw === ">") return add("output", line, clean(raw, raw === ">" ? 1 : 2))
        if (raw.trim().length === 0) {
          if (kind === "assistant") blank++
          else if (kind !== undefined) flush()
          return
        }
        // aider prefixes only the first line of a multi-line output message ("Tokens: …" then "Cost: …", a test
        // run's output): an unprefixed line right after output, with no blank line between, continues it.
        if (kind === "output") return add("output", line, clean(raw, 0))
        add("assistant", line, raw)
      },
      end: flush
    }
  }
}
