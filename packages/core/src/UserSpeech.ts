/**
 * What a user-role message is: the user speaking, or data that arrived in a
 * user-role message (DESIGN.md "Checkpoints are handoffs"; shared case C21).
 *
 * Agents put many things in user-role messages that the user never typed as a
 * request: shell-mode output (pi `bashExecution` rendered as "Ran `cmd`" plus
 * a fenced block, Claude Code `<bash-input>` / `<bash-stdout>` records), slash
 * commands and their expanded templates (`/mode`, `<command-name>/compact`,
 * "/hi is running…"), local-command caveats, pasted logs and tracebacks,
 * tool observations of text-action agents (SWE-agent's "[File: …]" screens)
 * and few-shot demonstrations. They are evidence — quoted like tool output —
 * never the goal, an ask or a constraint.
 *
 * The rules read only the message's own text and are format-level (markup the
 * agents emit), never words of a particular conversation.
 *
 * @since 0.2.0
 */
import type { Message } from "./Message.ts"
import * as MessageParts from "./MessageParts.ts"

/**
 * Kinds of user-role text. Only `speech` is the user's own words.
 *
 * @category models
 */
export type Kind =
  | "speech"
  | "shell-output"
  | "slash-command"
  | "command-record"
  | "pasted-log"
  | "observation"
  | "demonstration"
  | "empty"

/** Claude Code's local-command and shell-mode records. */
const COMMAND_RECORD_RE =
  /^\s*<(?:bash-input|bash-stdout|bash-stderr|local-command-stdout|local-command-stderr|local-command-caveat|command-name|command-message|command-args|command-contents|system-reminder|user-prompt-submit-hook)>/i
