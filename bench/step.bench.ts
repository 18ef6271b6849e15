/**
 * Per-step cost through the AI SDK middleware (issue #13, item 1). The pi
 * session (`../shared/transcripts/pi/before-compaction.jsonl`, concatenated
 * with relabelled copies to reach ~8K messages) is replayed through
 * `wrapLanguageModel({ model: MockLanguageModelV4, middleware })`: each step
 * sends the whole history as a fresh V4 prompt (new message and part objects
 * around the same values every call, as the AI SDK's per-step conversion
 * builds them; built outside the timed call) plus the messages since the
 * previous step (the assistant reply and its tool results). The model reports
 * usage every step (as providers do), so measurement is anchored and
 * usage-scaled like a real run's (the mock's record of calls is emptied after
 * each step: a provider keeps no prompts).
 *
 * The ~1K and ~8K sessions (1,000 and 1,000 + 7 × the pi session's length
 * messages: the same position in their copies, so every step appends the
 * same messages to both) run in the same process with their steps
 * interleaved (a 1K step, an 8K step, a 1K step, …), so both sizes see the
 * same host speed, load and heap: separate runs of each size were swayed by
 * the shared machine's drift (the same code's 8K / 1K ratio moved 1.5–2×
 * between runs). Both sessions live in one heap, so each step's scavenges
 * copy both sessions' live data — the same for both sizes. Prints per-step
 * median / p99 at each size, wall and CPU time, the garbage-collection pauses
 * inside the steps, beside the cost of tokenizing only the new messages, the
 * 8K / 1K ratio of the interleaved medians (target ≤ 1.5×; median target
 * < 1 ms at 1K) and the load average (CPU time is the steadier figure).
 * Then a control run, not a target: the same two sizes again, each ~1K step
 * first allocating a throwaway prompt of the sizes' difference in messages,
 * so both sizes' steps follow the same fresh allocation (an ~8K step's caller
 * builds the longer prompt right before the middleware runs, which evicts
 * from the CPU caches what the step then reads). Its ratio is the growth of
 * the middleware's own work. Then the same two sizes with the provider's
 * request serialization between steps: after each step (untimed) the
 * request the model received is JSON-encoded, as a provider encodes the
 * body it sends (`JSON.stringify` of the prompt; the AI SDK's providers
 * post JSON). A real step always follows that work (and the HTTP round trip
 * and the tools), so this is what a step costs in an application: the
 * step's code and data are out of the CPU caches at either size, and the
 * ~1K step is as cold as the ~8K one. Printed beside the target, not
 * instead of it. `node bench/run.ts step` (180 timed steps per size and
 * run). Prints; never asserts times.
 */
import { loadavg } from "node:os"
import { PerformanceObserver } from "node:perf_hooks"
import { wrapLanguageModel } from "ai"
import { MockLanguageModelV4 } from "ai/test"
import type { Message } from "../packages/core/src/Message.ts"
import * as PolicyRegistry from "../packages/core/src/PolicyRegistry.ts"
import * as Tokenizers from "../packages/core/src/Tokenizers.ts"
import { piMessages } from "../packages/core/test/support/piTranscript.ts"
import { TieredSummaryEngine } from "../packages/engines/src/index.ts"
import { contextEngineMiddleware } from "../packages/provider-adapters/src/ContextEngineMiddleware.ts"
import * as PromptConversion from "../packages/provider-adapters/src/PromptConversion.ts"

type Prompt = ReturnType<typeof PromptConversion.toPrompt>

