/**
 * Best-effort importer for Claude Code terminal output copied as text.
 *
 * Heuristics (SOURCES.md, `claude-code-console`):
 *
 * - a box containing `Welcome to Claude Code` starts a session;
 * - a line starting with `> ` starts a user prompt (continuation lines
 *   follow until the next marker) — except inside a code fence (a line
 *   opening with three backticks or tildes) of an assistant text block,
 *   where it is markdown quoted by the model (a quoted report it pasted
 *   verbatim), not the user speaking; the fence ends at its closing line or
 *   with the block;
 * - `⏺ Name(args)` is a tool call (args may continue over lines until the
 *   closing `)`); the `⎿` lines after it are its result (`⎿  Waiting…`
 *   lines are UI chatter and dropped);
 * - any other `⏺ text` starts an assistant text block;
 * - the prompt that opens "This session is being continued from a previous
 *   conversation that ran out of context" is Claude Code's own compaction
 *   summary: a checkpoint (imported, generation by order), not the user's
 *   words — as the JSONL importer reads its `isCompactSummary` record;
 * - everything else continues the current block, or is kept as a
 *   `console.text` event (shell lines before the first banner are dropped).
 *
 * @since 0.1.0
 */
import * as ConsoleBlocks from "./ConsoleBlocks.ts"
import type { LineFormat } from "./Format.ts"

const TOOL = /^⏺ ([A-Za-z_][\w.:-]*)\((.*)$/su
const WAITING = /^\s*⎿\s+Waiting…\s*$/u
/**
 * The prompt Claude Code sends after it compacts a session (its summary follows): "This session is being
 * continued from a previous conversation that ran out of context. The conversation is summarized below:".
 */
const CONTINUED = /^This session is being continued from a previous conversation that ran out of context\b/u
/** A markdown code fence line (CommonMark: three or more backticks or tildes, indented at most three spaces). */
const FENCE = /^ {0,3}(?:`{3,}|~{3,})/u

/**
 * The Claude Code console importer.
 *
 * @category importers
 */
export const format: LineFormat = {
  id: "claude-code-console",
  kind: "lines",
  prefix: "ccc",
  markers: "a line starting `⏺ ` with `⎿` or the `Welcome to Claude Code` banner",
  detect: ({ text }) => /^⏺ /mu.test(text) && (/⎿/u.test(text) || /Welcome to Claude Code/u.test(text)),
  start: (builder) => {
    let block: ConsoleBlocks.Block | undefined
    let inBanner = false
    let openArgs = false
    let inFence = false
    let sessions = 0
    let generation = 0
    const flush = () => {
      if (block?.kind === "user" && CONTINUED.test(block.lines[0] ?? "")) {
        // Claude Code's own compaction: its summary, printed as the prompt that continues the session.
        builder.checkpoint(block.line, {
          id: `ccc:${block.line}`,
          generation: ++generation,
          coveredRange: { fromEntryId: null, toEntryId: builder.lastId() ?? "" },
          firstKeptEntryId: null,
          tokensBefore: 0,
          tokensAfter: 0,
          summarizer: { kind: "imported", promptVersion: "claude-code" },
          text: block.lines.join("\n").trim(),
          createdAt: ""
        })
      } else ConsoleBlocks.emit(builder, "ccc", block)
      block = undefined
      inFence = false
    }
    return {
      line: (raw, line) => {
        if (inBanner) {
          if (raw.includes("Welcome to Claude Code")) {
            builder.startSession(`claude-code-console:${++sessions}`)
            if (block !== undefined) block.line = line
          }
          block?.lines.push(raw)
          if (raw.startsWith("╰")) {
            inBanner = false
            flush()
          }
          return
        }
        if (raw.startsWith("╭")) {
          flush()
          inBanner = true
          block = { kind: "other", line, lines: [raw] }
          return
        }
        if (openArgs && block?.kind === "tool") {
          block.summary += `\n${raw}`
          if (/\)\s*$/u.test(raw)) {
            block.summary = block.summary.replace(/\)\s*$/u, "")
            openArgs = false
          }
          return
        }
        if (block?.kind === "assistant" && FENCE.test(raw)) inFence = !inFence
        else if (raw.startsWith("> ") && !inFence) {
          flush()
          block = { kind: "user", line, lines: [raw.slice(2)] }
          return
        }
        if (raw.startsWith("⏺ ")) {
          flush()
          const tool = TOOL.exec(raw)
          if (tool !== null) {
            const rest = tool[2]!
            openArgs = !/\)\s*$/u.test(rest)
            block = { kind: "tool", line, name: tool[1]!, summary: rest.replace(/\)\s*$/u, ""), lines: [] }
          } else block = { kind: "assistant", line, lines: [raw.slice(2)] }
          return
        }
        if (WAITING.test(raw)) return
        if (block === undefined) {
          // shell lines before the first session banner (the `claude` command itself) are not part of a session
          if (raw.trim().length === 0 || sessions === 0) return
          block = { kind: "other", line, lines: [] }
        }
        if (block.kind === "tool") block.lines.push(raw.replace(/^\s*⎿\s{1,2}/u, ""))
        else block.lines.push(raw)
      },
      end: flush
    }
  }
}
