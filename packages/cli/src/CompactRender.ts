/**
 * Renders a {@link CompactReport} as the human-readable text of
 * `context-engine compact`: the decision, tokens per category before and
 * after, the stages, what the next request holds in plain words (the kept
 * tail sent verbatim, what the checkpoint stands in for), the checkpoint with
 * its validation, and what `--out` wrote.
 *
 * @since 0.2.0
 */
import { resolve } from "node:path"
import { type Checkpoint, CheckpointRenderer, Measurement } from "@context-engine/core"
import type { CompactReport } from "./CompactReport.ts"
import * as PolicyOptions from "./PolicyOptions.ts"

const n = (value: number): string => Math.round(value).toLocaleString("en-US")
const pad = (text: string, width: number): string => text.padEnd(width)
const lpad = (text: string, width: number): string => text.padStart(width)
const plural = (count: number, one: string, many = `${one}s`) => `${n(count)} ${count === 1 ? one : many}`
/** An entry range as the output names it: one id when it starts and ends at the same entry. */
const span = (first: string, last: string): string => (first === last ? first : `${first} … ${last}`)

const header = (report: CompactReport): Array<string> => {
  const out = [
    `context-engine compact ${report.file}`,
    `  ${report.format} transcript, ${n(report.entries)} entries · model ${PolicyOptions.modelLabel(report.model)} · window ${n(report.policy.contextWindowTokens)} · reserve ${n(report.policy.reserveTokens)} · keep-recent ${n(report.policy.keepRecentTokens)}`,
    `  engine ${report.engine} · summarizer ${report.summarizer}`
  ]
  if (report.rolling !== null)
    out.push(
      `  rolling compaction: ${plural(report.rolling.rounds, "round")} over windows of ${(report.rolling.windowBytes / 2 ** 20).toLocaleString("en-US", { maximumFractionDigits: 2 })} MiB of transcript lines (the file is never held whole; tokens before are the whole transcript's; --window-mib 0 holds it whole)`
    )
  for (const warning of report.warnings) out.push(`  warning: ${warning}`)
  const imported = report.import
  if (imported.issues.length > 0) {
    out.push(
      `  import: ${imported.skipped} line(s) skipped, ${imported.keptAsEvent} unknown record(s) kept as events, ${imported.repaired} repaired (--strict fails on the first skipped line)`
    )
    for (const issue of imported.issues.slice(0, 10))
      out.push(`    line ${issue.line}: ${issue.action}: ${issue.reason}`)
    if (imported.issues.length > 10) out.push(`    … ${imported.issues.length - 10} more (see --json)`)
  }
  return out
}

const tokenTable = (report: CompactReport): Array<string> => {
  const { before, after } = report.tokens
  const rows: Array<[string, number, number]> = Measurement.categories
    .filter((category) => before[category] !== 0 || after[category] !== 0)
    .map((category) => [Measurement.categoryLabels[category], before[category], after[category]])
  rows.push(["total input", before.input, after.input])
  // a column is 10 wide, wider when a count needs it (a rolling compaction's transcript runs to millions)
  const width = Math.max(10, ...rows.flatMap(([, b, a]) => [n(b), n(a), n(a - b)].map((cell) => cell.length + 2)))
  const out = [
    `Decision: ${report.decision.compact ? "compact" : "no compaction needed"}${report.decision.reasons.length > 0 ? ` (${report.decision.reasons.join(", ")})` : ""} — ${n(report.decision.inputTokens)} input tokens, budget ${n(report.policy.inputBudgetTokens)} (${report.policy.inputBudgetFormula})`,
    "",
    `Tokens per category${" ".repeat(11)}${lpad("before", width)}${lpad("after", width)}${lpad("change", width)}`,
    ...rows.map(
      ([label, b, a]) => `  ${pad(label, 28)}${lpad(n(b), width)}${lpad(n(a), width)}${lpad(n(a - b), width)}`
    )
  ]
  out.push(
    `  ${report.fits ? "fits" : "DOES NOT FIT"}: ${n(after.input)} of ${n(report.policy.inputBudgetTokens)} input tokens (${((after.input / Math.max(1, before.input)) * 100).toFixed(1)}% of before)`,
    "",
    report.rolling !== null && report.rolling.rounds > 1
      ? `Stages of the last of ${report.rolling.rounds} rounds (its window's request; least destructive first; re-measured after each)`
      : "Stages (least destructive first; re-measured after each)"
  )
  if (report.stages.length === 0) out.push("  none run: the request fits its budget (--force compacts it anyway)")
  // The name column fits the longest name ("reduce:toolTrim.clearInputs" ran into its status at a fixed 22).
  const nameWidth = Math.max(22, ...report.stages.map((stage) => stage.stage.length + 2))
  for (const stage of report.stages) {
    const change = stage.status === "applied" ? `${n(stage.tokensBefore)} → ${n(stage.tokensAfter)}` : ""
    out.push(`  ${pad(stage.stage, nameWidth)}${pad(stage.status, 12)}${pad(change, 22)}${stage.note ?? ""}`)
  }
  return out
}

