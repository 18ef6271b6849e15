/**
 * The `context-engine inspect` report: an Effect Schema (what `--json`
 * prints) and the pure function that builds it from an import result.
 *
 * Counting: every message entry is counted with core `Measurer.make` on the
 * model policy's tokenizer (exact `o200k_base` / `cl100k_base` for OpenAI
 * families, the calibrated estimator otherwise): text with the tokenizer,
 * tool calls as name + id + full JSON arguments, reasoning with its
 * signature, images by pixels, plus 3 framing tokens per message. "Full
 * history" is every message of the file as if sent in one request (what the
 * agent would send without any compaction); "active context" is what the
 * agent sent after its last recorded compaction: the checkpoint summary plus
 * the messages from `firstKeptEntryId` on, with the pairing repair and empty-message
 * drops every request gets (`Normalization.normalize`), as `compact` measures it.
 *
 * @since 0.1.0
 */
import {
  Budget,
  CheckpointRenderer,
  type ContextView,
  Entry,
  Measurement,
  Measurer,
  type Message,
  MessageParts,
  PolicyRegistry,
  Tokenizers,
  ToolPairing
} from "@context-engine/core"
import { Normalization } from "@context-engine/strategies"
import type { ImportResult } from "@context-engine/transcripts"
import { Effect, Schema } from "effect"
import * as PolicyOptions from "./PolicyOptions.ts"

/**
 * The model assumed when neither `--model` nor the transcript names one
 * (`PolicyOptions.DEFAULT_MODEL`).
 *
 * @category constants
 */
export const DEFAULT_MODEL = PolicyOptions.DEFAULT_MODEL

/** How many of the largest entries the report lists. @category constants */
export const LARGEST_COUNT = 10

const Count = Schema.Number

/** A measured set of entries against the budget. @category schemas */
export const Totals = Schema.Struct({
  byCategory: Measurement.CategoryCounts,
  /** Input tokens (every category except `reservedOutput`). */
  inputTokens: Count,
  /** `inputTokens / budgetTokens`. */
  budgetShare: Schema.Number,
  /** `inputTokens − budgetTokens` when positive, else 0. */
  overBudgetTokens: Count,
  messages: Count
})
/** @category models */
export type Totals = typeof Totals.Type

/** @category schemas */
export const PairingProblem = Schema.Struct({
  kind: Schema.Literals(["orphan-result", "result-not-adjacent", "call-without-result", "duplicate-call-id"]),
  toolCallId: Schema.String,
  /** The entry holding the result (orphan), the result then the call (not adjacent), the call; all entries for duplicates. */
  entryIds: Schema.Array(Schema.String),
  toolName: Schema.optionalKey(Schema.String)
})

/**
 * The report. Token counts are tokens; sizes are bytes.
 *
 * @category schemas
 */
