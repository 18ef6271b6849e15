/**
 * The deterministic pipeline (SlidingWindowEngine) on the real pi transcript
 * (`../shared/transcripts/pi/before-compaction.jsonl`) for a 200K and a 128K
 * context window, next to the AI SDK's `pruneMessages` and LangChain's
 * `trimMessages` (with its chars/4 counter and with our exact counter, cold and
 * warm), Mastra's `TokenLimiterProcessor` and pi's `findCutPoint`
 * (`bench/peers.ts`; a peer that cannot be loaded is reported with the reason)
 * on the same messages in the same process. Ratios are cold against cold and
 * warm against warm. Every result is
 * measured exactly (o200k_base) and checked for tool pairing.
 * `node bench/run.ts pipeline`. Prints; never asserts times.
 */
import {
  AIMessage,
  type BaseMessage,
  HumanMessage,
  SystemMessage,
  ToolMessage,
  trimMessages
} from "@langchain/core/messages"
import { pruneMessages } from "ai"
import * as ContextView from "../packages/core/src/ContextView.ts"
import type * as Entry from "../packages/core/src/Entry.ts"
import * as Measurer from "../packages/core/src/Measurer.ts"
import type { Message } from "../packages/core/src/Message.ts"
import * as MessageTokens from "../packages/core/src/MessageTokens.ts"
import type { ModelPolicy } from "../packages/core/src/ModelPolicy.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import * as ToolPairing from "../packages/core/src/ToolPairing.ts"
import * as Cases from "../packages/core/src/testing/Cases.ts"
import { transcript } from "../packages/core/test/support/shared.ts"
import * as SlidingWindowEngine from "../packages/engines/src/SlidingWindowEngine.ts"
import * as Import from "../packages/transcripts/src/importers/Import.ts"
import * as Peers from "./peers.ts"

const time = async <A>(run: () => A | Promise<A>): Promise<[A, number]> => {
  const start = performance.now()
  const result = await run()
  return [result, performance.now() - start]
}
const cpuMs = (): number => {
  const usage = process.cpuUsage()
  return (usage.user + usage.system) / 1000
}
const median = (values: ReadonlyArray<number>): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const fmt = (ms: number): string => `${ms.toFixed(1)} ms`
const k = (tokens: number): string => `${(tokens / 1000).toFixed(1)}K`

const exact = Tokenizers.get("o200k_base")
const measureExactly = (messages: ReadonlyArray<Message>): number =>
  Measurer.make(exact).measure(ContextView.fromMessages(messages)).inputTokens
const pairingProblems = (messages: ReadonlyArray<Message>): number =>
  ToolPairing.analyze(ContextView.fromMessages(messages).items).problems.length

// --- LangChain conversion (outside the timed region) ------------------------