/**
 * What the next request holds, in words a newcomer understands: the kept
 * tail (sent verbatim, or shortened by a named stage), what the checkpoint
 * stands in for, and that the transcript is unchanged.
 *
 * @category rendering
 */
export const handoffLines = (report: CompactReport): Array<string> => {
  const { keptTail, systemPrompt, transcriptMessages, notSentMessages, checkpoint, dropped } = report.handoff
  const range = keptTail.firstEntryId ? `${span(keptTail.firstEntryId, keptTail.lastEntryId!)}, ` : ""
  const changed =
    keptTail.changedMessages > 0
      ? ` except ${n(keptTail.changedMessages)} changed by ${keptTail.changedBy.join(", ")} (see Stages; their originals stay in the transcript)`
      : ""
  const synthesized =
    keptTail.synthesizedMessages > 0
      ? ` ${keptTail.synthesizedMessages === 1 ? "1 of them is a result" : `${n(keptTail.synthesizedMessages)} of them are results`} the request adds for interrupted tool calls (normalize), not transcript messages.`
      : ""
  const leftOut =
    keptTail.leftOutMessages > 0
      ? ` ${plural(keptTail.leftOutMessages, "empty or reasoning-only message")} in that range ${keptTail.leftOutMessages === 1 ? "is" : "are"} left out (normalize).`
      : ""
  if (notSentMessages === 0 && checkpoint === null)
    return [
      "What the next request holds",
      `  Everything: all ${plural(transcriptMessages, "message")} (${n(keptTail.tokens + (systemPrompt?.tokens ?? 0))} tokens), sent word for word${changed}. Nothing needed summarizing.`,
      "  Nothing is deleted: the transcript file is not changed."
    ]
  const keptUsers = report.handoff.keptUsers
  const tailWords =
    keptTail.messages === 1 ? "the newest message" : `the newest ${plural(keptTail.messages, "message")}`
  const out = [
    `What the next request holds (${n(transcriptMessages - notSentMessages)} of the transcript's ${plural(transcriptMessages, "message")} are sent)`
  ]
  if (systemPrompt)
    out.push(
      `  System prompt: ${systemPrompt.messages === 1 ? "the transcript's system message" : `the transcript's ${n(systemPrompt.messages)} system messages`} (${n(systemPrompt.tokens)} tokens), at the start of the request.`
    )
  out.push(
    `  Kept tail: ${tailWords} (${range}${n(keptTail.tokens)} tokens), sent word for word${changed}.${synthesized}${leftOut} --keep-recent asks for ${n(report.policy.keepRecentTokens)} tokens of recent turns; the cut moves back to a turn boundary, so every tool call stays beside its result.`
  )
  if (keptUsers)
    out.push(
      `  Earlier user messages: ${plural(keptUsers.messages, "message")} of the user's own words from the summarized range (${span(keptUsers.firstEntryId, keptUsers.lastEntryId)}, ${n(keptUsers.tokens)} tokens), sent word for word between the checkpoint and the kept tail — the newest ones within 20,000 tokens (Codex's limit) and --keep-recent.`
    )
  if (checkpoint?.written) {
    const own = checkpoint.coveredFromEntryId
    const earlier =
      checkpoint.generation > 1 && checkpoint.earlierMessages > 0
        ? `, and ${plural(checkpoint.earlierMessages, "message")} before ${own}, which checkpoint ${checkpoint.generation - 1} summarized and this one takes the place of`
        : ""
    const keptNote = keptUsers ? ` plus the ${plural(keptUsers.messages, "user message")} kept word for word` : ""
    out.push(
      `  Checkpoint ${checkpoint.generation} (${n(checkpoint.tokens)} tokens with its message framing; ${n(checkpoint.textTokens)} in the table's checkpoint row) stands in for ${plural(checkpoint.standsInForMessages, "older message")} not sent: ${n(checkpoint.summarizedMessages)} of ${own === null ? `the messages up to ${checkpoint.coveredToEntryId}` : span(own, checkpoint.coveredToEntryId)}, which it summarizes${earlier}. (The Stages row's "covered" counts that range as the request held it: these messages${keptNote}, after normalize's repairs.) It is printed below as the model reads it: goal, progress, decisions, files, next steps.`
    )
  } else if (checkpoint) {
    out.push(
      `  Checkpoint ${checkpoint.generation}, recorded in the transcript (${n(checkpoint.tokens)} tokens with its message framing), still stands in for ${plural(checkpoint.standsInForMessages, "older message")}.`
    )
  }
  if (report.handoff.memory)
    out.push(
      `  Memory: ${plural(report.handoff.memory.records, "record")} (${n(report.handoff.memory.tokens)} tokens) the memory flush kept from the summarized messages, sent with the checkpoint.`
    )
  if (dropped)
    out.push(
      `  Dropped: ${plural(dropped.messages, "message")} (${dropped.firstEntryId} … ${dropped.lastEntryId}, oldest first: whole turns, or the oldest steps of a turn whose ask stays; a tool call goes with its result) are not sent and no summary stands in for them.`
    )
  out.push("  Nothing is deleted: the transcript file is not changed.")
  return out
}

