/**
 * Texts of the real transcripts in `../shared/transcripts`, as the measurer
 * tokenizes them (one string per text part, JSON arguments, tool output), for
 * estimator calibration and accuracy tests. Minimal readers on purpose.
 */
import { readFileSync } from "node:fs"
import type { Message } from "../../src/Message.ts"
import { count } from "../../src/MessageTokens.ts"
import { piMessages } from "./piTranscript.ts"
import { transcript } from "./shared.ts"

/**
 * The strings of one message exactly as the measurer tokenizes them (text,
 * reasoning + signatures, tool names, ids and JSON arguments, tool output),
 * captured with a recording tokenizer.
 */
export const messageTexts = (message: Message): Array<string> => {
  const texts: Array<string> = []
  const recorder = {
    name: "recorder",
    method: "exact" as const,
    count: (text: string) => {
      if (text.length > 0) texts.push(text)
      return 0
    }
  }
  count(message, "transcript", { tokenizer: recorder, mediaFamily: "generic" })
  return texts
}

const claudeCodeTexts = (name: string): Array<Array<string>> =>
  readFileSync(transcript(name), "utf8")
    .split("\n")
    .filter((line) => line.trim())
    .flatMap((line) => {
      const record = JSON.parse(line) as { message?: { content?: unknown } }
      const content = record.message?.content
      if (typeof content === "string") return [[content]]
      if (!Array.isArray(content)) return []
      const texts: Array<string> = []
      for (const block of content as Array<Record<string, unknown>>) {
        if (typeof block.text === "string") texts.push(block.text)
        if (typeof block.thinking === "string") texts.push(block.thinking)
        if (block.type === "tool_use") texts.push(String(block.name), JSON.stringify(block.input))
        if (block.type === "tool_result") {
          const inner = block.content
          if (typeof inner === "string") texts.push(inner)
          else if (Array.isArray(inner)) {
            for (const item of inner as Array<{ text?: unknown }>)
              if (typeof item.text === "string") texts.push(item.text)
          }
        }
      }
      return texts.length > 0 ? [texts.filter((text) => text.length > 0)] : []
    })

const sweAgentTexts = (name: string): Array<Array<string>> => {
  const trajectory = JSON.parse(readFileSync(transcript(name), "utf8")) as {
    history: Array<{ content: unknown; tool_calls?: Array<{ function: { name: string; arguments: string } }> }>
  }
  return trajectory.history.map((entry) => {
    const texts: Array<string> = []
    if (typeof entry.content === "string") texts.push(entry.content)
    else if (Array.isArray(entry.content)) {
      for (const item of entry.content as Array<{ text?: unknown }>)
        if (typeof item.text === "string") texts.push(item.text)
    }
    for (const call of entry.tool_calls ?? []) texts.push(call.function.name, call.function.arguments)
    return texts.filter((text) => text.length > 0)
  })
}

/** A transcript as messages, each a list of the texts the measurer would tokenize. */
export interface CorpusTranscript {
  readonly name: string
  readonly messages: ReadonlyArray<ReadonlyArray<string>>
}

/** Every structured real transcript (pi, Claude Code, SWE-agent). */
export const corpus = (): Array<CorpusTranscript> => [
  { name: "pi/before-compaction.jsonl", messages: piMessages("pi/before-compaction.jsonl").map(messageTexts) },
  { name: "pi/large-session.jsonl", messages: piMessages("pi/large-session.jsonl").map(messageTexts) },
  {
    name: "claude-code/fe5e1c67….jsonl",
    messages: claudeCodeTexts("claude-code/fe5e1c67-53e7-4862-81ae-d0e013e3270b.jsonl")
  },
  {
    name: "swe-agent/marshmallow-1867.traj",
    messages: sweAgentTexts("swe-agent/marshmallow-1867__function_calling_replace_from_source.traj")
  },
  { name: "swe-agent/pydicom-1458.traj", messages: sweAgentTexts("swe-agent/pydicom__pydicom-1458.traj") }
]
