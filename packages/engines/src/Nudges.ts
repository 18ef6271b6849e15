/**
 * Nudges: notes that tell the model when to collapse its own finished work
 * with the context tools (compactor's design; DESIGN.md "Memory, offload
 * and context tools"). Off by default: {@link wrap} turns any engine into
 * one that adds them, and the wrapped engine (e.g. the tiered-summary
 * engine) stays the safety net at the hard limit.
 *
 * What is added to the assembled request (never to the transcript):
 * - the guideline, a system message after the system prefix;
 * - a usage note when the request reaches `notesAtShares` of the context
 *   window (70 % and 80 %), naming the biggest finished stretches with
 *   their entry ids and sizes; a level fires once and rearms when usage
 *   falls `rearmShare` below it;
 * - milestone notes: a todo marked completed, a finished stretch over
 *   `finishedStretchTokens`, a new request while finished earlier requests
 *   are still in context.
 *
 * Notes go in one user-role message at the end of the request (after the
 * latest user message or tool result, so the request still ends on one and
 * every provider accepts it). One engine per session: the fired levels and
 * milestones live in the instance.
 *
 * @since 0.1.0
 */
import { type ContextEngine, type ContextView, Measurer, type Message, Turns } from "@context-engine/core"
import { Effect } from "effect"

/**
 * Options; shares are of the context window (0..1), tokens in the policy's tokenizer.
 *
 * @category models
 */
export interface Options {
  /** Add the guideline system message (default true). */
  readonly guideline?: boolean
  /** Usage levels that add a note. Default `[0.7, 0.8]` (compactor's 70 % / 80 % notes). */
  readonly notesAtShares?: ReadonlyArray<number>
  /** How far usage must fall below a level before it fires again. Default 0.1 (own choice: ten points). */
  readonly rearmShare?: number
  /** A finished stretch over this many tokens gets a milestone note. Default 25,000 (compactor's ~25K). */
  readonly finishedStretchTokens?: number
  /** Tool names whose calls mark todos (input with `status: "completed"`). Default /todo/i. */
  readonly todoToolPattern?: RegExp
  /** Most stretches a note names. Default 3. */
  readonly maxListed?: number
}

/**
 * The defaults, with their sources in {@link Options}.
 *
 * @category constants
 */
export const defaults = {
  guideline: true,
  notesAtShares: [0.7, 0.8] as ReadonlyArray<number>,
  rearmShare: 0.1,
  finishedStretchTokens: 25_000,
  todoToolPattern: /todo/i,
  maxListed: 3
} as const

/**
 * The guideline text.
 *
 * @category constants
 */
export const GUIDELINE =
  "Context management: when you finish a task or a line of investigation, collapse it with context_rewind " +
  "{from, to?, summary} — keep the results, decisions and open items in the summary. Nothing is lost: " +
  "context_search finds any earlier detail and context_restore reads it back. Prefer rewinding finished work " +
  "over letting the context fill up."

/** Entry-id prefix of the items nudges add. */
export const NOTE_PREFIX = "nudge:"

/**
 * A finished stretch: a turn before the latest user message.
 *
 * @category models
 */
export interface Stretch {
  readonly fromEntryId: string
  readonly toEntryId: string
  readonly tokens: number
  readonly messages: number
}

/**
 * Finished stretches of a view (turns before the latest user message that
 * are not a rewind summary already), with their token counts.
 *
 * @category getters
 */
export const finishedStretches = (
  conversation: ReadonlyArray<ContextView.ViewItem>,
  tokensOf: (item: ContextView.ViewItem) => number
): ReadonlyArray<Stretch> => {
  const latestUser = Turns.latestUserIndex(conversation)
  if (latestUser <= 0) return []
  const finished = conversation.slice(0, latestUser)
  return Turns.turns(finished)
    .map((span) => finished.slice(span.start, span.end))
    .filter((items) => items.length > 1 || !items[0]!.editedBy.includes("context_rewind"))
    .map((items) => ({
      fromEntryId: items[0]!.entryId,
      toEntryId: items.at(-1)!.entryId,
      tokens: items.reduce((total, item) => total + tokensOf(item), 0),
      messages: items.length
    }))
}

const describe = (stretch: Stretch): string =>
  `${stretch.fromEntryId} … ${stretch.toEntryId} (${stretch.messages} messages, ~${stretch.tokens} tokens)`

const LABEL_KEYS = ["content", "title", "task", "text", "id"] as const

/** Labels of every object in a tool-call input with `status: "completed"` (a todo list write). */
const completedIn = (value: unknown, into: Set<string>, depth = 0): void => {
  if (depth > 8 || value === null || typeof value !== "object") return
  if (Array.isArray(value)) {
    for (const element of value) completedIn(element, into, depth + 1)
    return
  }
  const record = value as Record<string, unknown>
  if (record.status === "completed") {
    const label = LABEL_KEYS.map((key) => record[key]).find((candidate) => typeof candidate === "string")
    if (typeof label === "string") into.add(label.slice(0, 120))
  }
  for (const element of Object.values(record)) completedIn(element, into, depth + 1)
}

