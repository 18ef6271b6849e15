/**
 * Peers the pipeline bench runs beside us, loaded at run time so a peer that
 * cannot be installed or loaded is reported with the exact reason instead of
 * failing the whole bench (issue #13, item 7):
 *
 * - Mastra's `TokenLimiterProcessor` (`@mastra/core/processors`), through its
 *   `processLLMRequest` hook, which trims the provider prompt (AI SDK
 *   `LanguageModelV2Prompt`, the shape our messages convert to) with its own
 *   o200k counter;
 * - pi's cut (`findCutPoint` of `@mariozechner/pi-coding-agent`) on pi's own
 *   session entries (the same JSONL file), keeping `keepRecentTokens` =
 *   the budget by pi's chars/4 estimate; pi then summarizes the rest with an
 *   LLM call, which the bench cannot make (not timed, not counted).
 *
 * Each returns the messages it keeps as our messages, so every result is
 * measured exactly on the same definition by the bench.
 *
 * The replay bench also runs pi's compaction rule ({@link piCompaction}):
 * `shouldCompact` and `findCutPoint` of the same package on the same file.
 */
import { readFileSync } from "node:fs"
import type * as Entry from "../packages/core/src/Entry.ts"
import type { Message } from "../packages/core/src/Message.ts"
import * as PromptConversion from "../packages/provider-adapters/src/PromptConversion.ts"

/** A loaded peer, or why it is not there. */
export type Peer<F> = { readonly run: F } | { readonly unavailable: string }

const reasonOf = (error: unknown): string =>
  error instanceof Error ? `${error.name}: ${error.message}` : String(error)

/** Mastra's TokenLimiterProcessor: `(messages, limitTokens) => kept messages`. */
export const mastra = async (): Promise<
  Peer<(messages: ReadonlyArray<Message>, limitTokens: number) => Promise<Array<Message>>>
> => {
  try {
    const module = (await import("@mastra/core/processors")) as unknown as {
      TokenLimiterProcessor: new (options: {
        limit: number
      }) => {
        processLLMRequest: (args: Record<string, unknown>) => Promise<{ prompt?: ReadonlyArray<unknown> } | undefined>
      }
    }
    return {
      run: async (messages, limitTokens) => {
        const prompt = PromptConversion.toPrompt(messages)
        const back = new Map<unknown, Message>(prompt.map((message, index) => [message, messages[index]!]))
        const limiter = new module.TokenLimiterProcessor({ limit: limitTokens })
        const result = await limiter.processLLMRequest({
          prompt,
          model: { provider: "openai", modelId: "gpt-4o", specificationVersion: "v2" },
          stepNumber: 0,
          steps: [],
          state: {},
          abort: (reason?: string) => {
            throw new Error(`TokenLimiter aborted: ${reason ?? ""}`)
          }
        })
        const kept = result?.prompt ?? prompt
        return kept.map((message) => back.get(message) ?? (message as Message))
      }
    }
  } catch (error) {
    return { unavailable: reasonOf(error) }
  }
}

interface PiLine {
  readonly type: string
}

/** pi's entries of a session file (every line but the header), each with its line number (our id `pi:<line>`). */
const piEntries = (file: string): Array<{ readonly line: number; readonly entry: PiLine }> =>
  readFileSync(file, "utf8")
    .split("\n")
    .map((text, index) => ({ text, line: index + 1 }))
    .filter((line) => line.text.trim().length > 0)
    .map((line) => ({ line: line.line, entry: JSON.parse(line.text) as PiLine }))
    .filter((item) => item.entry.type !== "session")

/** pi's cut on its own session file: `(file, entries we imported, keepRecentTokens) => kept messages`. */
export const piCut = async (): Promise<
  Peer<(file: string, imported: ReadonlyArray<Entry.Entry>, keepRecentTokens: number) => Array<Message>>
> => {
  try {
    const module = (await import("@mariozechner/pi-coding-agent")) as unknown as {
      findCutPoint: (
        entries: ReadonlyArray<unknown>,
        startIndex: number,
        endIndex: number,
        keepRecentTokens: number
      ) => { readonly firstKeptEntryIndex: number }
    }
    return {
      run: (file, imported, keepRecentTokens) => {
        const entries = piEntries(file)
        const cut = module.findCutPoint(
          entries.map((item) => item.entry),
          0,
          entries.length,
          keepRecentTokens
        )
        const keptLines = new Set(entries.slice(cut.firstKeptEntryIndex).map((item) => `pi:${item.line}`))
        return imported.flatMap((entry) =>
          entry.kind === "message" && (keptLines.has(entry.id) || entry.message.role === "system")
            ? [entry.message]
            : []
        )
      }
    }
  } catch (error) {
    return { unavailable: reasonOf(error) }
  }
}

/** pi's compaction rule, as its package exports it (`core/compaction`). */
export interface PiCompaction {
  readonly settings: { readonly enabled: boolean; readonly reserveTokens: number; readonly keepRecentTokens: number }
  readonly shouldCompact: (contextTokens: number, contextWindow: number, settings: PiCompaction["settings"]) => boolean
  readonly findCutPoint: (
    entries: ReadonlyArray<unknown>,
    startIndex: number,
    endIndex: number,
    keepRecentTokens: number
  ) => { readonly firstKeptEntryIndex: number }
  /** pi's entries of a session file (every line but the header), each with its line number (our id `pi:<line>`). */
  readonly entries: (file: string) => Array<{ readonly line: number; readonly entry: PiLine }>
}

/** pi's `DEFAULT_COMPACTION_SETTINGS`, `shouldCompact` and `findCutPoint`. */
export const piCompaction = async (): Promise<Peer<PiCompaction>> => {
  try {
    const module = (await import("@mariozechner/pi-coding-agent")) as unknown as Omit<
      PiCompaction,
      "settings" | "entries"
    > & { DEFAULT_COMPACTION_SETTINGS: PiCompaction["settings"] }
    return {
      run: {
        settings: module.DEFAULT_COMPACTION_SETTINGS,
        shouldCompact: module.shouldCompact,
        findCutPoint: module.findCutPoint,
        entries: piEntries
      }
    }
  } catch (error) {
    return { unavailable: reasonOf(error) }
  }
}
