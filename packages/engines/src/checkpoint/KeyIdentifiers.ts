/**
 * The code identifiers a covered range worked with — function and type
 * names, variables, config keys, constants (`getThinkingBorderColor`,
 * `terminal.integrated.minimumContrastRatio`, `MAX_RETRIES`) — for the
 * checkpoint's Exact Identifiers section. Peers ask their summarizing model
 * for the same: Claude Code's compact prompt has sections for the key
 * technical concepts and for the files and code sections, with function
 * signatures, and says to weigh the most recent messages; pi's asks to keep
 * exact function names (with file paths and error messages); Codex's
 * handoff asks for the critical references needed to continue. An
 * extractive checkpoint cannot judge importance, so it ranks by use:
 *
 * - a candidate is a code-shaped word (camelCase, PascalCase of two humps
 *   or more, snake_case, SCREAMING_SNAKE, and dotted chains holding one)
 *   written by the agent — its text and its tool-call inputs — or by the
 *   user in their own words, without a leading receiver (`this.`, `self.`); file names are left to the path extraction and
 *   the artifact ledger, reasoning is skipped (summaries omit thinking);
 * - its weight is the number of covered turns (a user request and the
 *   work on it) in which it was written, then the number of messages: an
 *   identifier the session came back to across several requests is part of
 *   its working vocabulary, while a file rewritten in ten calls of one turn
 *   names the same things ten times; it must be written in
 *   {@link MIN_MESSAGES} messages at least — one passing mention is not
 *   something the work kept using;
 * - the heaviest first, then the most recently written first.
 *
 * Tool results do not count: a file read lists every name in the file, most
 * of which the agent never touched (the same rule as
 * `IdentifierExtraction.fromMessages`).
 *
 * @since 0.3.0
 */
import { IdentifierExtraction, JsonSafety, type Message, MessageParts, UserSpeech } from "@context-engine/core"
import type { CoveredItem } from "../Summarizer.ts"

/**
 * Fewest covered messages that must mention an identifier (own rule: one
 * mention is a passing reference, a second shows the work came back to it).
 *
 * @category constants
 */
export const MIN_MESSAGES = 2

/**
 * Most identifiers a range contributes, before the budget fill
 * (`Fit.fitToBudget`) keeps the top of the ranking that fits.
 *
 * @category constants
 */
export const MAX_IDENTIFIERS = 60

/** Longest identifier kept, in characters (longer code-shaped words are encoded data, not names). */
const MAX_CHARS = 80

const CODE_WORD =
  "[a-z][a-z0-9]*(?:[A-Z][a-z0-9]*)+|[A-Z][a-z0-9]+(?:[A-Z][a-z0-9]*)+|[a-z][a-z0-9]*(?:_[a-z0-9]+)+|[A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+"
const SEGMENT = "[A-Za-z_$][\\w$]*"
/** A code word, alone or inside a dotted chain (`theme.fg`, `terminal.integrated.minimumContrastRatio`). */
const IDENTIFIER_RE = new RegExp(
  `(?<![\\w$./\\\\@#-])(?:${SEGMENT}\\.)*(?:${CODE_WORD})(?:\\.${SEGMENT})*(?![\\w$/\\\\-])`,
  "g"
)

/**
 * The receiver keyword a member access starts with: `this.` (JavaScript,
 * TypeScript, Java, C#, C++) and `self.` (Python, Rust, Swift). It names the
 * object the code runs in, not the member: `this.retryCount` is recorded as
 * `retryCount`, the name a declaration or a search shows.
 */
const RECEIVER_RE = /^(?:this|self)\./

const isName = (word: string): boolean =>
  word.length <= MAX_CHARS && !IdentifierExtraction.isFileName(word) && (word.match(/\d/g)?.length ?? 0) <= 4

/**
 * The code identifiers in a text, each once.
 *
 * @category extraction
 */
