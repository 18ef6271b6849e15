/**
 * `pnpm --filter @context-engine/example-ai-sdk-agent start`
 *
 * Replays 220 steps of a real pi session's tool calls through a
 * `ToolLoopAgent` under a 32K window and prints per-step tokens and every
 * compaction. No API key needed.
 */
import { fileURLToPath } from "node:url"
import * as Agent from "./Agent.ts"
import * as Replay from "./Replay.ts"

const transcript = fileURLToPath(new URL("../../../../shared/transcripts/pi/large-session.jsonl", import.meta.url))
const steps = Number(process.argv[2] ?? 220)

const script = await Replay.load(transcript)
console.log(`Replaying ${steps} steps from ${script.length} recorded tool calls (${transcript})`)
const report = await Agent.run({ script, steps, log: (line) => console.log(line) })

const largest = Math.max(...report.steps.map((step) => step.promptTokens))
const rejected = report.steps.filter((step) => step.rejected).length
const broken = report.steps.filter((step) => !step.pairingIntact).length
console.log(
  [
    "",
    `model calls: ${report.steps.length}, compactions: ${report.compactions.length}`,
    `largest prompt: ${largest} + ${report.maxOutputTokens} output = ${largest + report.maxOutputTokens} / ${report.windowTokens} window`,
    `rejected as too long: ${rejected}, prompts with broken tool pairing: ${broken}`,
    `final answer: ${report.finalText}`
  ].join("\n")
)
if (rejected > 0 || broken > 0) process.exitCode = 1