const textOf = (message: Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content
        .map((part) =>
          part.type === "text" || part.type === "reasoning" ? part.text : part.type === "image" ? "[image]" : ""
        )
        .join("\n")

/** Our messages as LangChain messages; `id` = `index` or `index:part` to map the output back. */
const toLangChain = (messages: ReadonlyArray<Message>): Array<BaseMessage> =>
  messages.flatMap((message, index): Array<BaseMessage> => {
    const id = String(index)
    switch (message.role) {
      case "system":
        return [new SystemMessage({ content: message.content, id })]
      case "user":
        return [new HumanMessage({ content: textOf(message), id })]
      case "assistant": {
        const calls =
          typeof message.content === "string"
            ? []
            : message.content.flatMap((part) =>
                part.type === "tool-call"
                  ? [
                      {
                        id: part.toolCallId,
                        name: part.toolName,
                        args: (part.input ?? {}) as Record<string, unknown>,
                        type: "tool_call" as const
                      }
                    ]
                  : []
              )
        return [new AIMessage({ content: textOf(message), tool_calls: calls, id })]
      }
      default:
        return message.content.flatMap((part, partIndex) =>
          part.type === "tool-result"
            ? [
                new ToolMessage({
                  content:
                    part.output.type === "text" || part.output.type === "error-text"
                      ? part.output.value
                      : JSON.stringify(part.output),
                  tool_call_id: part.toolCallId,
                  name: part.toolName,
                  id: `${index}:${partIndex}`
                })
              ]
            : []
        )
    }
  })

/** Maps LangChain's output back to our messages (kept tool results regrouped). */
const fromLangChain = (output: ReadonlyArray<BaseMessage>, messages: ReadonlyArray<Message>): Array<Message> => {
  const kept = new Map<number, Set<number> | "all">()
  for (const message of output) {
    const [index, part] = String(message.id).split(":")
    if (part === undefined) kept.set(Number(index), "all")
    else {
      const parts = kept.get(Number(index))
      if (parts === undefined || parts === "all") kept.set(Number(index), new Set([Number(part)]))
      else parts.add(Number(part))
    }
  }
  return [...kept.entries()]
    .sort((a, b) => a[0] - b[0])
    .map(([index, parts]) => {
      const message = messages[index]!
      if (parts === "all" || message.role !== "tool") return message
      return { ...message, content: message.content.filter((_, partIndex) => parts.has(partIndex)) }
    })
}

/** LangChain-style approximate counter: characters / 4 of content and tool-call arguments, + 3 per message. */
const approximateCounter = (messages: ReadonlyArray<BaseMessage>): number => {
  let chars = 0
  for (const message of messages) {
    chars += typeof message.content === "string" ? message.content.length : JSON.stringify(message.content).length
    if (message instanceof AIMessage)
      for (const call of message.tool_calls ?? []) chars += JSON.stringify(call.args).length
  }
  return Math.ceil(chars / 4) + 3 * messages.length
}

// -----------------------------------------------------------------------------

export default async function (): Promise<void> {
  const piFile = transcript("pi/before-compaction.jsonl")
  const [imported, importMs] = await time(() => Import.importFilePromise(piFile))
  const [mastra, pi] = await Promise.all([Peers.mastra(), Peers.piCut()])
  for (const [name, peer] of [
    ["@mastra/core TokenLimiterProcessor", mastra],
    ["@mariozechner/pi-coding-agent findCutPoint", pi]
  ] as const)
    if ("unavailable" in peer) console.log(`peer not run: ${name} could not be loaded — ${peer.unavailable}`)
  const entries: ReadonlyArray<Entry.Entry> = imported.transcript.entries.filter((entry) => entry.kind === "message")
  const messages = entries.flatMap((entry) => (entry.kind === "message" ? [entry.message] : []))
  const inputTokens = measureExactly(messages)
  console.log(
    `pi/before-compaction.jsonl: ${messages.length} messages, ${k(inputTokens)} tokens (o200k_base, exact); import ${fmt(importMs)} (not timed below)`
  )

  const windows = [
    { contextWindow: 200_000, maxOutputTokens: 32_000 },
    { contextWindow: 128_000, maxOutputTokens: 16_384 },
    // A 48K window: pruneMessages applies a fixed rule, not a budget, so this shows whether a peer still fits
    // when the budget is tighter than its rule's output (the session's last user turn alone is ~27K tokens).
    { contextWindow: 48_000, maxOutputTokens: 4_096 }
  ]
  const summary: Array<Record<string, string | number>> = []
  for (const window of windows) {
    const policy: ModelPolicy = {
      ...Cases.policySync(window, `bench-${window.contextWindow / 1000}k`),
      tokenizer: "o200k_base",
      promptCacheTtlMs: 300_000
    }
    const input = { entries, policy }

    // Cold: a fresh measurer (what the first request of a session pays): the engine estimates the old part and
    // counts exactly the recent suffix and the result (EstimateFirst); the result is re-measured exactly below.
    const coldMeasurer = Measurer.make(exact)
    const cold = SlidingWindowEngine.makeAsync({ measurer: () => coldMeasurer })
    let coldOutcome: [Awaited<ReturnType<typeof cold.compact>>, number]
    let coldCpuMs = 0
    try {
      const cpuBefore = cpuMs()
      coldOutcome = await time(() => cold.compact(input))
      coldCpuMs = cpuMs() - cpuBefore
    } catch (error) {
      // e.g. BudgetExceeded: the turn in progress alone does not fit this window; reported, not hidden.
      console.log(`\n--- ${k(window.contextWindow)} window: our engine cannot fit it: ${String(error)}`)
      continue
    }
    const [coldResult, coldMs] = coldOutcome
    // Warm: the request path has already measured (shouldCompact); compaction re-measures only what it changed.
    // The machine may be shared: report the median and the minimum wall time and the process CPU time.
    const warmRuns: Array<number> = []
    const warmCpu: Array<number> = []
    let result = coldResult
    let lowWaterTokens = 0
    for (let run = 0; run < 7; run++) {
      const measurer = Measurer.make(exact)
      const engine = SlidingWindowEngine.makeAsync({ measurer: () => measurer })
      const decision = await engine.shouldCompact(input)
      lowWaterTokens =
        decision.budget.fixedOverheadTokens +
        Math.floor(decision.budget.availableTokens * SlidingWindowEngine.defaults.lowWaterShare)
      const cpuBefore = cpuMs()
      const [warmResult, warmMs] = await time(() => engine.compact(input))
      warmCpu.push(cpuMs() - cpuBefore)
      if (!decision.compact) throw new Error("expected compaction to be needed")
      warmRuns.push(warmMs)
      result = warmResult
    }
    const budget = result.after.budgetTokens
    const afterExact = measureExactly(ContextView.toMessages(result.view))
    console.log(
      `\nSlidingWindowEngine.compact, warm: median ${fmt(median(warmRuns))}, min ${fmt(Math.min(...warmRuns))}, median CPU ${fmt(median(warmCpu))}`
    )
    console.log(
      `--- ${k(window.contextWindow)} window: input budget ${k(budget)}, low-water mark ${k(lowWaterTokens)} ---`
    )
    console.table(
      result.stages.map((stage) => ({
        stage: stage.stage,
        status: stage.status,
        "tokens before": stage.tokensBefore,
        "tokens after": stage.tokensAfter,
        freed: stage.tokensBefore - stage.tokensAfter,
        edits: stage.edits,
        ms: Number(stage.durationMs.toFixed(2)),
        note: stage.note ?? ""
      }))
    )

    // Peers, same messages, same process.
    const pruneRuns: Array<number> = []
    let pruned: Array<Message> = []
    for (let run = 0; run < 7; run++) {
      const [out, ms] = await time(() =>
        pruneMessages({
          messages: messages as Parameters<typeof pruneMessages>[0]["messages"],
          reasoning: "before-last-message",
          toolCalls: "before-last-2-messages",
          emptyMessages: "remove"
        })
      )
      pruneRuns.push(ms)
      pruned = out as Array<Message>
    }
    const lcMessages = toLangChain(messages)
    const trimWith = (tokenCounter: (list: Array<BaseMessage>) => number) =>
      trimMessages(lcMessages, {
        maxTokens: budget,
        strategy: "last",
        tokenCounter,
        includeSystem: true,
        startOn: "human",
        allowPartial: false
      })
    // chars/4, as LangChain's docs suggest (median of 3).
    const trimRuns: Array<number> = []
    let trimmed: Array<BaseMessage> = []
    for (let run = 0; run < 3; run++) {
      const [out, ms] = await time(() => trimWith(approximateCounter))
      trimRuns.push(ms)
      trimmed = out
    }
    const trimmedMessages = fromLangChain(trimmed, messages)
    // Exact, on our definition (the same o200k measurer and reasoning rule we are judged by): the kept
    // LangChain messages mapped back to the same content we measure. Cold: a fresh measurer; warm: its cache
    // filled by the cold run — as our cold / warm rows.
    // Exact, on our definition (the same o200k measurer and reasoning rule we are judged by): Σ per-message
    // counts at each message's position (before / in the current tool loop) + reply priming, which equals
    // measure().inputTokens (the measurer's additivity property). Each LangChain message is counted once per
    // position through the measurer's cache, so a counter call costs O(messages in the list), as a
    // per-message counter in LangChain would.
    const exactCounter = (measurer: Measurer.Measurer) => {
      const counted = new WeakMap<BaseMessage, { current: number; prior: number }>()
      const countOf = (message: BaseMessage) => {
        let known = counted.get(message)
        if (known === undefined) {
          const ours = fromLangChain([message], messages)
          const tokens = (position: "current" | "prior") =>
            ours.reduce((sum, item) => sum + measurer.messageTokens(item, "transcript", position), 0)
          known = { current: tokens("current"), prior: tokens("prior") }
          counted.set(message, known)
        }
        return known
      }
      return (list: Array<BaseMessage>) => {
        let loopStart = 0
        for (let index = list.length - 1; index >= 0; index--)
          if (list[index] instanceof HumanMessage) {
            loopStart = index
            break
          }
        let tokens = MessageTokens.replyPrimingTokens
        list.forEach((message, index) => {
          const known = countOf(message)
          tokens += index < loopStart ? known.prior : known.current
        })
        return tokens
      }
    }
    const trimMeasurer = Measurer.make(exact)
    const [trimmedExact, trimExactColdMs] = await time(() => trimWith(exactCounter(trimMeasurer)))
    const [, trimExactWarmMs] = await time(() => trimWith(exactCounter(trimMeasurer)))
    const trimmedExactMessages = fromLangChain(trimmedExact, messages)
    // Mastra's TokenLimiter (its own o200k counter) and pi's cut (chars/4), when they load; cold (first call).
    const peerRows: Array<{ name: string; ms: number; messages: number; tokens: number; problems: number }> = []
    if ("run" in mastra) {
      const [kept, ms] = await time(() => mastra.run(messages, budget))
      peerRows.push({
        name: "@mastra/core TokenLimiterProcessor (processLLMRequest, own o200k counter, cold)",
        ms,
        messages: kept.length,
        tokens: measureExactly(kept),
        problems: pairingProblems(kept)
      })
    }
    if ("run" in pi) {
      const [kept, ms] = await time(() => pi.run(piFile, imported.transcript.entries, budget))
      peerRows.push({
        name: "@mariozechner/pi-coding-agent findCutPoint (keep = budget by chars/4; pi then calls an LLM, not run)",
        ms,
        messages: kept.length,
        tokens: measureExactly(kept),
        problems: pairingProblems(kept)
      })
    }

    const rows = [
      {
        name: "context-engine SlidingWindowEngine.compact (warm, median of 7)",
        ms: median(warmRuns),
        messages: result.view.items.length,
        tokens: afterExact,
        problems: pairingProblems(ContextView.toMessages(result.view))
      },
      {
        name: "context-engine SlidingWindowEngine.compact (cold: fresh measurer, estimate-first, result counted exactly)",
        ms: coldMs,
        messages: coldResult.view.items.length,
        tokens: measureExactly(ContextView.toMessages(coldResult.view)),
        problems: pairingProblems(ContextView.toMessages(coldResult.view))
      },
      {
        name: "ai pruneMessages (reasoning before-last-message, toolCalls before-last-2-messages)",
        ms: median(pruneRuns),
        messages: pruned.length,
        tokens: measureExactly(pruned),
        problems: pairingProblems(pruned)
      },
      {
        name: "@langchain/core trimMessages (last, chars/4 counter, median of 3)",
        ms: median(trimRuns),
        messages: trimmedMessages.length,
        tokens: measureExactly(trimmedMessages),
        problems: pairingProblems(trimmedMessages)
      },
      {
        name: "@langchain/core trimMessages (last, our exact counter, cold)",
        ms: trimExactColdMs,
        messages: trimmedExactMessages.length,
        tokens: measureExactly(trimmedExactMessages),
        problems: pairingProblems(trimmedExactMessages)
      },
      {
        name: "@langchain/core trimMessages (last, our exact counter, warm)",
        ms: trimExactWarmMs,
        messages: trimmedExactMessages.length,
        tokens: measureExactly(trimmedExactMessages),
        problems: pairingProblems(trimmedExactMessages)
      },
      ...peerRows
    ]
    // Ratios cold against cold and warm against warm; pruneMessages counts nothing (a fixed rule), so it is
    // set against our warm run.
    const oursWarm = rows[0]!.ms
    const oursCold = rows[1]!.ms
    const peerOf = (name: string) => (name.includes("cold") ? oursCold : oursWarm)
    console.table(
      rows.map((row) => ({
        method: row.name,
        time: fmt(row.ms),
        "× ours (same temperature)": Number((row.ms / peerOf(row.name)).toFixed(2)),
        messages: row.messages,
        "tokens (exact)": row.tokens,
        "vs budget": `${(((row.tokens - budget) / budget) * 100).toFixed(1)}%`,
        "fits budget": row.tokens <= budget ? "yes" : "NO",
        "pairing problems": row.problems
      }))
    )
    summary.push({
      window: k(window.contextWindow),
      "ours warm ms (median)": Number(median(warmRuns).toFixed(1)),
      "ours warm ms (min)": Number(Math.min(...warmRuns).toFixed(1)),
      "ours warm CPU ms": Number(median(warmCpu).toFixed(1)),
      "ours cold ms": Number(coldMs.toFixed(1)),
      "ours cold CPU ms": Number(coldCpuMs.toFixed(1)),
      "ours tokens": afterExact,
      budget,
      "pruneMessages tokens": rows[2]!.tokens,
      "trimMessages tokens": rows[3]!.tokens,
      "trimMessages ms": Number(median(trimRuns).toFixed(1)),
      "trimMessages exact tokens": rows[4]!.tokens,
      "trimMessages exact cold / ours cold": Number((trimExactColdMs / coldMs).toFixed(2)),
      "trimMessages exact warm / ours warm": Number((trimExactWarmMs / median(warmRuns)).toFixed(2))
    })
  }
  console.log(
    `\nsummary (load average ${(await import("node:os"))
      .loadavg()
      .map((load) => load.toFixed(1))
      .join(" ")})`
  )
  console.table(summary)
}
