/**
 * The offline default summarizer: deterministic, no model call. It builds
 * the checkpoint from the transcript's structure — user asks and
 * corrections, tool calls and their outcomes, files read and modified,
 * commands, errors, exact identifiers and the latest unresolved ask — and is
 * held to the same validator as a language-model summary.
 *
 * File classification follows Pi's `extractFileOpsFromMessage` (read tools
 * → read files; edit / write tools → modified files), accumulated across
 * checkpoints like Pi's `CompactionDetails`.
 *
 * @since 0.1.0
 */
import {
  Checkpoint,
  CheckpointRenderer,
  CheckpointValidation,
  IdentifierExtraction,
  type Message,
  MessageParts
} from "@context-engine/core"
import { Effect, Layer } from "effect"
import {
  type CoveredItem,
  mergeContent,
  type SummarizeRequest,
  type Summarizer,
  SummarizerService
} from "./Summarizer.ts"

/**
 * Version of the extraction rules, recorded in `summarizer.promptVersion`.
 *
 * @category constants
 */
export const PROMPT_VERSION = "extractive-v1"

/** Longest quoted user ask, in characters (the validator reads the first 600). */
const ASK_CHARS = 600
/** Longest other quoted item, in characters. */
const ITEM_CHARS = 240
/** User asks quoted in critical context (the most recent ones). */
const RECENT_ASKS = 10
/** Most items kept per list before the token cap trims further. */
const LIST_LIMIT = 40

const READ_TOOL_RE = /^(?:read|read_?file|view|view_?file|cat|open|glob|ls|grep)$/i
const WRITE_TOOL_RE = /(?:edit|write|create|apply_?patch|str_replace|replace|patch|insert)/i
/** Commands that only look (listed under identifiers, not as progress). */
const READ_ONLY_COMMAND_RE =
  /^(?:cd\s+\S+\s*&&\s*)?(?:grep|rg|ls|cat|head|tail|find|wc|pwd|which|echo|tree|sed\s+-n|git\s+(?:status|diff|log|show|branch))\b/
const CONSTRAINT_RE =
  /\b(?:don'?t|do not|never|always|must|should(?:n'?t)?|prefer|instead|make sure|avoid|only|no need|keep)\b/i
const CORRECTION_RE = /^\s*(?:no\b|nope\b|actually\b|wait\b|instead\b|don'?t\b|stop\b|not\b|that'?s wrong|wrong\b)/i
const RATIONALE_RE = /^(.{12,200}?)\s+\b(?:because|since|so that|as)\b\s+(.{8,200})$/i

const clip = (text: string, max: number): string => {
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length <= max ? flat : `${flat.slice(0, max - 1)}…`
}

const sentences = (text: string): Array<string> =>
  text
    .split(/(?<=[.!?])\s+|\n+/)
    .map((sentence) => sentence.trim())
    .filter((sentence) => sentence.length > 0)

const assistantText = (message: Message.Message): string =>
  message.role !== "assistant"
    ? ""
    : typeof message.content === "string"
      ? message.content
      : message.content.flatMap((part) => (part.type === "text" ? [part.text] : [])).join("\n")

const inputPath = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  for (const key of ["path", "file_path", "filePath", "file", "filename"]) {
    const value = record[key]
    if (typeof value === "string" && value.length > 0) return value
  }
  return undefined
}

const inputCommand = (input: unknown): string | undefined => {
  if (typeof input !== "object" || input === null) return undefined
  const record = input as Record<string, unknown>
  for (const key of ["command", "cmd"]) {
    const value = record[key]
    if (typeof value === "string" && value.trim().length > 0 && !/^(?:view|create|str_replace|insert)$/.test(value))
      return value.trim().split("\n")[0]!.slice(0, IdentifierExtraction.MAX_IDENTIFIER_CHARS)
  }
  return undefined
}

interface Outcome {
  readonly isError: boolean
  readonly firstError: string | undefined
}

const outcomes = (items: ReadonlyArray<CoveredItem>): Map<string, Outcome> => {
  const map = new Map<string, Outcome>()
  for (const item of items) {
    if (typeof item.message.content === "string") continue
    for (const part of item.message.content) {
      if (part.type !== "tool-result") continue
      const errors = IdentifierExtraction.fromToolResult(part).errors
      const isError = MessageParts.outputIsError(part.output)
      map.set(part.toolCallId, { isError, firstError: errors[0] })
    }
  }
  return map
}