export const InspectReport = Schema.Struct({
  schemaVersion: Schema.Literal(1),
  file: Schema.String,
  format: Schema.String,
  bytes: Count,
  lines: Count,
  model: Schema.Struct({
    id: Schema.String,
    /** Where the id came from. */
    source: Schema.Literals(["flag", "transcript", "default"]),
    /** False when the registry did not know it and the generic fallback policy was used. */
    known: Schema.Boolean,
    /** The built-in catalog entry the id resolved to (`PolicyRegistry.catalogIdOf`), null when none. */
    catalogId: Schema.NullOr(Schema.String),
    contextWindowTokens: Count,
    reserveTokens: Count,
    /** Window − reserve − tool-loop reserve − safety margin (core `Budget.make`). */
    budgetTokens: Count
  }),
  counting: Schema.Struct({
    method: Schema.Literals(["exact", "estimate"]),
    tokenizer: Schema.String,
    description: Schema.String
  }),
  entries: Schema.Struct({
    total: Count,
    messages: Count,
    checkpoints: Count,
    events: Count,
    other: Count,
    sessions: Count,
    byRole: Schema.Struct({ system: Count, user: Count, assistant: Count, tool: Count }),
    toolCalls: Count,
    toolResults: Count,
    /** Sub-agent (Claude Code Task) records, kept as `<format>.sidechain` events; not in the counts above. */
    subAgentRecords: Count
  }),
  fullHistory: Totals,
  activeContext: Schema.NullOr(Schema.Struct({ ...Totals.fields, sinceCheckpointEntryId: Schema.String })),
  largest: Schema.Array(
    Schema.Struct({
      entryId: Schema.String,
      role: Schema.String,
      tokens: Count,
      /** The category holding most of the entry's tokens. */
      category: Schema.String,
      preview: Schema.String
    })
  ),
  pairing: Schema.Struct({
    orphanResults: Count,
    resultsNotAdjacent: Count,
    callsWithoutResult: Count,
    duplicateCallIds: Count,
    problems: Schema.Array(PairingProblem)
  }),
  compactions: Schema.Array(
    Schema.Struct({
      entryId: Schema.String,
      generation: Count,
      createdAt: Schema.String,
      firstKeptEntryId: Schema.NullOr(Schema.String),
      /** As the agent recorded it. */
      tokensBefore: Count,
      /** The summary, counted here. */
      summaryTokens: Count,
      /** Messages from the first kept entry up to this compaction, counted here. */
      keptTokens: Count
    })
  ),
  import: Schema.Struct({
    skipped: Count,
    keptAsEvent: Count,
    repaired: Count,
    /** The first 50 issues, with line numbers. */
    issues: Schema.Array(Schema.Struct({ line: Count, action: Schema.String, reason: Schema.String }))
  }),
  elapsedMs: Count
})
/** @category models */
export type InspectReport = typeof InspectReport.Type

const preview = (message: Message.Message): string => {
  const first = typeof message.content === "string" ? message.content : message.content[0]
  const text =
    first === undefined || typeof first === "string"
      ? (first ?? "")
      : first.type === "tool-call"
        ? `${first.toolName}(${JSON.stringify(first.input)})`
        : first.type === "tool-result"
          ? `${first.toolName} → ${MessageParts.outputText(first.output, { mediaMarkers: true })}`
          : "text" in first && typeof first.text === "string"
            ? first.text
            : first.type
  const flat = text.replace(/\s+/g, " ").trim()
  return flat.length > 80 ? `${flat.slice(0, 79)}…` : flat
}

/**
 * Options of {@link build}.
 *
 * @category models
 */
export interface BuildOptions {
  readonly model?: string | undefined
  /** The policy resolved from the command's flags (`PolicyOptions.resolve`); looked up from `model` when absent. */
  readonly resolved?: PolicyOptions.ResolvedPolicy | undefined
  readonly startedAt?: number | undefined
  /** Called with (entries measured, total) while counting. */
  readonly onProgress?: ((done: number, total: number) => void) | undefined
}

const item = (entry: Entry.MessageEntry): ContextView.ViewItem => ({
  entryId: entry.id,
  message: entry.message,
  source: "transcript",
  editedBy: []
})

const checkpointItem = (entry: Entry.CheckpointEntry): ContextView.ViewItem => ({
  entryId: entry.id,
  // rendered as the engines render it, so `inspect` and `compact` agree on the "before" size
  message: CheckpointRenderer.toMessage(entry.checkpoint),
  source: "checkpoint",
  editedBy: []
})

/** The {@link LARGEST_COUNT} largest messages, each with its largest content category. */
const largestOf = (
  messages: ReadonlyArray<Entry.MessageEntry>,
  perEntry: ReadonlyMap<string, number>,
  measurer: Measurer.Measurer
): InspectReport["largest"] =>
  [...messages]
    .sort((a, b) => (perEntry.get(b.id) ?? 0) - (perEntry.get(a.id) ?? 0))
    .slice(0, LARGEST_COUNT)
    .map((entry) => {
      // The message's largest content category (its framing is no one's content).
      const byCategory = Object.entries(measurer.countMessage(entry.message)).filter(([name]) => name !== "framing")
      const category = byCategory.sort((a, b) => (b[1] ?? 0) - (a[1] ?? 0))[0]?.[0] ?? "userText"
      return {
        entryId: entry.id,
        role: entry.message.role,
        tokens: perEntry.get(entry.id) ?? 0,
        category,
        preview: preview(entry.message)
      }
    })

