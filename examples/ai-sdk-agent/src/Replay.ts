/**
 * A replay script from a real transcript: every tool call the agent made (name
 * and full JSON arguments), in order, with the result it got. The scripted
 * model issues these calls again; the tools answer with the recorded results.
 *
 * Default source: `../shared/transcripts/pi/large-session.jsonl` (a real pi
 * coding-agent session, 391 tool calls; see SOURCES.md), read with the
 * project's own pi importer.
 */
import { Import } from "@context-engine/transcripts"

/** One recorded tool call and its result text. */
export interface ReplayStep {
  readonly toolName: string
  readonly input: unknown
  readonly output: string
}

/** Loads the tool calls of a transcript, in order, with their results (results missing from the file read "(no result recorded)"). */
export const load = async (path: string): Promise<ReadonlyArray<ReplayStep>> => {
  const imported = await Import.importFilePromise(path)
  const results = new Map<string, string>()
  const calls: Array<{ readonly toolCallId: string; readonly toolName: string; readonly input: unknown }> = []
  for (const entry of imported.transcript.entries) {
    if (entry.kind !== "message" || typeof entry.message.content === "string") continue
    for (const part of entry.message.content) {
      if (part.type === "tool-call")
        calls.push({ toolCallId: part.toolCallId, toolName: part.toolName, input: part.input })
      if (part.type === "tool-result") {
        const output = part.output
        results.set(
          part.toolCallId,
          output.type === "text" || output.type === "error-text"
            ? output.value
            : output.type === "content"
              ? output.value.map((item) => (item.type === "text" ? item.text : `[${item.type}]`)).join("\n")
              : JSON.stringify("value" in output ? output.value : output)
        )
      }
    }
  }
  return calls.map((call) => ({
    toolName: call.toolName,
    input: call.input,
    output: results.get(call.toolCallId) ?? "(no result recorded)"
  }))
}