const completedTodos = (conversation: ReadonlyArray<ContextView.ViewItem>, pattern: RegExp): ReadonlySet<string> => {
  const done = new Set<string>()
  for (const item of conversation) {
    const content = item.message.content
    if (item.message.role !== "assistant" || typeof content === "string") continue
    for (const part of content)
      if (part.type === "tool-call" && pattern.test(part.toolName)) completedIn(part.input, done)
  }
  return done
}

/**
 * Wraps an engine: same methods, and `assembleContext` adds the guideline
 * and the notes due (see the module docs).
 *
 * @category constructors
 */
export const wrap = (engine: ContextEngine.ContextEngine, options: Options = {}): ContextEngine.ContextEngine => {
  const settings = { ...defaults, ...options }
  const armed = new Map(settings.notesAtShares.map((share) => [share, true]))
  const noted = new Set<string>()
  const todosSeen = new Set<string>()
  let latestUserId: string | undefined

  const notesFor = (view: ContextView.ContextView, measurer: Measurer.Measurer, usedShare: number): Array<string> => {
    const conversation = view.items.filter((item) => item.source === "transcript" || item.source === "synthetic")
    const conversationOnly = conversation.filter((item) => item.message.role !== "system")
    const stretches = finishedStretches(conversationOnly, (item) => measurer.messageTokens(item.message, item.source))
    const biggest = [...stretches].sort((a, b) => b.tokens - a.tokens).slice(0, settings.maxListed)
    const notes: Array<string> = []
    for (const share of [...armed.keys()].sort((a, b) => b - a)) {
      if (usedShare >= share && armed.get(share)) {
        for (const lower of armed.keys()) if (lower <= share) armed.set(lower, false)
        notes.push(
          `The context is ${Math.round(usedShare * 100)}% full.${biggest.length > 0 ? ` Biggest finished stretches: ${biggest.map(describe).join("; ")}. Collapse what you no longer need verbatim with context_rewind.` : ""}`
        )
        break
      }
    }
    for (const [share, isArmed] of armed)
      if (!isArmed && usedShare < share - settings.rearmShare) armed.set(share, true)
    for (const stretch of stretches) {
      if (stretch.tokens < settings.finishedStretchTokens || noted.has(`big:${stretch.fromEntryId}`)) continue
      noted.add(`big:${stretch.fromEntryId}`)
      notes.push(
        `A finished stretch is large: ${describe(stretch)}. Consider context_rewind {"from":"${stretch.fromEntryId}","to":"${stretch.toEntryId}"}.`
      )
    }
    for (const todo of completedTodos(conversationOnly, settings.todoToolPattern)) {
      if (todosSeen.has(todo)) continue
      todosSeen.add(todo)
      notes.push(`Todo completed: "${todo}". If its work is finished, collapse it with context_rewind.`)
    }
    const latest = conversationOnly[Turns.latestUserIndex(conversationOnly)]?.entryId
    if (latest !== undefined && latest !== latestUserId) {
      if (latestUserId !== undefined && stretches.length > 0)
        notes.push(
          `A new request started while finished earlier requests are still in context: ${stretches.slice(-settings.maxListed).map(describe).join("; ")}.`
        )
      latestUserId = latest
    }
    return notes
  }

  const assembleContext: ContextEngine.ContextEngine["assembleContext"] = (input) =>
    Effect.gen(function* () {
      const assembled = yield* engine.assembleContext(input)
      const measurer = Measurer.forPolicy(input.policy)
      const usedShare = assembled.measurement.inputTokens / input.policy.contextWindowTokens
      const notes = notesFor(assembled.view, measurer, usedShare)
      const items = [...assembled.view.items]
      if (settings.guideline) {
        const at = items.findIndex((item) => item.message.role !== "system")
        const guideline: ContextView.ViewItem = {
          entryId: `${NOTE_PREFIX}guideline`,
          message: { role: "system", content: GUIDELINE },
          source: "synthetic",
          editedBy: ["nudges"]
        }
        items.splice(at === -1 ? items.length : at, 0, guideline)
      }
      if (notes.length > 0) {
        const note: Message.Message = { role: "user", content: `[context note]\n${notes.join("\n")}` }
        items.push({ entryId: `${NOTE_PREFIX}note`, message: note, source: "synthetic", editedBy: ["nudges"] })
      }
      if (items.length === assembled.view.items.length) return assembled
      // The added items count in the request (measured with the policy's tokenizer).
      const added = items
        .filter((item) => item.entryId.startsWith(NOTE_PREFIX))
        .reduce((total, item) => total + measurer.messageTokens(item.message, item.source), 0)
      return {
        messages: items.map((item) => item.message),
        view: { items, tools: assembled.view.tools },
        measurement: { ...assembled.measurement, inputTokens: assembled.measurement.inputTokens + added }
      }
    })

  return { ...engine, assembleContext }
}