/** What the file holds, by kind and role. */
const entryCounts = (entries: ReadonlyArray<Entry.Entry>, messages: ReadonlyArray<Entry.MessageEntry>) => {
  const role = (name: Message.Message["role"]) => messages.filter((entry) => entry.message.role === name).length
  return {
    total: entries.length,
    messages: messages.length,
    checkpoints: entries.filter(Entry.isCheckpointEntry).length,
    events: entries.filter((entry) => entry.kind === "event").length,
    other: entries.filter((entry) => entry.kind === "memory" || entry.kind === "edit").length,
    byRole: { system: role("system"), user: role("user"), assistant: role("assistant"), tool: role("tool") },
    subAgentRecords: entries.filter((entry) => entry.kind === "event" && entry.event.name.endsWith(".sidechain")).length
  }
}

/** The model a report measures for: resolved by the caller, the `--model` flag, the transcript's, or the default. */
const modelOf = (entries: ReadonlyArray<Entry.Entry>, options: BuildOptions) => {
  const recorded = PolicyOptions.recordedModel(entries)
  const modelId = options.resolved?.modelId ?? options.model ?? recorded ?? DEFAULT_MODEL
  const source =
    options.resolved?.source ??
    (options.model !== undefined ? "flag" : recorded !== undefined ? "transcript" : "default")
  const known =
    options.resolved?.known ?? Effect.runSync(Effect.exit(PolicyRegistry.lookup(modelId)))._tag === "Success"
  const policy = options.resolved?.policy ?? Effect.runSync(PolicyRegistry.lookupOrFallback(modelId))
  return { modelId, source, known, policy }
}

/** The message entries a checkpoint keeps: from its first kept entry (or right after it) to the end. */
const keptSince = (
  entries: ReadonlyArray<Entry.Entry>,
  indexOf: ReadonlyMap<string, number>,
  checkpoint: Entry.CheckpointEntry
): Array<Entry.MessageEntry> => {
  const firstKept = checkpoint.checkpoint.firstKeptEntryId
  const from = firstKept === null ? -1 : (indexOf.get(firstKept) ?? -1)
  return entries.slice(from >= 0 ? from : (indexOf.get(checkpoint.id) ?? 0) + 1).filter(Entry.isMessageEntry)
}

/** A tool-pairing problem as the report lists it: its kind, call id, the entries involved (and the tool). */
const reportedProblem = (problem: ToolPairing.Problem) =>
  problem.kind === "duplicate-call-id"
    ? { kind: problem.kind, toolCallId: problem.toolCallId, entryIds: problem.entryIds }
    : problem.kind === "call-without-result"
      ? {
          kind: problem.kind,
          toolCallId: problem.toolCallId,
          entryIds: [problem.entryId],
          toolName: problem.toolName
        }
      : problem.kind === "result-not-adjacent"
        ? { kind: problem.kind, toolCallId: problem.toolCallId, entryIds: [problem.entryId, problem.callEntryId] }
        : { kind: problem.kind, toolCallId: problem.toolCallId, entryIds: [problem.entryId] }

/**
 * Builds the report for an import result.
 *
 * @category constructors
 */