/** pi's `bashExecution` rendering: "Ran `cmd`" followed by its output. */
const SHELL_RAN_RE = /^\s*Ran `[^`\n]+`\s*(?:\n|$)/
/** A slash command typed at an agent's prompt (`/mode`, `/add a.py`), or its console echo ("/hi is running…"). */
const SLASH_RE = /^\s*\/[\w:.-]+(?:\s[^\n]*)?$/
/** Claude Code console output under a command or tool line ("  ⎿  Compacted. ctrl+r to see full summary"). */
const CONSOLE_ECHO_RE = /^\s*⎿/
const RUNNING_RE = /^\s*\/?[\w:.-]+ is running…?\s*$/
/** Few-shot demonstrations shipped in the first user message of some agents (SWE-agent). */
const DEMONSTRATION_RE =
  /^\s*(?:here is|here's|below is|the following is) (?:a|an|one) (?:demonstration|example (?:trajectory|session|run))\b/i
/** Screens of text-action agents and tool observations echoed as user messages. */
const OBSERVATION_RE =
  /^\s*(?:\[File: [^\]]+\]|Found \d+ match|No matches found|Your (?:command|proposed edit)|Script completed|File updated\.|\(Open file: )/
/** Lines that read as machine output rather than prose (shell prompts — `➜`, `❯`, `~/dir`, `user@host:~$` — included). */
const LOG_LINE_RE =
  /^\s*(?:[➜❯λ]\s|~\/|[\w.-]+@[\w.-]+:\S*\s*[$#%]|[\w./-]+:\d+(?::\d+)?[:\s]|at\s+\S+\s*\(|File "|Traceback|[A-Z][A-Za-z]+(?:Error|Exception)\b|E\s{2,}|\$\s|>\s|[│├└┌─|+]|\d+[:|]\s|[-=#*.]{4,}|\[[\w\s]+\]\s|warning:|error:|note:)/i

/** A line that is only a shell prompt (SWE-agent's `bash-$`, `sh-5.1$`, `user@host:~$`): the environment awaiting a command. */
const PROMPT_ONLY_RE = /^\s*(?:(?:ba|z|k)?sh(?:-[\d.]*)?[$#%]|[\w.-]+@[\w.-]+:\S*\s*[$#%])\s*$/

/** Fewest non-empty lines {@link isPastedLog} weighs. */
const PASTED_LOG_MIN_LINES = 6

/** Lines of code (ending in `;`, `{`, `}` or `)` after a call, or an arrow function). */
const CODE_LINE_RE = /(?:[;{}]|\w\([^()]*\)\)?;?)\s*$|=>/

const prose = (line: string): boolean => {
  const words = line.match(/\b[a-z][a-z']{1,}\b/gi) ?? []
  return (
    words.length >= 4 &&
    !LOG_LINE_RE.test(line) &&
    !CODE_LINE_RE.test(line) &&
    words.join("").length >= line.replace(/\s/g, "").length * 0.6
  )
}

/**
 * Whether a text is mostly pasted machine output: at least 6 non-empty lines
 * of which fewer than a third read as prose, or a code fence holding most of
 * the text after a short prose line.
 *
 * @category guards
 */
export const isPastedLog = (text: string): boolean => {
  // The first lines decide (a pasted log does not turn into prose further down); bounded work on huge pastes.
  const lines = text
    .slice(0, 20_000)
    .split("\n", 400)
    .filter((line) => line.trim().length > 0)
  if (lines.length < PASTED_LOG_MIN_LINES) return false
  const proseLines = lines.filter(prose).length
  return proseLines / lines.length < 1 / 3
}

/**
 * Short output ending in a shell prompt line: a text-action agent's
 * observation too short for {@link isPastedLog} (SWE-agent 0.x sends a
 * command's output followed by `(Open file: …)`, `(Current directory: …)`
 * and `bash-$`; a one-line output such as `344` read as the user's words). A
 * user never types a prompt line; the environment also ends its task
 * message with one, but that message holds the issue and its instructions,
 * never fewer lines than a pasted log needs.
 */
const promptedOutput = (text: string): boolean => {
  if (!PROMPT_ONLY_RE.test(text.slice(text.lastIndexOf("\n") + 1))) return false
  let lines = 0
  for (const line of text.split("\n")) if (line.trim().length > 0 && ++lines >= PASTED_LOG_MIN_LINES) return false
  return true
}

/** A slash command alone, or followed only by the console's echo of its output (`⎿` lines). */
const slashWithEcho = (text: string): boolean => {
  const [first, ...rest] = text.split("\n").filter((line) => line.trim().length > 0)
  return SLASH_RE.test(first!) && rest.every((line) => CONSOLE_ECHO_RE.test(line))
}

/** The data kinds a cleared message can have (every {@link Kind} but speech and empty). */
type DataKind = Exclude<Kind, "speech" | "empty">

/** {@link clearedText}'s opening; the kind it names is what {@link classify} returns for it. */
const CLEARED_RE =
  /^\[Old (shell-output|slash-command|command-record|pasted-log|observation|demonstration) cleared — user-role message\b/

/**
 * The placeholder of a cleared user-role data message, e.g. `[Old
 * observation cleared — user-role message of 5158 characters; full text in
 * transcript entry swe:20]`: what it was, how long, and the transcript entry
 * that holds it (restore it from there). {@link classify} gives it the kind
 * it names, so clearing data never turns it into the user's words.
 *
 * @category constructors
 */
export const clearedText = (kind: DataKind, chars: number, entryId: string): string =>
  `[Old ${kind} cleared — user-role message of ${chars} characters; full text in transcript entry ${entryId}]`

/**
 * Whether a text is a {@link clearedText} placeholder.
 *
 * @category guards
 */
export const isClearedText = (text: string): boolean => CLEARED_RE.test(text.trim())

/**
 * Classifies the text of a user-role message.
 *
 * @category analysis
 */
export const classify = (text: string): Kind => {
  const trimmed = text.trim()
  if (trimmed.length === 0) return "empty"
  const cleared = CLEARED_RE.exec(trimmed)
  if (cleared !== null) return cleared[1] as DataKind
  if (COMMAND_RECORD_RE.test(trimmed)) return "command-record"
  if (SHELL_RAN_RE.test(trimmed)) return "shell-output"
  if (RUNNING_RE.test(trimmed) || slashWithEcho(trimmed)) return "slash-command"
  if (DEMONSTRATION_RE.test(trimmed.slice(0, 300))) return "demonstration"
  if (OBSERVATION_RE.test(trimmed) || promptedOutput(trimmed)) return "observation"
  if (isPastedLog(trimmed)) return "pasted-log"
  return "speech"
}

/**
 * The text a user typed in a message (text parts only; empty for other roles).
 *
 * @category getters
 */
export const userText = (message: Message): string =>
  message.role === "user" ? MessageParts.textOf(message.content) : ""

/**
 * The user's own words in a message: its text when it classifies as
 * `speech`, the prose lines around a pasted log (not its headings),
 * otherwise the empty string.
 *
 * @category getters
 */
export const spokenText = (message: Message): string => {
  const known = spoken.get(message)
  if (known !== undefined) return known
  const text = spokenTextOf(message)
  spoken.set(message, text)
  return text
}

/** Messages are immutable values: their spoken text is computed once. */
const spoken = new WeakMap<Message, string>()

/** Claude Code console logs print the model's thinking ("✻ Thinking…") right after the user's prompt. */
const THINKING_RE = /\n[ \t]*✻ Thinking…[\s\S]*$/

const spokenTextOf = (message: Message): string => {
  const whole = userText(message)
  const thinking = whole.search(THINKING_RE)
  const text = thinking < 0 ? whole : whole.slice(0, thinking).trimEnd()
  const kind = classify(text)
  if (kind === "speech") return text
  // A cleared data message's placeholder reads as prose; it is no one's words.
  if (isClearedText(text)) return ""
  // A pasted log with a question or request around it: the prose lines are the user's words.
  if (kind === "pasted-log")
    return text
      .split("\n")
      .filter((line) => prose(line) && !/^\s*#/.test(line))
      .join("\n")
  return ""
}

/**
 * Whether a message is the user speaking (a user-role message whose text
 * classifies as `speech`).
 *
 * @category guards
 */
export const isSpeech = (message: Message): boolean => spokenText(message).trim().length > 0

/** Claude Code's line appended to an expanded command template that has no `$ARGUMENTS` placeholder. */
const ARGUMENTS_LINE = "\nARGUMENTS: "
/** A Claude Code command record's name and arguments (`<command-name>/review</command-name>`, `<command-args>…`). */
const COMMAND_NAME_RE = /<command-name>\s*([^<\n]+?)\s*<\/command-name>/
const COMMAND_ARGS_RE = /<command-args>([\s\S]*?)<\/command-args>/

/**
 * What the user typed after a slash command whose template was expanded
 * into this message, or `undefined`. Claude Code sends a custom command or
 * skill as two user-role messages: the record of what was typed
 * (`<command-name>/x</command-name><command-args>…</command-args>`, a
 * command record) and the expanded template. A template without
 * `$ARGUMENTS` gets "ARGUMENTS: <what was typed>" appended as its last line
 * (Claude Code docs, slash commands / skills: arguments); a template with
 * the placeholder holds the arguments in place, as the record before it
 * names them. `command`: the command's name from that record, when the
 * previous message is one. The template is the command's instructions; the
 * arguments are the user's own words — the task.
 *
 * @category getters
 */
export const commandArguments = (
  text: string,
  previous: Message | undefined
): { readonly command?: string; readonly arguments: string; readonly template: string } | undefined => {
  const record = previous === undefined ? "" : userText(previous)
  const command = COMMAND_RECORD_RE.test(record) ? COMMAND_NAME_RE.exec(record)?.[1] : undefined
  const named = command === undefined ? {} : { command }
  const at = text.lastIndexOf(ARGUMENTS_LINE)
  if (at >= 0 && text.slice(at + ARGUMENTS_LINE.length).trim().length > 0)
    return { ...named, arguments: text.slice(at + ARGUMENTS_LINE.length).trim(), template: text.slice(0, at).trim() }
  const typed = command === undefined ? undefined : COMMAND_ARGS_RE.exec(record)?.[1]?.trim()
  return typed && text.includes(typed) && text.trim() !== typed
    ? { ...named, arguments: typed, template: text.trim() }
    : undefined
}

/** aider's `/run cmd` and `/test cmd`, Claude Code's `<bash-input>cmd</bash-input>`, pi's "Ran `cmd`". */
const SLASH_RUN_RE = /^\s*\/(?:run|test)\s+(\S[^\n]*)$/
const BASH_INPUT_RE = /^\s*<bash-input>([^<\n]+)<\/bash-input>/
const SHELL_RAN_COMMAND_RE = /^\s*Ran `([^`\n]+)`/

/**
 * The shell command a user-role message records the user running themselves
 * (aider's `/run` and `/test`, Claude Code's `<bash-input>`, pi's shell mode
 * "Ran `cmd`"), or `undefined`.
 *
 * @category getters
 */
export const shellCommand = (message: Message): string | undefined => {
  const text = userText(message).trim()
  const match = SLASH_RUN_RE.exec(text) ?? BASH_INPUT_RE.exec(text) ?? SHELL_RAN_COMMAND_RE.exec(text)
  return match?.[1]?.trim() || undefined
}

/** Questions that ask for work rather than information. */
const REQUEST_RE = /\b(?:can|could|would|will) (?:we|you)\b|\bplease\b|\blet'?s\b|\bhow about\b/i

/** A sentence that tells the agent to do something ("… fix it.", "Now add …"): an imperative at a sentence start. */
const IMPERATIVE_RE =
  /(?:^|[.!?\n]\s*)(?:now\s+|then\s+|so\s+|just\s+)?(?:add|fix|make|create|write|implement|remove|delete|rename|move|update|change|use|run|commit|revert|refactor|read|check|find|show|explain|try|keep|put|go|start|continue|finish|build|test)\b/i

/** Short replies that continue the work rather than set a task. */
const ACK_RE =
  /^\s*(?:ok(?:ay)?|yes|yep|yeah|sure|go(?: ahead)?|continue|proceed|do it|please do|sounds good|great|nice|cool|thanks?(?: you)?|lgtm|y|\d{1,2}|wow|good)[\s.!,]*$/i

/**
 * Whether speech sets or changes a task, rather than acknowledging
 * ("ok", "continue", "1"), reacting or asking for information: at least 5
 * words, not an acknowledgement, not a short question unless it is a
 * request ("can we …?", "could you …?", "please …"), and not a message that
 * opens with a question and asks for nothing (no request, no imperative
 * sentence) at any length.
 *
 * @category guards
 */
export const isTaskSetting = (text: string): boolean => {
  if (ACK_RE.test(text)) return false
  const trimmed = text.trim()
  if (trimmed.endsWith("?") && trimmed.length < 200 && !REQUEST_RE.test(trimmed)) return false
  // A question first and no request anywhere ("why does X clear Y? i would assume …, no?") asks for an answer
  // or steers; it does not set a task, however long.
  if (/^[^.!?\n]*\?/.test(trimmed) && !REQUEST_RE.test(trimmed) && !IMPERATIVE_RE.test(trimmed)) return false
  const words = text.match(/[\p{L}\p{N}_./-]+/gu) ?? []
  return words.length >= 5
}

/**
 * The latest message of a range in the user's own words
 * ({@link spokenText}: shell output, slash commands, pasted logs and
 * observations are skipped — shared case C21) and whether it is unresolved:
 * no assistant text answer (a message with text and no tool call) follows it
 * inside the range.
 *
 * @category analysis
 */
export const latestUserAsk = (
  messages: ReadonlyArray<Message>
): { readonly index: number; readonly text: string; readonly unresolved: boolean } | undefined => {
  for (let index = messages.length - 1; index >= 0; index--) {
    const message = messages[index]!
    const text = spokenText(message).trim()
    if (message.role !== "user" || text.length === 0) continue
    const answered = messages.slice(index + 1).some((later) => {
      if (later.role !== "assistant") return false
      if (typeof later.content === "string") return later.content.trim().length > 0
      return (
        later.content.some((part) => part.type === "text" && part.text.trim().length > 0) &&
        !later.content.some((part) => part.type === "tool-call")
      )
    })
    return { index, text, unresolved: !answered }
  }
  return undefined
}

/**
 * Content words of a text used to recognise it in a summary: lower-cased
 * words of at least 4 letters, first 40 distinct.
 *
 * @category analysis
 */
export const contentWords = (text: string): Array<string> => {
  const words = text.toLowerCase().match(/[\p{L}\p{N}_]{4,}/gu) ?? []
  return [...new Set(words)].slice(0, 40)
}

/**
 * Share (0..1) of `ask`'s content words found in `summary`; 1 when the ask
 * has none.
 *
 * @category analysis
 */
export const askOverlap = (ask: string, summary: string): number => {
  const words = contentWords(ask)
  if (words.length === 0) return 1
  const haystack = summary.toLowerCase()
  return words.filter((word) => haystack.includes(word)).length / words.length
}