const median = (values: ReadonlyArray<number>): number =>
  [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
const p99 = (values: ReadonlyArray<number>): number =>
  [...values].sort((a, b) => a - b)[Math.min(values.length - 1, Math.floor(values.length * 0.99))]!
const fmt = (ms: number): string => `${ms.toFixed(3)} ms`

/** Copy `round` of the session: tool call ids and texts relabelled so no content hash repeats. */
const relabel = (message: Message, round: number): Message => {
  const tag = `[r${round}] `
  if (typeof message.content === "string") return { ...message, content: tag + message.content } as Message
  const content = message.content.map((part) => {
    switch (part.type) {
      case "text":
      case "reasoning":
        return { ...part, text: tag + part.text }
      case "tool-call":
        return { ...part, toolCallId: `${part.toolCallId}-r${round}` }
      case "tool-result":
        return {
          ...part,
          toolCallId: `${part.toolCallId}-r${round}`,
          output: part.output.type === "text" ? { ...part.output, value: tag + part.output.value } : part.output
        }
      default:
        return part
    }
  })
  return { ...message, content } as Message
}

const STEPS = 180

interface StepTimes {
  readonly wallMs: number
  readonly cpuMs: number
  readonly startMs: number
  readonly endMs: number
  readonly tokenizeNewMs: number
  /** Characters of the request body encoded after the step (`encodeRequest`), else 0. */
  readonly bodyChars: number
}

interface Session {
  /** Timed steps this session can take. */
  readonly count: number
  /** Takes the `index`-th timed step (1-based) and times it. */
  readonly step: (index: number) => Promise<StepTimes>
}

/**
 * A session of `STEPS` steps ending at or before `end` messages, warmed (the
 * session holds the history before the first timed step). A step is taken
 * where the AI SDK calls the model: the history ends with a user or tool
 * message (never an assistant tool call awaiting its result); the messages
 * since the previous step are the new ones.
 */
// A throwaway prompt kept alive through a padded step (see `padMessages`), as the caller's prompt is.
const held: Array<unknown> = []

const session = async (
  messages: ReadonlyArray<Message>,
  end: number,
  options: {
    /** Before each step, a throwaway prompt of this many messages (the control run). */
    readonly padMessages?: number
    /** After each step, the request the model received is JSON-encoded, as a provider encodes its body. */
    readonly encodeRequest?: boolean
  } = {}
): Promise<Session> => {
  const { padMessages = 0, encodeRequest = false } = options
  // The model reports usage, as providers do: the request's input tokens (here, the middleware's own measurement of
  // what it sent), so each step's measurement is anchored on the previous response like a real run's.
  let sentTokens = 0
  const model = new MockLanguageModelV4({
    doGenerate: async () => ({
      content: [{ type: "text", text: "ok" }],
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: sentTokens, noCache: sentTokens, cacheRead: 0, cacheWrite: 0 },
        outputTokens: { total: 1, text: 1, reasoning: 0 }
      },
      warnings: []
    })
  })
  const policy = { ...PolicyRegistry.lookupSync("claude-opus-4-5"), contextWindowTokens: 100_000_000 }
  const engine = TieredSummaryEngine.make()
  const middleware = contextEngineMiddleware({
    engine,
    policy,
    onEvent: (event) => {
      if (event.type === "request") sentTokens = event.inputTokens
    }
  })
  const wrapped = wrapLanguageModel({ model, middleware })
  // Every call gets a fresh prompt, as the AI SDK's per-step conversion builds one: new message and part objects
  // around the same values (`convertToLanguageModelPrompt` copies each message and part). Built before the timer:
  // the conversion is the AI SDK's cost, not the middleware's.
  const base = PromptConversion.toPrompt(messages)
  const promptOf = (count: number): Prompt =>
    base.slice(0, count).map((message) => {
      const content = message.content as unknown
      return {
        ...message,
        content: Array.isArray(content) ? content.map((part: object) => ({ ...part })) : content
      } as Prompt[number]
    })
  const call = (prompt: Prompt) => wrapped.doGenerate({ prompt })
  const stepEnds: Array<number> = []
  for (let count = end; count > 0 && stepEnds.length <= STEPS; count--)
    if (messages[count - 1]!.role !== "assistant") stepEnds.unshift(count)
  await call(promptOf(stepEnds[0]!))
  const tokenizer = Tokenizers.get("o200k_base")
  return {
    count: stepEnds.length - 1,
    step: async (index) => {
      const count = stepEnds[index]!
      // Padded: first a throwaway prompt of `padMessages` messages, so the step follows as much fresh allocation as
      // a step of the larger session does (its caller builds the longer prompt right before calling the model).
      if (padMessages > 0) held.push(promptOf(padMessages))
      const prompt = promptOf(count)
      const cpu = process.cpuUsage()
      const startMs = performance.now()
      await call(prompt)
      const endMs = performance.now()
      const used = process.cpuUsage(cpu)
      held.length = 0
      const bodyChars = encodeRequest ? JSON.stringify({ messages: model.doGenerateCalls.at(-1)!.prompt }).length : 0
      // The mock records every call's options (each step's whole prompt); a provider keeps none. Left to grow, the
      // retained prompts were promoted and copied by every later scavenge inside the timed steps.
      model.doGenerateCalls.length = 0
      const text = JSON.stringify(messages.slice(stepEnds[index - 1]!, count).map((message) => message.content))
      const tokenStart = performance.now()
      tokenizer.count(text)
      const tokenizeNewMs = performance.now() - tokenStart
      return {
        wallMs: endMs - startMs,
        cpuMs: (used.user + used.system) / 1000,
        startMs,
        endMs,
        tokenizeNewMs,
        bodyChars
      }
    }
  }
}