export const build = (result: ImportResult.ImportResult, options: BuildOptions = {}): InspectReport => {
  const entries = result.transcript.entries
  const { modelId, source, known, policy } = modelOf(entries, options)
  const tokenizer = Tokenizers.forPolicy(policy)
  const measurer = Measurer.make(tokenizer)
  const messages = entries.filter(Entry.isMessageEntry)
  const system = messages.filter((entry) => entry.message.role === "system")
  const systemTokens = system.reduce((sum, entry) => sum + measurer.messageTokens(entry.message), 0)
  const budget = Budget.make(policy, { systemTokens, toolSchemaTokens: 0 })

  const perEntry = new Map<string, number>()
  messages.forEach((entry, index) => {
    perEntry.set(entry.id, measurer.messageTokens(entry.message))
    if (index % 500 === 0) options.onProgress?.(index, messages.length)
  })
  options.onProgress?.(messages.length, messages.length)

  const totals = (items: ReadonlyArray<ContextView.ViewItem>): Totals => {
    const measurement = measurer.measure({ items, tools: [] }, { budget })
    return {
      byCategory: measurement.byCategory,
      inputTokens: measurement.inputTokens,
      budgetShare: measurement.inputTokens / budget.inputBudgetTokens,
      overBudgetTokens: Math.max(0, measurement.inputTokens - budget.inputBudgetTokens),
      messages: items.length
    }
  }
  const checkpoints = entries.filter(Entry.isCheckpointEntry)
  const indexOf = new Map(entries.map((entry, index) => [entry.id, index]))
  const compactions = checkpoints.map((entry) => {
    const from =
      entry.checkpoint.firstKeptEntryId === null ? -1 : (indexOf.get(entry.checkpoint.firstKeptEntryId) ?? -1)
    const to = indexOf.get(entry.id) ?? entries.length
    const kept = from < 0 ? [] : entries.slice(from, to).filter(Entry.isMessageEntry)
    return {
      entryId: entry.id,
      generation: entry.checkpoint.generation,
      createdAt: entry.checkpoint.createdAt,
      firstKeptEntryId: entry.checkpoint.firstKeptEntryId,
      tokensBefore: entry.checkpoint.tokensBefore,
      summaryTokens: measurer.messageTokens(checkpointItem(entry).message, "checkpoint"),
      keptTokens: kept.reduce((sum, message) => sum + (perEntry.get(message.id) ?? 0), 0)
    }
  })
  const last = checkpoints.at(-1)
  const kept = last === undefined ? [] : keptSince(entries, indexOf, last)
  const activeContext: InspectReport["activeContext"] =
    last === undefined
      ? null
      : {
          ...totals(
            Normalization.normalize({
              items: [
                ...system.filter((entry) => !kept.includes(entry)).map(item),
                checkpointItem(last),
                ...kept.map(item)
              ],
              tools: []
            }).view.items
          ),
          sinceCheckpointEntryId: last.id
        }

  const pairing = ToolPairing.analyze(messages.map((entry) => ({ entryId: entry.id, message: entry.message })))
  const problems = pairing.problems.map(reportedProblem)
  const countKind = (kind: ToolPairing.Problem["kind"]) => pairing.problems.filter((p) => p.kind === kind).length

  const issues = result.issues
  return {
    schemaVersion: 1,
    file: result.source,
    format: result.format,
    bytes: result.bytes,
    lines: result.lines,
    model: {
      id: modelId,
      source,
      known,
      catalogId: PolicyRegistry.catalogIdOf(modelId) ?? null,
      contextWindowTokens: policy.contextWindowTokens,
      reserveTokens: policy.reserveTokens,
      budgetTokens: budget.inputBudgetTokens
    },
    counting: {
      method: tokenizer.method,
      tokenizer: tokenizer.name,
      description:
        tokenizer.method === "exact"
          ? `exact ${tokenizer.name} BPE counts per part, plus 3 framing tokens per message`
          : `${tokenizer.name}: calibrated estimate per part (no public tokenizer for this family), plus 3 framing tokens per message`
    },
    entries: {
      ...entryCounts(entries, messages),
      sessions: result.sessions.length,
      toolCalls: pairing.toolCalls,
      toolResults: pairing.toolResults
    },
    fullHistory: totals(messages.map(item)),
    activeContext,
    largest: largestOf(messages, perEntry, measurer),
    pairing: {
      orphanResults: countKind("orphan-result"),
      resultsNotAdjacent: countKind("result-not-adjacent"),
      callsWithoutResult: countKind("call-without-result"),
      duplicateCallIds: countKind("duplicate-call-id"),
      problems
    },
    compactions,
    import: {
      skipped: issues.filter((issue) => issue.action === "skipped").length,
      keptAsEvent: issues.filter((issue) => issue.action === "kept-as-event").length,
      repaired: issues.filter((issue) => issue.action === "repaired").length,
      issues: issues.slice(0, 50).map((issue) => ({ ...issue }))
    },
    elapsedMs: options.startedAt === undefined ? 0 : Math.round(performance.now() - options.startedAt)
  }
}
