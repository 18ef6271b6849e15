/**
 * Best-effort importer for Gemini CLI terminal output copied as text.
 *
 * Heuristics (SOURCES.md, `gemini-cli-console`):
 *
 * - a prompt box at column 0 (`│  > text`, continued by `│    text`) is a
 *   user prompt;
 * - `✦ text` starts an assistant text block (continued by indented lines);
 * - inside an indented tool box (` ╭…╮`), each ` │ ✔  Name summary` line
 *   (status `✔`, `✖`, `-`, `?`, `⊷`, `o`) is a tool call and the ` │    …`
 *   lines after it are its result;
 * - everything else (banner, stats boxes) is kept as `console.text` events;
 * - the model the session runs on, where the console names it, is also a
 *   `model.change` event (`{ modelId }`, as pi's importer records one): the
 *   `Model` row of a stats box (`/stats`, and the summary printed on exit)
 *   and the CLI's fallback notice "Automatically switching from
 *   gemini-2.5-pro to gemini-2.5-flash for … the remainder of this session"
 *   (google-gemini/gemini-cli issues #1460, #2056, #2210). The CLI takes
 *   the latest as the transcript's model, so its window and tokenizer apply.
 *
 * @since 0.1.0
 */
import * as ConsoleBlocks from "./ConsoleBlocks.ts"
import type { LineFormat } from "./Format.ts"

const PROMPT = /^│ {2}> (.*)$/u
const TOOL = /^ ?│ ([✔✖?⊷o-]) {1,2}([A-Z][A-Za-z]+)\s?(.*)$/u
/** A stats box's `Model` row (`│ Model   gemini-2.5-flash   │`), at column 0. */
const MODEL_ROW = /^│ +Model {2,}([a-z][\w.:/-]*) +│\s*$/u
/** The CLI's fallback notice: the model it switched to. */
const SWITCHED = /Automatically switching from \S+ to ([a-z][\w.:/-]*[\w]) /u
const stripBox = (text: string): string => text.replace(/\s*│\s*$/u, "").replace(/\s+$/u, "")

/**
 * The Gemini CLI console importer.
 *
 * @category importers
 */
export const format: LineFormat = {
  id: "gemini-cli-console",
  kind: "lines",
  prefix: "gem",
  markers: "a line starting `✦ `, or a boxed `│  > ` prompt",
  detect: ({ text }) => /^✦ /mu.test(text) || (/^│ {2}> /mu.test(text) && /[╭╰]/u.test(text)),
  start: (builder) => {
    let block: ConsoleBlocks.Block | undefined
    let inToolBox = false
    let started = false
    const flush = () => {
      ConsoleBlocks.emit(builder, "gem", block)
      block = undefined
    }
    return {
      line: (raw, line) => {
        if (!started) {
          builder.startSession("gemini-cli-console")
          started = true
        }
        const prompt = PROMPT.exec(raw)
        if (prompt !== null) {
          flush()
          inToolBox = false
          block = { kind: "user", line, lines: [stripBox(prompt[1]!)] }
          return
        }
        if (/^ ╭/u.test(raw)) {
          flush()
          inToolBox = true
          return
        }
        if (/^ ?╰/u.test(raw)) {
          if (block?.kind !== "assistant") flush()
          inToolBox = false
          return
        }
        if (/^╭/u.test(raw)) {
          flush()
          return
        }
        if (inToolBox) {
          const tool = TOOL.exec(raw)
          if (tool !== null) {
            flush()
            block = { kind: "tool", line, status: tool[1]!, name: tool[2]!, summary: stripBox(tool[3]!), lines: [] }
            return
          }
          if (block?.kind === "tool") block.lines.push(stripBox(raw.replace(/^ ?│ {0,4}/u, "")))
          return
        }
        if (block?.kind === "user" && raw.startsWith("│")) {
          block.lines.push(stripBox(raw.replace(/^│ {4}/u, "")))
          return
        }
        if (raw.startsWith("✦ ")) {
          flush()
          block = { kind: "assistant", line, lines: [raw.slice(2)] }
          return
        }
        if (block?.kind === "assistant") {
          block.lines.push(raw.replace(/^ {2}/u, ""))
          return
        }
        if (raw.trim().length === 0) return
        const model = MODEL_ROW.exec(raw) ?? SWITCHED.exec(raw)
        if (model !== null) {
          // Its own entry, in order: the console text before it, then the model, then the rest of the box.
          if (block?.kind === "other") flush()
          builder.event(line, "model.change", { modelId: model[1]! })
        }
        if (block?.kind !== "other") {
          flush()
          block = { kind: "other", line, lines: [] }
        }
        block.lines.push(raw)
      },
      end: flush
    }
  }
}