export default async function (): Promise<void> {
  const pi = piMessages("pi/before-compaction.jsonl")
  // The ~8K session ends at the same position of its copy of the pi session as the 1K one (1,000 + 7 copies), so
  // both append the same messages at every step (only the round tag differs, same length): the ratio then measures
  // growth with the session's length, not the content appended. With 8,000 exactly, the two sizes stepped through
  // different parts of the session (tokenizing the new messages alone differed by ~20%).
  const sizes = [1_000, 1_000 + 7 * pi.length]
  const rounds = Math.ceil(sizes[1]! / pi.length)
  const all: Array<Message> = []
  for (let round = 0; round < rounds; round++) all.push(...pi.map((message) => relabel(message, round)))
  const loadBefore = loadavg()[0]!
  const run = await interleaved([await session(all, sizes[0]!), await session(all, sizes[1]!)])
  const { times, pauses } = run
  const rows: Array<Record<string, string | number>> = []
  sizes.forEach((size, which) => {
    const steps = times[which]!
    const wall = steps.map((t) => t.wallMs)
    const cpu = steps.map((t) => t.cpuMs)
    const tokenize = steps.map((t) => t.tokenizeNewMs)
    const gc = steps.map((t) =>
      pauses.filter((p) => p.startMs >= t.startMs && p.startMs < t.endMs).reduce((sum, p) => sum + p.durationMs, 0)
    )
    rows.push({
      messages: size,
      steps: steps.length,
      "step median": fmt(median(wall)),
      "step p99": fmt(p99(wall)),
      // CPU time of the process during the step (GC threads included): less swayed by other load on a shared machine.
      "step median (CPU)": fmt(median(cpu)),
      "step p99 (CPU)": fmt(p99(cpu)),
      "GC pause per step (median / mean)": `${fmt(median(gc))} / ${fmt(gc.reduce((a, b) => a + b, 0) / gc.length)}`,
      "tokenize new messages (median)": fmt(median(tokenize)),
      "step / tokenize new": `${(median(wall) / Math.max(median(tokenize), 1e-6)).toFixed(1)}×`
    })
  })
  console.table(rows)
  // Wall times on a shared machine swing with the other processes; CPU time is the steadier figure.
  console.log(
    `load average (1 min) before / after: ${loadBefore.toFixed(2)} / ${loadavg()[0]!.toFixed(2)} on ${navigator.hardwareConcurrency} cores`
  )
  console.log(
    `flatness (steps interleaved in one process): median at ${sizes[1]} / ${sizes[0]} messages = ${ratios(run)} (target ≤ 1.5×; median target < 1 ms at ~1K)`
  )
  // Control, not the target: the ~1K steps each follow as much fresh allocation as an ~8K step (a throwaway prompt
  // of the sizes' difference, built before the step's own prompt). What is left of the growth is the middleware's
  // own; the rest of the ratio above is the ~8K caller's longer prompt, allocated right before each step, evicting
  // from the CPU caches what the middleware's step then reads (its fixed work is slower after it, not longer).
  const padded = await interleaved([
    await session(all, sizes[0]!, { padMessages: sizes[1]! - sizes[0]! }),
    await session(all, sizes[1]!)
  ])
  console.log(
    `control, the ~1K steps padded to the ~8K steps' fresh allocation: median ${fmt(median(padded.times[0]!.map((t) => t.wallMs)))} at ${sizes[0]}, ratio ${ratios(padded)}`
  )
  // As in an application: each step follows the provider's encoding of the previous request (and, in a real run, the
  // HTTP round trip and the tools), so neither size's step finds its code and data in the CPU caches.
  const encoded = await interleaved([
    await session(all, sizes[0]!, { encodeRequest: true }),
    await session(all, sizes[1]!, { encodeRequest: true })
  ])
  const at = (which: number) => {
    const steps = encoded.times[which]!
    const bodyMb = median(steps.map((t) => t.bodyChars)) / 1e6
    return `${fmt(median(steps.map((t) => t.wallMs)))} at ${sizes[which]} (request body ~${bodyMb.toFixed(1)}M characters)`
  }
  console.log(`with the provider's request encoding between steps: median ${at(0)}, ${at(1)}, ratio ${ratios(encoded)}`)
}

/** Steps the sessions in turn (a step of each, then the next step of each, …), recording the GC pauses meanwhile. */
const interleaved = async (sessions: ReadonlyArray<Session>) => {
  // Garbage-collection pauses on the main thread (wall time; most are scavenges that copy the prompt the step was
  // given, which the AI SDK allocates right before the middleware runs), assigned to the step they started in.
  const pauses: Array<{ readonly startMs: number; readonly durationMs: number }> = []
  const observer = new PerformanceObserver((list) => {
    for (const entry of list.getEntries()) pauses.push({ startMs: entry.startTime, durationMs: entry.duration })
  })
  observer.observe({ entryTypes: ["gc"] })
  const times: Array<Array<StepTimes>> = sessions.map(() => [])
  const stepCount = Math.min(...sessions.map((s) => s.count))
  for (let index = 1; index <= stepCount; index++)
    for (let which = 0; which < sessions.length; which++) times[which]!.push(await sessions[which]!.step(index))
  await new Promise((resolve) => setTimeout(resolve, 10))
  observer.disconnect()
  return { times, pauses }
}

/** The last session's median over the first's, wall and CPU. */
const ratios = (run: { readonly times: ReadonlyArray<ReadonlyArray<StepTimes>> }): string => {
  const of = (pick: (t: StepTimes) => number) =>
    (median(run.times.at(-1)!.map(pick)) / median(run.times[0]!.map(pick))).toFixed(2)
  return `${of((t) => t.wallMs)}× wall, ${of((t) => t.cpuMs)}× CPU`
}
