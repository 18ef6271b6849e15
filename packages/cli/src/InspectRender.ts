/**
 * Renders an {@link InspectReport} as the human-readable text of
 * `context-engine inspect`.
 *
 * @since 0.1.0
 */
import { Measurement } from "@context-engine/core"
import type { InspectReport, Totals } from "./InspectReport.ts"
import * as PolicyOptions from "./PolicyOptions.ts"

const n = (value: number): string => Math.round(value).toLocaleString("en-US")
const pct = (share: number): string => `${(share * 100).toFixed(1)}%`
const pad = (text: string, width: number) => text.padEnd(width)
const lpad = (text: string, width: number) => text.padStart(width)

const table = (title: string, totals: Totals, budgetTokens: number): Array<string> => {
  const lines = [title, `  ${pad("category", 26)}${lpad("tokens", 12)}${lpad("share", 9)}`]
  for (const category of Measurement.categories) {
    const tokens = totals.byCategory[category]
    if (category === "reservedOutput" || tokens === 0) continue
    lines.push(
      `  ${pad(Measurement.categoryLabels[category], 26)}${lpad(n(tokens), 12)}${lpad(pct(tokens / Math.max(1, totals.inputTokens)), 9)}`
    )
  }
  lines.push(`  ${pad("total", 26)}${lpad(n(totals.inputTokens), 12)}`)
  lines.push(
    `  vs budget ${n(budgetTokens)}: ${pct(totals.budgetShare)}${totals.overBudgetTokens > 0 ? ` — over by ${n(totals.overBudgetTokens)} tokens` : " — fits"}`
  )
  // As compact's FixedOverheadExceedsBudget: no compaction of the conversation can help then.
  const fixedTokens = totals.byCategory.system + totals.byCategory.toolSchemas
  if (fixedTokens >= budgetTokens)
    lines.push(
      `  the system prompt and tool schemas alone (${n(fixedTokens)} tokens) are over the input budget of ${n(budgetTokens)}: no compaction can make a request fit; raise the context window or shorten the system prompt`
    )
  return lines
}

/**
 * The report as text.
 *
 * @category rendering
 */
export const render = (report: InspectReport): string => {
  const out: Array<string> = []
  const { entries, model } = report
  out.push(`${report.file}`)
  out.push(
    `  format ${report.format} · ${n(report.bytes)} bytes · ${n(entries.total)} entries in ${n(entries.sessions)} session(s)`
  )
  out.push(
    `  messages ${n(entries.messages)} (system ${entries.byRole.system}, user ${entries.byRole.user}, assistant ${entries.byRole.assistant}, tool ${entries.byRole.tool}) · tool calls ${n(entries.toolCalls)}, results ${n(entries.toolResults)} · checkpoints ${entries.checkpoints} · events ${entries.events}`
  )
  if (entries.subAgentRecords > 0)
    out.push(
      `  ${n(entries.subAgentRecords)} sub-agent (sidechain) records kept as events, outside the main conversation`
    )
  out.push(
    `  model ${model.id} (${model.source === "default" ? "default: the transcript names no model; pass --model or --context-window for yours" : model.source}${PolicyOptions.catalogNote(model)}${model.known ? "" : ", unknown: generic fallback policy"}) · window ${n(model.contextWindowTokens)} · reserve ${n(model.reserveTokens)} · input budget ${n(model.budgetTokens)}`
  )
  out.push(`  counting: ${report.counting.method} — ${report.counting.description}`)
  out.push("")
  for (const line of table("Full history (every message, as one request)", report.fullHistory, model.budgetTokens))
    out.push(line)
  if (report.activeContext !== null) {
    out.push("")
    out.push(
      ...table(
        `Active context after the last compaction (${report.activeContext.sinceCheckpointEntryId}: summary + kept messages)`,
        report.activeContext,
        model.budgetTokens
      )
    )
  }
  out.push("")
  out.push(`Largest ${report.largest.length} entries`)
  for (const entry of report.largest)
    out.push(
      `  ${lpad(n(entry.tokens), 9)}  ${pad(entry.role, 9)} ${pad(Measurement.categoryLabels[entry.category as Measurement.Category] ?? entry.category, 14)} ${pad(entry.entryId, 24)} ${entry.preview}`
    )
  out.push("")
  const pairing = report.pairing
  out.push(
    `Tool pairing: ${pairing.problems.length === 0 ? "ok" : `${pairing.orphanResults} orphan result(s), ${pairing.resultsNotAdjacent} result(s) not next to their call, ${pairing.callsWithoutResult} call(s) without result, ${pairing.duplicateCallIds} duplicate call id(s)`}`
  )
  for (const problem of pairing.problems.slice(0, 20))
    out.push(
      `  ${pad(problem.kind, 20)} ${problem.toolCallId}${problem.toolName ? ` (${problem.toolName})` : ""} in ${problem.entryIds.join(", ")}`
    )
  if (pairing.problems.length > 20) out.push(`  … ${pairing.problems.length - 20} more (see --json)`)
  if (report.compactions.length > 0) {
    out.push("")
    out.push("Recorded compaction points")
    for (const compaction of report.compactions)
      out.push(
        `  #${compaction.generation} ${compaction.entryId} at ${compaction.createdAt}: tokensBefore ${n(compaction.tokensBefore)} (recorded) → summary ${n(compaction.summaryTokens)} + kept ${n(compaction.keptTokens)} from ${compaction.firstKeptEntryId ?? "(none)"}`
      )
  }
  const imported = report.import
  if (imported.issues.length > 0) {
    out.push("")
    out.push(
      `Import: ${imported.skipped} line(s) skipped, ${imported.keptAsEvent} unknown record(s) kept as events, ${imported.repaired} repaired`
    )
    for (const issue of imported.issues.slice(0, 10)) out.push(`  line ${issue.line}: ${issue.action}: ${issue.reason}`)
  }
  return out.join("\n")
}