const checkpointLines = (report: CompactReport, checkpoint: Checkpoint.Checkpoint, lines: number): Array<string> => {
  const cp = report.checkpoint!
  const out = [
    `Checkpoint ${cp.id} · generation ${cp.generation} · ${cp.summarizer.kind}${cp.summarizer.model ? ` ${cp.summarizer.model}` : ""} (${cp.summarizer.promptVersion})`
  ]
  const validation = cp.validation
  if (validation) {
    out.push(
      `Validation: ${validation.ok ? "passed" : "FAILED"} · identifier retention ${(validation.identifierRetention * 100).toFixed(1)}%`
    )
    // the name column is as wide as the longest check name plus two spaces, so a new check never runs into its detail
    const nameWidth = Math.max(0, ...validation.checks.map((check) => check.name.length)) + 2
    for (const check of validation.checks)
      out.push(`  ${check.ok ? "✓" : "✗"} ${pad(check.name, nameWidth)}${check.detail}`)
  }
  const full = CheckpointRenderer.render(checkpoint).split("\n")
  const shown = lines > 0 && checkpoint.content ? preview(checkpoint, lines) : full
  out.push(
    "",
    `--- checkpoint as the model sees it (user-role reference message, ${n(full.length)} lines${shown.length < full.length ? `; each list cut to its first ${lines} items here` : ""}) ---`,
    ...shown
  )
  if (shown.length < full.length)
    out.push(`… (--checkpoint-lines 0 prints all ${n(full.length)} lines; --out has the whole checkpoint)`)
  out.push("--- end of checkpoint ---")
  return out
}

/**
 * Renders the human-readable report.
 *
 * @category rendering
 */
export const render = (report: CompactReport, checkpoint: Checkpoint.Checkpoint | undefined, lines = 5): string => {
  const out = [...header(report), "", ...tokenTable(report), "", ...handoffLines(report), ""]
  if (report.cutPoint) {
    out.push(
      `Cut point: first kept entry ${report.cutPoint.firstKeptEntryId ?? "(none)"}; covered ${report.cutPoint.coveredFromEntryId ?? "(start)"} … ${report.cutPoint.coveredToEntryId}${report.cutPoint.splitTurn ? " (split turn: the turn's prefix is summarized, its user message kept)" : ""}`
    )
  } else out.push("Cut point: none (nothing summarized)")
  for (const failure of report.failures) out.push(`Recovered from ${failure.tag}: ${failure.message}`)
  out.push(...repairLines(report))
  if (report.checkpoint && checkpoint) out.push(...checkpointLines(report, checkpoint, lines))
  else out.push("Checkpoint: none written")
  return out.join("\n")
}

/** Repairs listed one per line; the rest are counted by kind (a rolled session can have hundreds). */
const REPAIRS_LISTED = 10

