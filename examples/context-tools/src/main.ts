/**
 * `pnpm --filter @context-engine/example-context-tools start`
 *
 * Runs the same four tasks twice with a scripted MockLanguageModelV4 (no API
 * key): once with the context tools and nudges (the model rewinds finished
 * tasks, then answers a detail question with context_search +
 * context_restore), once with the tiered-summary engine alone. Prints the
 * input tokens of every step and the totals.
 */
import * as Run from "./Run.ts"
import * as Workspace from "./Workspace.ts"

const withTools = await Run.run("tools", (line) => console.log(`[tools]  ${line}`))
console.log("")
const tieredOnly = await Run.run("tiered", (line) => console.log(`[tiered] ${line}`))

const perTask = (report: Run.Report, task: number) =>
  report.steps.filter((step) => step.task === task).reduce((total, step) => total + step.inputTokens, 0)
console.log("\ninput tokens per task (all steps)      tools+nudges    tiered alone")
for (const [index, text] of Workspace.tasks.entries())
  console.log(
    `${`${index + 1}. ${text}`.padEnd(40)} ${String(perTask(withTools, index)).padStart(12)} ${String(perTask(tieredOnly, index)).padStart(15)}`
  )
console.log(
  `${"total".padEnd(40)} ${String(withTools.totalInputTokens).padStart(12)} ${String(tieredOnly.totalInputTokens).padStart(15)}`
)
console.log(
  `\ntools+nudges / tiered alone: ${(withTools.totalInputTokens / tieredOnly.totalInputTokens).toFixed(2)} of the input tokens; compactions ${withTools.compactions} vs ${tieredOnly.compactions}`
)
console.log(`answers: ${withTools.answers.at(-1)} | ${tieredOnly.answers.at(-1)}`)
if (withTools.answers.at(-1) !== Workspace.expectedDetail || tieredOnly.answers.at(-1) !== Workspace.expectedDetail)
  process.exitCode = 1