export const fromText = (text: string): Set<string> => {
  const found = new Set<string>()
  for (const match of text.matchAll(IDENTIFIER_RE)) {
    const word = match[0].replace(RECEIVER_RE, "")
    if (isName(word)) found.add(word)
  }
  return found
}

/** A heredoc's delimiter (`<<EOF`, `<<'END_OF_FILE'`, `<<-MARK`): group 2. */
const HEREDOC_RE = /<<-?\s*(['"]?)([A-Za-z_]\w*)\1/g
/**
 * The lone word on the last line of the fenced block that ends a message:
 * the terminator of a text action's input (SWE-agent's `edit 12:15 … end_of_edit`,
 * its interface's heredoc), group 1.
 */
const CLOSING_WORD_RE = /\n[ \t]*([A-Za-z_]\w*)[ \t]*\n```[ \t]*$/

/**
 * A text without its input delimiters — a heredoc's delimiter word and a text
 * action's terminator line ({@link HEREDOC_RE}, {@link CLOSING_WORD_RE}): the
 * syntax that ends a command's input, not a name the work uses.
 */
const withoutDelimiters = (text: string): string => {
  const words = new Set([...text.matchAll(HEREDOC_RE)].map((match) => match[2]!))
  const closing = CLOSING_WORD_RE.exec(text.trimEnd())?.[1]
  if (closing !== undefined) words.add(closing)
  if (words.size === 0) return text
  return text.replace(new RegExp(`(?<![\\w$])(?:${[...words].join("|")})(?![\\w$])`, "g"), " ")
}

/**
 * What a message's author wrote: the agent's text and the string values of
 * its tool-call inputs (not the tool names: `read_file` is the harness's
 * word) without input delimiters ({@link withoutDelimiters}), the user's own
 * words; "" otherwise.
 */
const authored = (message: Message.Message): string => {
  if (message.role === "user") return UserSpeech.spokenText(message)
  if (message.role !== "assistant") return ""
  if (typeof message.content === "string") return withoutDelimiters(message.content)
  return message.content
    .flatMap((part) =>
      part.type === "text"
        ? [withoutDelimiters(part.text)]
        : part.type === "tool-call"
          ? JsonSafety.stringLeaves(part.input).map(withoutDelimiters)
          : []
    )
    .join("\n")
}

/**
 * The range's identifiers by the module's rule, best first, at most
 * {@link MAX_IDENTIFIERS}.
 *
 * @category constructors
 */
export const rank = (items: ReadonlyArray<CoveredItem>): Array<string> => {
  const turns = new Map<string, Set<number>>()
  const messages = new Map<string, number>()
  const last = new Map<string, number>()
  let turn = 0
  items.forEach((item, index) => {
    if (item.message.role === "user" && UserSpeech.isSpeech(item.message)) turn++
    for (const word of fromText(authored(item.message))) {
      turns.set(word, (turns.get(word) ?? new Set()).add(turn))
      messages.set(word, (messages.get(word) ?? 0) + 1)
      last.set(word, index)
    }
  })
  return [...messages.keys()]
    .filter((word) => messages.get(word)! >= MIN_MESSAGES)
    .sort(
      (a, b) =>
        turns.get(b)!.size - turns.get(a)!.size || messages.get(b)! - messages.get(a)! || last.get(b)! - last.get(a)!
    )
    .slice(0, MAX_IDENTIFIERS)
}

/**
 * `identifiers` without those the messages kept verbatim after the
 * checkpoint still show (their plain text as sent, as a substring, the
 * renderer's rule for repeats): the checkpoint does not
 * repeat what the request carries anyway (issue #11 requirement 3).
 *
 * @category combinators
 */
export const notShownIn = (identifiers: ReadonlyArray<string>, kept: ReadonlyArray<Message.Message>): Array<string> => {
  if (identifiers.length === 0 || kept.length === 0) return [...identifiers]
  const shown = kept.map(MessageParts.plainText).join("\n")
  return identifiers.filter((word) => !shown.includes(word))
}