/** The request's repairs (listed even when no compaction was needed): the first {@link REPAIRS_LISTED}, then counts by kind. */
const repairLines = (report: CompactReport): Array<string> => {
  if (report.repairs.length === 0) return ["Repairs: none (the request was valid for the provider as recorded)"]
  const kind = (repair: CompactReport["repairs"][number]) => `${repair.op} (${repair.stage}): ${repair.reason}`
  const rest = new Map<string, number>()
  for (const repair of report.repairs.slice(REPAIRS_LISTED)) rest.set(kind(repair), (rest.get(kind(repair)) ?? 0) + 1)
  return [
    `Repairs: ${report.repairs.length} (the request is valid for the provider; the transcript keeps the originals)`,
    ...report.repairs
      .slice(0, REPAIRS_LISTED)
      .map((repair) => `  ${repair.op} ${repair.entryId} (${repair.stage}): ${repair.reason}`),
    ...(rest.size > 0
      ? [
          `  … ${report.repairs.length - REPAIRS_LISTED} more (--json lists them): ${[...rest].map(([text, count]) => `${count} ${text}`).join("; ")}`
        ]
      : [])
  ]
}

/**
 * What `--out` wrote, and what to do with each part; without `--out`, how
 * to save the result. `roles` are the written messages' roles: AI SDK 7's
 * `generateText` / `streamText` reject system messages in `messages`
 * (`InvalidPromptError` unless `allowSystemInMessages: true`) and take them
 * as `instructions` (a string or `SystemModelMessage[]`), so the advice names
 * the leading system messages (system prompt, memory records) to pass there.
 *
 * @category rendering
 */
export const outputLines = (
  out: string | undefined,
  written: {
    readonly roles: ReadonlyArray<string>
    readonly checkpoint: boolean
    readonly entriesToAppend: number
  }
): Array<string> =>
  out === undefined
    ? [
        "",
        "Nothing was written: add --out FILE to save the compacted messages, the checkpoint and this report as JSON."
      ]
    : [
        "",
        `Wrote ${resolve(out)}: ${n(written.roles.length)} messages (AI SDK ModelMessage[]), ${written.checkpoint ? "the checkpoint" : "no checkpoint (none was written)"}, ${n(written.entriesToAppend)} entries to append and this report.`,
        `  messages: ${sendAdvice(written.roles)}`,
        `  entriesToAppend: ${written.checkpoint ? "the checkpoint and the stages' edits" : "the stages' edits"}; to record this compaction, commit them to a context-engine transcript store that holds this transcript (\`store.commitCompaction(sessionId, entriesToAppend)\`), not to the agent's own session file (its importer keeps them as unknown events). The input file was not changed.`
      ]

/** How to pass the written messages to AI SDK 7 (see {@link outputLines}). */
const sendAdvice = (roles: ReadonlyArray<string>): string => {
  const system = roles.filter((role) => role === "system").length
  const firstOther = roles.findIndex((role) => role !== "system")
  const leading = firstOther === -1 ? roles.length : firstOther
  if (system === 0) return "the request to send next (pass them as `messages` to generateText / streamText)."
  if (system === leading)
    return `the request to send next; ${leading === 1 ? "the first is a system message" : `the first ${leading} are system messages`} (system prompt, memory records), which AI SDK 7 takes as \`instructions\`: generateText({ model, instructions: messages.slice(0, ${leading}), messages: messages.slice(${leading}) }) (the same for streamText).`
  return `the request to send next; ${system} of them are system messages, not all at the start: pass them as \`messages\` with \`allowSystemInMessages: true\` (AI SDK 7 rejects system messages in \`messages\` otherwise).`
}

const cut = <A>(items: ReadonlyArray<A>, max: number, more: (count: number) => A): Array<A> =>
  items.length <= max ? [...items] : [...items.slice(0, max), more(items.length - max)]

/** The checkpoint with every list cut to `max` items, for the terminal. */
const preview = (checkpoint: Checkpoint.Checkpoint, max: number): Array<string> => {
  const content = checkpoint.content!
  const more = (count: number) => `… ${count} more`
  const list = (items: ReadonlyArray<string>) => cut(items, max, more)
  // Identifier lines are cut by the renderer: it counts the rest outside their code spans, after leaving out
  // identifiers other sections quote.
  return CheckpointRenderer.render(
    {
      ...checkpoint,
      content: {
        ...content,
        constraints: list(content.constraints),
        progress: {
          done: list(content.progress.done),
          inProgress: list(content.progress.inProgress),
          blocked: list(content.progress.blocked)
        },
        decisions: cut(content.decisions, max, (count) => ({ decision: `… ${count} more`, rationale: "" })),
        nextSteps: list(content.nextSteps),
        criticalContext: list(content.criticalContext),
        pendingUserAsks: list(content.pendingUserAsks),
        filesRead: list(content.filesRead),
        filesModified: list(content.filesModified)
      }
    },
    { identifiersShown: max }
  ).split("\n")
}