/**
 * Parses a Markdown summary written elsewhere (an imported Pi compaction)
 * into sections, so it can be carried forward: `## Goal` → goal, headings
 * naming constraints, done / completed, in progress, blocked, decisions,
 * next steps; every other heading's lines go to critical context.
 *
 * @category constructors
 */
export const contentFromMarkdown = (text: string): Checkpoint.CheckpointContent => {
  const content = Checkpoint.emptyContent()
  const out = {
    goal: [] as Array<string>,
    constraints: [] as Array<string>,
    done: [] as Array<string>,
    inProgress: [] as Array<string>,
    blocked: [] as Array<string>,
    decisions: [] as Array<string>,
    nextSteps: [] as Array<string>,
    criticalContext: [] as Array<string>
  }
  let field: keyof typeof out = "criticalContext"
  let heading = ""
  for (const raw of text.split("\n")) {
    const line = raw.trim()
    const match = /^#{1,6}\s+(.*)$/.exec(line)
    if (match) {
      heading = match[1]!.trim()
      const name = heading.toLowerCase()
      field = /goal|objective/.test(name)
        ? "goal"
        : /constraint|preference/.test(name)
          ? "constraints"
          : /in progress|current/.test(name)
            ? "inProgress"
            : /done|complete/.test(name)
              ? "done"
              : /block/.test(name)
                ? "blocked"
                : /decision/.test(name)
                  ? "decisions"
                  : /next/.test(name)
                    ? "nextSteps"
                    : "criticalContext"
      continue
    }
    const item = line.replace(/^(?:[-*]\s+(?:\[[ x]\]\s+)?|\d+\.\s+|\|)/, "").trim()
    if (item.length === 0 || /^[-|: ]+$/.test(item) || item === "(none)") continue
    out[field].push(
      field === "criticalContext" && heading ? `${heading}: ${clip(item, ITEM_CHARS)}` : clip(item, ITEM_CHARS)
    )
  }
  return {
    ...content,
    goal: out.goal.join(" "),
    constraints: out.constraints,
    progress: { done: out.done, inProgress: out.inProgress, blocked: out.blocked },
    decisions: out.decisions.map((decision) => {
      const [head, ...rest] = decision.split(/\s+[-—:]\s+/)
      return { decision: head ?? decision, rationale: rest.join(" — ") || "(from earlier checkpoint)" }
    }),
    nextSteps: out.nextSteps,
    criticalContext: out.criticalContext
  }
}

/**
 * Structured content of the previous checkpoint (parsed from its text when
 * it has no structured content).
 *
 * @category getters
 */
export const previousContent = (
  previous: Checkpoint.Checkpoint | undefined
): Checkpoint.CheckpointContent | undefined =>
  previous === undefined ? undefined : (previous.content ?? contentFromMarkdown(previous.text ?? ""))

/**
 * Extracts content from a covered range alone (no previous checkpoint, no
 * size cap).
 *
 * @category constructors
 */
