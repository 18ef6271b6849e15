/**
 * The scripted model: reads the prompt the AI SDK sends (the provider-level
 * `LanguageModelV4Prompt`) and decides the next step as a careful agent
 * would. In `tools` mode it follows the context notes: it collapses the
 * finished task the note names with `context_rewind`, and answers a detail
 * question with `context_search` + `context_restore`. In `tiered` mode it
 * has no context tools and re-reads the file when the detail is not in view.
 */
import type { LanguageModelV4Prompt } from "@ai-sdk/provider"

export type Mode = "tools" | "tiered"

/** The model's next step: a tool call or a final text. */
export type Decision =
  | { readonly type: "call"; readonly toolName: string; readonly input: Record<string, unknown> }
  | { readonly type: "text"; readonly text: string }

type PromptMessage = LanguageModelV4Prompt[number]

const NOTE = "[context note]"

/** The message's text; search results are left out when `withSearch` is false (their snippets are not the file). */
const textOf = (message: PromptMessage, withSearch = true): string =>
  typeof message.content === "string"
    ? message.content
    : message.content
        .map((part) =>
          part.type === "text"
            ? part.text
            : part.type === "tool-result"
              ? !withSearch && part.toolName === "context_search"
                ? ""
                : part.output.type === "text"
                  ? part.output.value
                  : JSON.stringify("value" in part.output ? part.output.value : part.output)
              : ""
        )
        .join("\n")

const toolCalls = (messages: ReadonlyArray<PromptMessage>) =>
  messages.flatMap((message) =>
    message.role === "assistant" ? message.content.flatMap((part) => (part.type === "tool-call" ? [part] : [])) : []
  )

const resultOf = (messages: ReadonlyArray<PromptMessage>, toolName: string): unknown => {
  for (const message of [...messages].reverse())
    if (message.role === "tool")
      for (const part of message.content)
        if (part.type === "tool-result" && part.toolName === toolName && part.output.type === "json")
          return part.output.value
  return undefined
}

/** Decides the next step. */
export const decide = (prompt: LanguageModelV4Prompt, mode: Mode): Decision => {
  const isTask = (message: PromptMessage) => message.role === "user" && !textOf(message).startsWith(NOTE)
  const taskIndex = prompt.findLastIndex(isTask)
  const task = taskIndex === -1 ? "" : textOf(prompt[taskIndex]!)
  const turn = prompt.slice(taskIndex + 1)
  const calls = toolCalls(turn).map((call) => call.toolName)
  const note = turn
    .filter((message) => message.role === "user" && textOf(message).startsWith(NOTE))
    .map((message) => textOf(message))
    .join("\n")

  // A finished earlier request is still in context: collapse it first, with the answer it ended with.
  const stretch = /A new request started[^:]*: (?:.*; )?(\S+) … (\S+) \(/.exec(note)
  if (mode === "tools" && stretch !== null && !calls.includes("context_rewind")) {
    const answer = prompt
      .slice(0, taskIndex)
      .findLast((message) => message.role === "assistant" && textOf(message).length > 0)
    return {
      type: "call",
      toolName: "context_rewind",
      input: { from: stretch[1], to: stretch[2], summary: `Finished task. Result: ${answer ? textOf(answer) : "done"}` }
    }
  }

  const read = /Read and summarize (\S+)/.exec(task)
  if (read !== null) {
    const path = read[1]!
    if (!calls.includes("read_file")) return { type: "call", toolName: "read_file", input: { path } }
    const body = turn
      .filter((message) => message.role === "tool")
      .map((message) => textOf(message))
      .join("\n")
    const functions = body.match(/export function \w+/g) ?? []
    return { type: "text", text: `${path} exports ${functions.length} functions, from ${functions[0]?.slice(16)} on.` }
  }

  const detail = /What is (\w+) in (\S+)\?/.exec(task)
  if (detail !== null) {
    const [, name, path] = detail
    // The value is read from a file's text in view (a read or a restored piece), never from a search snippet.
    const visible = prompt.map((message) => textOf(message, false)).join("\n")
    const value = new RegExp(`${name} = (\\d+)`).exec(visible)
    if (value !== null) return { type: "text", text: `${name} is ${value[1]}` }
    if (mode === "tiered")
      return calls.includes("read_file")
        ? { type: "text", text: `${name} not found` }
        : { type: "call", toolName: "read_file", input: { path } }
    if (!calls.includes("context_search")) return { type: "call", toolName: "context_search", input: { text: name } }
    // The first hit that is not already in view (its own question is): the original the context lost.
    const found = resultOf(turn, "context_search") as
      | { hits?: Array<{ placement: string; restore: Record<string, unknown> }> }
      | undefined
    const hit = found?.hits?.find((candidate) => candidate.placement !== "in-view")
    if (hit !== undefined && !calls.includes("context_restore"))
      return { type: "call", toolName: "context_restore", input: hit.restore }
    return { type: "text", text: `${name} not found` }
  }
  return { type: "text", text: "Nothing to do." }
}
