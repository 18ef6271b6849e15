/**
 * Does tiered compaction scale linearly? (issue #13, item 3.) Sessions of
 * ~200K to ~3.2M tokens are built by concatenating different real
 * transcripts (`../shared/transcripts`: pi, Claude Code, SWE-agent, Aider,
 * console logs — each imported by our importers; a later pass over the
 * corpus relabels tool call ids so no id repeats). Each size is compacted
 * cold (fresh engine) to a 50K window with the offline extractive summarizer.
 * Prints time per size, the slope of log(time) against log(tokens) between
 * the smallest and each larger size (target ≤ 1.1), what the engine resolved
 * (checkpoint or fallback) and whether validation failed. The JIT is warmed
 * by one untimed run first. `node bench/run.ts
 * scaling`. Prints; never asserts times.
 */
import { readdirSync } from "node:fs"
import type * as Entry from "../packages/core/src/Entry.ts"
import * as Measurer from "../packages/core/src/Measurer.ts"
import type { Message } from "../packages/core/src/Message.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { sharedDir, transcript } from "../packages/core/test/support/shared.ts"
import { TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { Import } from "../packages/transcripts/src/index.ts"

const k = (tokens: number): string => `${(tokens / 1000).toFixed(0)}K`

const relabel = (message: Message, round: number): Message => {
  if (round === 0 || typeof message.content === "string") return message
  const content = message.content.map((part) =>
    part.type === "tool-call" || part.type === "tool-result"
      ? { ...part, toolCallId: `${part.toolCallId}~${round}` }
      : part
  )
  return { ...message, content } as Message
}

/** Conversation messages (no system) of every real transcript, in a fixed order. */
const corpusMessages = async (): Promise<Array<Message>> => {
  const names = ["pi", "claude-code", "swe-agent", "aider", "claude-code-console", "gemini-cli-console"].flatMap(
    (folder) =>
      readdirSync(`${sharedDir}/transcripts/${folder}`)
        .sort()
        .map((file) => `${folder}/${file}`)
  )
  const messages: Array<Message> = []
  for (const name of names) {
    const imported = await Import.importFilePromise(transcript(name))
    for (const entry of imported.transcript.entries)
      if (entry.kind === "message" && entry.message.role !== "system") messages.push(entry.message)
  }
  return messages
}

export default async function (): Promise<void> {
  const corpus = await corpusMessages()
  const tokenizer = Tokenizers.get("o200k_base")
  const measurer = Measurer.make(tokenizer)
  const corpusTokens = corpus.reduce((sum, message) => sum + measurer.messageTokens(message), 0)
  console.log(`corpus: ${corpus.length} messages, ${k(corpusTokens)} o200k tokens from 6 sources`)
  const targets = [200_000, 400_000, 800_000, 1_600_000, 3_200_000]
  const sessions: Array<{ readonly tokens: number; readonly entries: Array<Entry.Entry> }> = []
  for (const target of targets) {
    const entries: Array<Entry.Entry> = [
      {
        id: "system",
        parentId: null,
        timestamp: new Date(0).toISOString(),
        schemaVersion: 1,
        kind: "message",
        message: { role: "system", content: "You are a coding agent." }
      }
    ]
    let tokens = 0
    for (let index = 0; tokens < target; index++) {
      const round = Math.floor(index / corpus.length)
      const message = relabel(corpus[index % corpus.length]!, round)
      tokens += measurer.messageTokens(message)
      entries.push({
        id: `m${index}`,
        parentId: entries.at(-1)!.id,
        timestamp: new Date(0).toISOString(),
        schemaVersion: 1,
        kind: "message",
        message
      })
    }
    // The request being prepared: a short user message, so the turn in progress is small (a concatenation
    // can end inside a huge turn that no 50K window holds — that would measure the failure path instead).
    entries.push({
      id: "next-ask",
      parentId: entries.at(-1)!.id,
      timestamp: new Date(0).toISOString(),
      schemaVersion: 1,
      kind: "message",
      message: { role: "user", content: "Continue with the next step." }
    })
    sessions.push({ tokens, entries })
  }
  const policy = {
    ...PolicyRegistry.lookupSync("gpt-4o"),
    model: "bench-50k",
    contextWindowTokens: 50_000,
    maxOutputTokens: 4_000,
    reserveTokens: 4_000,
    keepRecentTokens: 10_000
  }
  const rows: Array<Record<string, string | number>> = []
  const times: Array<number> = []
  // One untimed compaction first, so the smallest size does not also pay the JIT warm-up (which would flatter
  // the slope); every timed run still starts with a fresh engine and measurer (cold counts).
  await TieredSummaryEngine.makeAsync().compact({ entries: sessions[0]!.entries, policy })
  for (const session of sessions) {
    const engine = TieredSummaryEngine.makeAsync()
    const start = performance.now()
    let outcome: string
    try {
      const result = await engine.compact({ entries: session.entries, policy })
      const applied = result.stages.filter((stage) => stage.status === "applied").map((stage) => stage.stage)
      outcome = `${result.checkpoint ? "checkpoint" : "no checkpoint"} (${applied.join(", ")}), after ${k(result.after.inputTokens)}${result.fits ? "" : ", does not fit"}`
    } catch (error) {
      outcome = `failed: ${(error as { _tag?: string })._tag ?? String(error)}`
    }
    const ms = performance.now() - start
    times.push(ms)
    rows.push({
      session: `${k(session.tokens)} tokens, ${session.entries.length} entries`,
      "compact (cold)": `${ms.toFixed(0)} ms`,
      "ms per 100K tokens": ((ms / session.tokens) * 100_000).toFixed(1),
      outcome
    })
  }
  console.table(rows)
  const slopes = sessions
    .slice(1)
    .map(
      (session, index) =>
        `${k(sessions[0]!.tokens)}→${k(session.tokens)}: ${(Math.log(times[index + 1]! / times[0]!) / Math.log(session.tokens / sessions[0]!.tokens)).toFixed(2)}`
    )
  console.log(`slope of log(time) vs log(tokens) (1.0 = linear; target ≤ 1.1): ${slopes.join(", ")}`)
  const steps = sessions
    .slice(1)
    .map(
      (session, index) =>
        `${k(sessions[index]!.tokens)}→${k(session.tokens)}: ${(Math.log(times[index + 1]! / times[index]!) / Math.log(session.tokens / sessions[index]!.tokens)).toFixed(2)}`
    )
  console.log(`slope between consecutive sizes: ${steps.join(", ")}`)
}