export const extract = (
  covered: ReadonlyArray<CoveredItem>,
  turnPrefix: ReadonlyArray<CoveredItem> = []
): Checkpoint.CheckpointContent => {
  const all = [...covered, ...turnPrefix]
  const messages = all.map((item) => item.message)
  const results = outcomes(all)
  const asks = all.flatMap((item) => {
    const text = CheckpointValidation.userText(item.message).trim()
    return text.length > 0 ? [{ entryId: item.entryId, text }] : []
  })
  const constraints: Array<string> = []
  const decisions: Array<{ decision: string; rationale: string }> = []
  for (const ask of asks) {
    for (const sentence of sentences(ask.text.slice(0, 4000)))
      if (CONSTRAINT_RE.test(sentence) && sentence.length <= ITEM_CHARS && !sentence.endsWith("?"))
        constraints.push(sentence.replace(/^(?:[-*]\s+|\d+\.\s+)+/, ""))
    if (CORRECTION_RE.test(ask.text))
      decisions.push({ decision: clip(ask.text, ITEM_CHARS), rationale: `user correction (entry ${ask.entryId})` })
  }
  const done: Array<string> = []
  const filesRead: Array<string> = []
  const filesModified: Array<string> = []
  let lastFailure: string | undefined
  let lastAssistant: string | undefined
  for (const item of all) {
    const message = item.message
    if (message.role !== "assistant") continue
    const text = assistantText(message).trim()
    if (text.length > 0) {
      lastAssistant = text
      for (const sentence of sentences(text.slice(0, 4000))) {
        const match = RATIONALE_RE.exec(sentence)
        if (match && /\b(?:will|use|chose|decid|going to|let'?s|instead|should)\w*/i.test(match[1]!))
          decisions.push({ decision: clip(match[1]!, ITEM_CHARS), rationale: clip(match[2]!, ITEM_CHARS) })
      }
    }
    if (typeof message.content === "string") continue
    for (const part of message.content) {
      if (part.type !== "tool-call") continue
      const outcome = results.get(part.toolCallId)
      const path = inputPath(part.input)
      const command = inputCommand(part.input)
      const failed =
        outcome === undefined ? "no result recorded" : outcome.isError ? (outcome.firstError ?? "error") : undefined
      if (path !== undefined && WRITE_TOOL_RE.test(part.toolName) && !/^view$/.test(command ?? "")) {
        if (failed === undefined) {
          filesModified.push(path)
          done.push(`${part.toolName} \`${path}\``)
        }
      } else if (path !== undefined && (READ_TOOL_RE.test(part.toolName) || /view/.test(command ?? ""))) {
        if (failed === undefined) filesRead.push(path)
      } else if (command !== undefined && (failed !== undefined || !READ_ONLY_COMMAND_RE.test(command))) {
        done.push(`ran \`${command}\`${failed === undefined ? "" : ` — failed: ${clip(failed, ITEM_CHARS)}`}`)
      }
      if (failed !== undefined)
        lastFailure = `${part.toolName}${path ? ` \`${path}\`` : command ? ` \`${command}\`` : ""}: ${clip(failed, ITEM_CHARS)}`
      else if (lastFailure?.startsWith(part.toolName)) lastFailure = undefined
    }
  }
  const latest = CheckpointValidation.latestUserAsk(messages)
  const prefixAsk =
    turnPrefix.length > 0 ? CheckpointValidation.latestUserAsk(turnPrefix.map((item) => item.message)) : undefined
  const pendingUserAsks: Array<string> = []
  if (prefixAsk)
    pendingUserAsks.push(`${clip(prefixAsk.text, ASK_CHARS)} (in progress; the turn continues verbatim below)`)
  else if (latest?.unresolved) pendingUserAsks.push(clip(latest.text, ASK_CHARS))
  const inProgress = pendingUserAsks.length > 0 ? [`Working on: ${clip((prefixAsk ?? latest)!.text, ITEM_CHARS)}`] : []
  const criticalContext = asks
    .slice(-RECENT_ASKS)
    .map((ask) => `User asked (entry ${ask.entryId}): "${clip(ask.text, ITEM_CHARS)}"`)
  if (latest && !latest.unresolved)
    criticalContext.push(`Latest user ask (answered): "${clip(latest.text, ASK_CHARS)}"`)
  if (lastAssistant) criticalContext.push(`Last assistant message: ${clip(lastAssistant, ASK_CHARS)}`)
  const nextSteps = [
    ...pendingUserAsks.map((ask) => `Address the pending ask: ${clip(ask, ITEM_CHARS)}`),
    "Continue from the verbatim messages after this checkpoint; re-read files before editing them."
  ]
  return {
    goal: asks[0] ? clip(asks[0].text, ASK_CHARS) : "",
    constraints: dedupe(constraints).map((item) => clip(item, ITEM_CHARS)),
    progress: {
      done:
        dedupe(done).length > 0
          ? dedupe(done)
          : all.length > 0
            ? [`covered ${all.length} messages without tool actions`]
            : [],
      inProgress,
      blocked: lastFailure ? [`last failure — ${lastFailure}`] : []
    },
    decisions,
    nextSteps,
    criticalContext,
    pendingUserAsks,
    identifiers: IdentifierExtraction.fromMessages(messages),
    filesRead: dedupe(filesRead),
    filesModified: dedupe(filesModified)
  }
}

const dedupe = (items: ReadonlyArray<string>): Array<string> => [...new Set(items)]

const tail = <A>(items: ReadonlyArray<A>, count: number): Array<A> => items.slice(Math.max(0, items.length - count))

/**
 * What {@link fitToBudget} knows of the validator's input, so shrinking stays
 * consistent with `CheckpointValidation.validate`.
 *
 * @category models
 */
export interface FitOptions {
  /** The newly covered messages (with a split turn's prefix): the validator's `covered`. */
  readonly covered?: ReadonlyArray<Message.Message> | undefined
  /** Minimum identifier retention; default `CheckpointValidation.DEFAULT_MIN_IDENTIFIER_RETENTION`. */
  readonly minIdentifierRetention?: number | undefined
}

type Content = Checkpoint.CheckpointContent
type IdKey = { readonly category: IdentifierExtraction.Category; readonly value: string }

/** The validator's rules a shrink must not break (a rule already broken before shrinking is not held against it). */
const violationsOf = (options: FitOptions) => {
  const covered = options.covered ?? []
  const ask = CheckpointValidation.latestUserAsk(covered)
  const wanted = IdentifierExtraction.fromMessages(covered)
  const total = IdentifierExtraction.size(wanted)
  const min = options.minIdentifierRetention ?? CheckpointValidation.DEFAULT_MIN_IDENTIFIER_RETENTION
  return {
    wanted,
    of: (content: Content): Set<string> => {
      const out = new Set<string>()
      if (content.goal.trim().length === 0) out.add("goal")
      const progress = content.progress
      if (progress.done.length + progress.inProgress.length + progress.blocked.length === 0) out.add("progress")
      if (content.nextSteps.length === 0) out.add("nextSteps")
      if (covered.length === 0) return out
      const text = CheckpointValidation.contentText(content)
      if (
        ask &&
        CheckpointValidation.askOverlap(ask.text.slice(0, 600), text) < CheckpointValidation.MIN_ASK_WORD_OVERLAP
      )
        out.add("ask")
      const lost = IdentifierExtraction.size(IdentifierExtraction.missingFrom(wanted, text))
      if (total > 0 && (total - lost) / total < min) out.add("identifiers")
      return out
    }
  }
}

const withoutIds = (content: Content, keys: ReadonlyArray<IdKey>): Content => {
  const drop = new Set(keys.map((key) => `${key.category}\u0000${key.value}`))
  const ids = { ...content.identifiers } as { -readonly [K in IdentifierExtraction.Category]: Array<string> }
  for (const category of IdentifierExtraction.categories)
    ids[category] = content.identifiers[category].filter((value) => !drop.has(`${category}\u0000${value}`))
  return { ...content, identifiers: ids }
}

/** A shrink phase: removable items in removal order, and how to remove the first few. */
interface Phase<K> {
  readonly name: string
  readonly candidates: (content: Content) => ReadonlyArray<K>
  readonly remove: (content: Content, keys: ReadonlyArray<K>) => Content
  /** Estimated tokens one item costs. */
  readonly cost: (key: K) => number
  /** Removing more never helps once one removal breaks a rule (the phase ends there). */
  readonly monotone?: boolean
}

/** A list phase: oldest items first, never below `keepLast` items; items addressed by index. */
const listPhase = (
  name: string,
  get: (content: Content) => ReadonlyArray<string>,
  set: (content: Content, keep: (index: number) => boolean) => Content,
  keepLast = 0
): Phase<number> => ({
  name,
  candidates: (content) =>
    get(content)
      .slice(0, Math.max(0, get(content).length - keepLast))
      .map((_, index) => index),
  remove: (content, indices) => {
    const drop = new Set(indices)
    return set(content, (index) => !drop.has(index))
  },
  cost: () => 0
})

/**
 * Shrinks content until its Markdown fits `maxTokens`, without breaking a
 * rule of the validator (`CheckpointValidation.validate`) that the content
 * kept before shrinking: a required section (goal, progress, next steps) is
 * never emptied, the latest user ask stays represented, and, when `covered`
 * is given, identifier retention stays at or above the minimum.
 *
 * Order — what the validator does not require goes first:
 * 1. identifiers quoted verbatim inside another identifier (lossless: they
 *    stay retained);
 * 2. prose, oldest items first: critical context, decisions, done items,
 *    files read, constraints, extra in-progress / blocked / next-step items;
 * 3. identifiers the validator does not ask for (carried from earlier
 *    checkpoints), oldest first;
 * 4. identifiers of the covered range, longest first (the most tokens per
 *    identifier lost), down to the retention minimum.
 *
 * When the rules and the cap cannot both hold, the rules win: the result may
 * exceed `maxTokens` (the engine's validation then decides whether the
 * request still fits; if not, it falls back to deterministic reduction).
 *
 * @category combinators
 */
export const fitToBudget = (
  content: Checkpoint.CheckpointContent,
  maxTokens: number,
  countTokens: (text: string) => number,
  options: FitOptions = {}
): Checkpoint.CheckpointContent => {
  let current: Content = {
    ...content,
    constraints: tail(content.constraints, LIST_LIMIT),
    progress: { ...content.progress, done: tail(content.progress.done, LIST_LIMIT) },
    decisions: tail(content.decisions, LIST_LIMIT / 2),
    criticalContext: tail(content.criticalContext, LIST_LIMIT)
  }
  let tokens = countTokens(CheckpointRenderer.renderContent(current))
  if (tokens <= maxTokens) return current
  const rules = violationsOf(options)
  const allowed = rules.of(content)
  const ok = (candidate: Content): boolean => [...rules.of(candidate)].every((rule) => allowed.has(rule))
  if (!ok(current)) current = content
  const wanted = new Set(
    IdentifierExtraction.flatten(options.covered === undefined ? content.identifiers : rules.wanted).map(
      (item) => item.value
    )
  )
  const idCost = (key: IdKey) => countTokens(key.value) + 2
  const keep = <A>(items: ReadonlyArray<A>, test: (index: number) => boolean) => items.filter((_, index) => test(index))
  const phases: Array<Phase<number> | Phase<IdKey>> = [
    {
      name: "identifiers inside other identifiers",
      candidates: (c) => {
        // Only other identifiers count: prose and file lists may be dropped later (the renderer already
        // avoids repeating an identifier another section quotes).
        return IdentifierExtraction.containedInOthers(c.identifiers)
      },
      remove: withoutIds,
      cost: idCost
    },
    listPhase(
      "critical context",
      (c) => c.criticalContext,
      (c, test) => ({ ...c, criticalContext: keep(c.criticalContext, test) })
    ),
    listPhase(
      "decisions",
      (c) => c.decisions.map((item) => item.decision),
      (c, test) => ({ ...c, decisions: keep(c.decisions, test) })
    ),
    listPhase(
      "done",
      (c) => c.progress.done,
      (c, test) => ({ ...c, progress: { ...c.progress, done: keep(c.progress.done, test) } })
    ),
    listPhase(
      "files read",
      (c) => c.filesRead,
      (c, test) => ({ ...c, filesRead: keep(c.filesRead, test) })
    ),
    listPhase(
      "constraints",
      (c) => c.constraints,
      (c, test) => ({ ...c, constraints: keep(c.constraints, test) })
    ),
    listPhase(
      "in progress",
      (c) => c.progress.inProgress,
      (c, test) => ({ ...c, progress: { ...c.progress, inProgress: keep(c.progress.inProgress, test) } }),
      1
    ),
    listPhase(
      "blocked",
      (c) => c.progress.blocked,
      (c, test) => ({ ...c, progress: { ...c.progress, blocked: keep(c.progress.blocked, test) } }),
      1
    ),
    listPhase(
      "next steps",
      (c) => c.nextSteps,
      (c, test) => ({ ...c, nextSteps: keep(c.nextSteps, test) }),
      1
    ),
    {
      name: "identifiers not in the covered range",
      candidates: (c) => IdentifierExtraction.flatten(c.identifiers).filter((item) => !wanted.has(item.value)),
      remove: withoutIds,
      cost: idCost
    },
    {
      name: "identifiers of the covered range",
      candidates: (c) =>
        IdentifierExtraction.flatten(c.identifiers)
          .filter((item) => wanted.has(item.value))
          .sort((a, b) => b.value.length - a.value.length),
      remove: withoutIds,
      cost: idCost,
      monotone: true
    }
  ]

  let checks = 0
  for (const phase of phases as Array<Phase<unknown>>) {
    let remaining = [...phase.candidates(current)]
    // List phases address items by index: indices after a removal shift down.
    const byIndex = typeof remaining[0] === "number"
    while (tokens > maxTokens && remaining.length > 0 && checks < MAX_FIT_CHECKS) {
      const excess = tokens - maxTokens
      let k = 0
      let saved = 0
      for (const key of remaining) {
        k++
        saved += phase.cost(key)
        if (saved >= excess) break
      }
      // lists (cost 0): halve what is left, like the shrinkers before
      if (saved === 0) k = Math.max(1, Math.ceil(remaining.length / 2))
      let candidate = phase.remove(current, remaining.slice(0, k))
      checks++
      while (k > 1 && !ok(candidate) && checks < MAX_FIT_CHECKS) {
        k = Math.floor(k / 2)
        candidate = phase.remove(current, remaining.slice(0, k))
        checks++
      }
      if (!ok(candidate)) {
        if (phase.monotone) break
        // this item is needed (e.g. the quote of the latest ask): keep it, go on with the rest
        remaining = remaining.slice(1)
        continue
      }
      const removed = k
      current = candidate
      tokens = countTokens(CheckpointRenderer.renderContent(current))
      remaining = remaining.slice(removed)
      if (byIndex) remaining = (remaining as Array<number>).map((index) => index - removed) as Array<unknown>
    }
    if (tokens <= maxTokens) break
  }
  return current
}

/** Most validations one {@link fitToBudget} runs (each is linear in the content). */
const MAX_FIT_CHECKS = 400

const applyRepair = (
  content: Checkpoint.CheckpointContent,
  request: SummarizeRequest
): Checkpoint.CheckpointContent => {
  if (!request.repair) return content
  // Restore only what a failed check asked for: identifiers lost within the allowed share are not a failure,
  // and adding them back would only make a checkpoint that failed `next-request-fits` larger.
  const failed = new Set(request.repair.failedChecks)
  const identifiers = new Set(
    failed.has("identifier-retention")
      ? request.repair.missing.filter((m) => m.startsWith("identifier:")).map((m) => m.slice(11))
      : []
  )
  const asks = failed.has("latest-user-ask")
    ? request.repair.missing.filter((m) => m.startsWith("ask:")).map((m) => m.slice(4))
    : []
  if (identifiers.size === 0 && asks.length === 0) return content
  const source = IdentifierExtraction.fromMessages(
    [...request.covered, ...(request.turnPrefix ?? [])].map((item) => item.message)
  )
  const restored = IdentifierExtraction.empty() as { -readonly [K in IdentifierExtraction.Category]: Array<string> }
  for (const { category, value } of IdentifierExtraction.flatten(source))
    if (identifiers.has(value)) restored[category].push(value)
  return {
    ...content,
    identifiers: IdentifierExtraction.merge(content.identifiers, restored),
    pendingUserAsks: [...content.pendingUserAsks, ...asks]
  }
}

/**
 * Options of the extractive summarizer.
 *
 * @category models
 */
export interface Options {
  /** Identifier retention the size cap may not go below; default `CheckpointValidation.DEFAULT_MIN_IDENTIFIER_RETENTION` (set it to the engine's). */
  readonly minIdentifierRetention?: number | undefined
}

/**
 * Summarizes a request: extracts the covered range and the turn prefix,
 * merges onto the previous checkpoint's content, applies a repair request
 * (restores the named identifiers and asks) and fits the size cap.
 *
 * @category constructors
 */
export const summarizeSync = (request: SummarizeRequest, options: Options = {}): Checkpoint.CheckpointContent => {
  const fresh = extract(request.covered, request.turnPrefix ?? [])
  const before = previousContent(request.previous)
  const merged = before ? mergeContent(before, fresh) : fresh
  const covered = [...request.covered, ...(request.turnPrefix ?? [])].map((item) => item.message)
  return applyRepair(
    fitToBudget(merged, request.maxTokens, request.countTokens, {
      covered,
      ...(options.minIdentifierRetention !== undefined
        ? { minIdentifierRetention: options.minIdentifierRetention }
        : {})
    }),
    request
  )
}

/**
 * The extractive summarizer.
 *
 * @example
 * ```ts
 * import { Effect } from "effect"
 * import { ExtractiveSummarizer } from "@context-engine/engines"
 *
 * const { content } = await Effect.runPromise(
 *   ExtractiveSummarizer.make().summarize({
 *     covered: [{ entryId: "e1", message: { role: "user", content: "Fix src/parser.ts" } }],
 *     maxTokens: 2_000,
 *     countTokens: (text) => Math.ceil(text.length / 4)
 *   })
 * )
 * content.pendingUserAsks // ["Fix src/parser.ts"]
 * ```
 *
 * @category constructors
 */
export const make = (options: Options = {}): Summarizer => ({
  name: "extractive",
  summarize: (request) =>
    Effect.sync(() => ({
      content: summarizeSync(request, options),
      summarizer: { kind: "extractive", promptVersion: PROMPT_VERSION }
    }))
})

/**
 * Provides the extractive summarizer as the {@link SummarizerService}.
 *
 * @category layers
 */
export const layer: Layer.Layer<SummarizerService> = Layer.succeed(SummarizerService, make())
