import { spawnSync } from "node:child_process"
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { type Checkpoint, CheckpointValidation, Decode, Message, PolicyRegistry } from "@context-engine/core"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { TieredSummaryEngine } from "@context-engine/engines"
import { Import } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"
import * as CompactRender from "../src/CompactRender.ts"
import * as Compact from "../src/commands/compact.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const pi = transcript("pi/before-compaction.jsonl")
const decodeMessage = Decode.decodeUnknownSync(Message.Message, "message")

const textOf = (message: Message.Message): string =>
  typeof message.content === "string"
    ? message.content
    : message.content.map((part) => ("text" in part ? part.text : "")).join("")

// Generous timeouts: the pi session is 2.4 MB and the machine is shared; nothing asserts a duration.
describe("context-engine compact", { timeout: 120_000 }, () => {
  const dir = mkdtempSync(join(tmpdir(), "compact-"))
  const out = join(dir, "compacted.json")
  // A 128K model: the session (about 177K tokens once earlier turns' thinking is stripped, as Anthropic counts it)
  // needs a checkpoint there; in its own 200K window the cheap tiers suffice.
  const first = Compact.run(pi, { out, model: "gpt-4o" }, quiet)

  it("compacts the real pi session offline with a validated checkpoint that fits", async () => {
    const { exitCode, report } = await first
    expect(exitCode).toBe(0)
    expect(report!.decision.reasons).toContain("threshold")
    expect(report!.fits).toBe(true)
    expect(report!.tokens.after.input).toBeLessThan(report!.tokens.before.input)
    expect(report!.tokens.after.input).toBeLessThanOrEqual(report!.policy.inputBudgetTokens)
    expect(report!.checkpoint?.validation?.ok).toBe(true)
    expect(report!.checkpoint?.summarizer.kind).toBe("extractive")
    // the imported pi compactions are the previous checkpoints: this one is the third generation
    expect(report!.checkpoint?.generation).toBe(3)
    expect(report!.stages.map((stage) => stage.stage)).toContain("checkpoint")
  })

  it("prints a report a person reads: categories, stages, cut point, validation, the checkpoint", async () => {
    const { output, report } = await first
    for (const heading of [
      "Tokens per category",
      "Stages",
      "Cut point:",
      "Validation: passed",
      "## Goal",
      "## Next Steps"
    ])
      expect(output).toContain(heading)
    // every validation check is printed as "✓ name  detail": the name never runs into its detail
    for (const check of report!.checkpoint!.validation!.checks)
      expect(output).toMatch(new RegExp(`[✓✗] ${check.name} {2,}\\S`))
  })

  it("keeps the token table's columns apart when a transcript's counts run to millions", async () => {
    const { report } = await first
    // a rolling compaction of a 40 MiB pi session: 3,721,359 tool-result tokens before, 0 after
    const scale = (counts: Record<string, number>) =>
      Object.fromEntries(Object.entries(counts).map(([key, tokens]) => [key, tokens * 53]))
    const big = { ...report!, tokens: { ...report!.tokens, before: scale(report!.tokens.before) } }
    const table = CompactRender.render(big as typeof report & {}, undefined)
      .split("\n")
      .filter((line) => /^ {2}(tool results|total input) /.test(line))
    expect(table).toHaveLength(2)
    // label, then before, after and change, each separated by at least two spaces
    for (const line of table) expect(line).toMatch(/^ {2}\S.*\S {2,}[\d,]+ {2,}[\d,]+ {2,}-[\d,]+$/)
  })

  it("explains in words what the next request holds: the kept tail, the user messages kept verbatim, what the checkpoint stands in for, the output file", async () => {
    const { output, report } = await first
    const { keptTail, keptUsers, checkpoint, transcriptMessages, notSentMessages, dropped } = report!.handoff
    // SOURCES.md: the pi session has 990 messages, none of them system messages.
    expect(transcriptMessages).toBe(990)
    expect(dropped).toBeNull()
    expect(checkpoint).toMatchObject({ written: true, generation: 3 })
    // The kept tail starts at the cut; the covered user messages kept verbatim are named apart (QA s5 item 5: the
    // "newest 32 messages" were 31 covered user messages and one tail message).
    expect(keptTail.firstEntryId).toBe(report!.cutPoint!.firstKeptEntryId)
    expect(keptUsers!.messages).toBeGreaterThan(0)
    expect(keptUsers!.firstEntryId).toBe(report!.cutPoint!.coveredFromEntryId)
    // The request is the checkpoint, the kept users, the kept tail and the 3 tokens priming the reply (no system
    // prompt or tools here).
    expect(keptTail.tokens + keptUsers!.tokens + checkpoint!.tokens + 3).toBe(report!.tokens.after.input)
    // The checkpoint's size in the text is its table row plus its message framing, both named.
    expect(checkpoint!.textTokens).toBe(report!.tokens.after.checkpoint)
    // Everything not sent is older than the tail (the checkpoint stands in for it) or an empty message inside it.
    expect(checkpoint!.standsInForMessages + keptTail.leftOutMessages).toBe(notSentMessages)
    expect(checkpoint!.summarizedMessages + checkpoint!.earlierMessages).toBe(checkpoint!.standsInForMessages)
    const written = JSON.parse(readFileSync(out, "utf8")) as { messages: Array<{ role: string }> }
    expect(written.messages).toHaveLength(1 + keptUsers!.messages + keptTail.messages)
    // between the checkpoint and the tail: user messages only
    expect(new Set(written.messages.slice(1, 1 + keptUsers!.messages).map((message) => message.role))).toEqual(
      new Set(["user"])
    )
    // The checkpoint stage's "covered N" is the same range as the request held it: the messages it summarizes, the
    // user messages kept verbatim, less the range's messages normalize dropped, plus the results it inserted.
    const covered = Number(
      /covered (\d+) messages/.exec(report!.stages.find((s) => s.stage === "checkpoint")!.note!)![1]
    )
    const position = (id: string) => Number(id.slice("pi:".length))
    const inRange = (id: string) =>
      position(id) >= position(report!.cutPoint!.coveredFromEntryId!) &&
      position(id) <= position(report!.cutPoint!.coveredToEntryId)
    const repairs = report!.repairs.filter((repair) => inRange(repair.entryId))
    expect(covered).toBe(
      checkpoint!.summarizedMessages +
        keptUsers!.messages -
        repairs.filter((repair) => repair.op === "drop").length +
        repairs.filter((repair) => repair.op === "insert").length
    )
    const fmt = (value: number) => value.toLocaleString("en-US")
    expect(output).toContain(
      `Kept tail: ${keptTail.messages === 1 ? "the newest message" : `the newest ${fmt(keptTail.messages)} messages`} (${keptTail.firstEntryId === keptTail.lastEntryId ? keptTail.firstEntryId : `${keptTail.firstEntryId} … ${keptTail.lastEntryId}`}, ${fmt(keptTail.tokens)} tokens), sent word for word`
    )
    expect(output).toContain(
      `Earlier user messages: ${fmt(keptUsers!.messages)} messages of the user's own words from the summarized range (${keptUsers!.firstEntryId} … ${keptUsers!.lastEntryId}, ${fmt(keptUsers!.tokens)} tokens)`
    )
    expect(output).toContain(
      `Checkpoint 3 (${fmt(checkpoint!.tokens)} tokens with its message framing; ${fmt(checkpoint!.textTokens)} in the table's checkpoint row) stands in for ${fmt(checkpoint!.standsInForMessages)} older messages not sent: ${fmt(checkpoint!.summarizedMessages)} of ${report!.cutPoint!.coveredFromEntryId} … ${report!.cutPoint!.coveredToEntryId}, which it summarizes, and ${fmt(checkpoint!.earlierMessages)} messages before ${report!.cutPoint!.coveredFromEntryId}, which checkpoint 2 summarized`
    )
    expect(output).toContain(`these messages plus the ${fmt(keptUsers!.messages)} user messages kept word for word`)
    expect(output).toContain("Nothing is deleted: the transcript file is not changed.")
    expect(output).toContain(`Wrote ${out}:`)
    expect(output).toContain(
      "entriesToAppend: the checkpoint and the stages' edits; to record this compaction, commit them to a context-engine transcript store"
    )
  })

  it("with a sliding window, says which messages were dropped with no summary and what the recorded checkpoint covers", async () => {
    const { output, report } = await Compact.run(pi, { engine: "sliding-window", model: "gpt-4o" }, quiet)
    const { keptTail, checkpoint, transcriptMessages, dropped } = report!.handoff
    // pi's own second compaction (inspect: "#2 pi:629 … kept from pi:552") still stands in for what came before pi:552.
    expect(checkpoint).toMatchObject({ written: false, generation: 2 })
    expect(dropped?.firstEntryId).toBe("pi:552")
    expect(
      checkpoint!.standsInForMessages +
        dropped!.messages +
        keptTail.leftOutMessages +
        (transcriptMessages - report!.handoff.notSentMessages)
    ).toBe(990)
    expect(output).toContain(
      `Dropped: ${dropped!.messages} messages (pi:552 … ${dropped!.lastEntryId}, oldest first: whole turns, or the oldest steps of a turn whose ask stays; a tool call goes with its result)`
    )
    expect(output).toContain("Nothing was written: add --out FILE")
  })

  it("names memory records and says when everything is sent", () => {
    const report = (handoff: Partial<Compact.CompactReport["handoff"]>) =>
      ({
        policy: { keepRecentTokens: 2_000 },
        handoff: {
          keptTail: {
            messages: 5,
            tokens: 900,
            firstEntryId: "e7",
            lastEntryId: "e11",
            changedMessages: 0,
            changedBy: [],
            leftOutMessages: 0
          },
          transcriptMessages: 5,
          notSentMessages: 0,
          keptUsers: null,
          checkpoint: null,
          memory: null,
          dropped: null,
          ...handoff
        }
      }) as unknown as Compact.CompactReport
    expect(CompactRender.handoffLines(report({}))).toContain(
      "  Everything: all 5 messages (900 tokens), sent word for word. Nothing needed summarizing."
    )
    const withMemory = CompactRender.handoffLines(
      report({
        transcriptMessages: 12,
        notSentMessages: 7,
        checkpoint: {
          written: true,
          generation: 1,
          tokens: 300,
          standsInForMessages: 7,
          summarizedMessages: 7,
          earlierMessages: 0,
          textTokens: 297,
          coveredFromEntryId: null,
          coveredToEntryId: "e6"
        },
        memory: { records: 2, tokens: 40 }
      })
    )
    expect(withMemory).toContain(
      "  Checkpoint 1 (300 tokens with its message framing; 297 in the table's checkpoint row) stands in for 7 older messages not sent: 7 of the messages up to e6, which it summarizes. (The Stages row's \"covered\" counts that range as the request held it: these messages, after normalize's repairs.) It is printed below as the model reads it: goal, progress, decisions, files, next steps."
    )
    expect(withMemory).toContain(
      "  Memory: 2 records (40 tokens) the memory flush kept from the summarized messages, sent with the checkpoint."
    )
  })

  it("--out writes ModelMessage[] with the checkpoint before the latest user message, plus checkpoint and report", async () => {
    await first
    const written = JSON.parse(readFileSync(out, "utf8")) as {
      messages: Array<unknown>
      checkpoint: { id: string; content: unknown }
      report: Compact.CompactReport
      entriesToAppend: Array<{ kind: string }>
    }
    const messages = written.messages.map((message) => decodeMessage(message))
    const checkpointAt = messages.findIndex((message) => textOf(message).includes("[Context checkpoint"))
    const lastUserAt = messages.map((message) => message.role).lastIndexOf("user")
    expect(checkpointAt).toBeGreaterThanOrEqual(0)
    expect(checkpointAt).toBeLessThan(lastUserAt)
    expect(written.checkpoint.id).toBe(written.report.checkpoint?.id)
    expect(written.entriesToAppend.filter((entry) => entry.kind === "checkpoint")).toHaveLength(1)
    const text = CheckpointValidation.checkpointText(written.checkpoint as never)
    expect(text.length).toBeGreaterThan(0)
  })

  it("the printed checkpoint counts the identifiers it leaves out after the list, not as one more identifier in code", async () => {
    const { report } = await first
    const written = JSON.parse(readFileSync(out, "utf8")) as { checkpoint: Checkpoint.Checkpoint }
    const content = written.checkpoint.content!
    // Six paths no other section quotes, and one the Goal quotes (the renderer does not repeat it).
    const paths = ["src/alpha.ts", "src/beta.ts", "src/gamma.ts", "src/delta.ts", "src/epsilon.ts", "src/zeta.ts"]
    const checkpoint = {
      ...written.checkpoint,
      content: {
        ...content,
        goal: "Fix src/quoted.ts",
        identifiers: { ...content.identifiers, paths: ["src/quoted.ts", ...paths] }
      }
    }
    const line = CompactRender.render(report!, checkpoint, 3)
      .split("\n")
      .find((text) => text.startsWith("- Paths: "))
    // Three shown, the other three counted outside the code spans (the quoted path is not listed, nor counted).
    expect(line).toBe("- Paths: `src/alpha.ts`, `src/beta.ts`, `src/gamma.ts`, … 3 more")
  })

  it("--json prints the report as JSON", async () => {
    const { output, exitCode } = await Compact.run(pi, { json: true, engine: "sliding-window" }, quiet)
    expect(exitCode).toBe(0)
    const report = JSON.parse(output) as Compact.CompactReport
    expect(report.engine).not.toBe("tiered-summary")
    expect(report.checkpoint).toBeNull()
    expect(report.tokens.after.input).toBeLessThanOrEqual(report.policy.inputBudgetTokens)
  })

  it("--summarizer MODEL without an API key fails at once with a clear typed message", async () => {
    const saved = { ...process.env }
    for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AI_GATEWAY_API_KEY", "VERCEL_OIDC_TOKEN"])
      delete process.env[key]
    try {
      const { output, exitCode } = await Compact.run(
        pi,
        { summarizer: "anthropic:claude-haiku-4-5", json: true },
        quiet
      )
      expect(exitCode).toBe(2)
      const error = (JSON.parse(output) as { error: { tag: string; message: string } }).error
      expect(error.tag).toBe("SummarizerFailed")
      expect(error.message).toContain("ANTHROPIC_API_KEY")
    } finally {
      Object.assign(process.env, saved)
    }
  })

  it("a missing file fails with exit code 1, saying it is not found", async () => {
    const { exitCode, output } = await Compact.run(join(dir, "nope.jsonl"), {}, quiet)
    expect(exitCode).toBe(1)
    expect(output).toBe(`context-engine compact: Transcript file ${join(dir, "nope.jsonl")} not found`)
  })

  it("--out without a checkpoint (sliding window) does not claim one was written", async () => {
    const file = join(dir, "window.json")
    const { output, exitCode, report } = await Compact.run(pi, { out: file, engine: "sliding-window" }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.checkpoint).toBeNull()
    expect(JSON.parse(readFileSync(file, "utf8")).checkpoint).toBeNull()
    expect(output).toMatch(
      /Wrote .*window\.json: [\d,]+ messages \(AI SDK ModelMessage\[\]\), no checkpoint \(none was written\),/
    )
    expect(output).not.toContain("the checkpoint,")
    // with a checkpoint the summary names it
    expect((await first).output).toMatch(/Wrote .*compacted\.json: .*, the checkpoint, /)
  })

  it("--format and --strict like inspect: skipped lines are listed, --strict fails on the first, a wrong --format fails", async () => {
    const file = join(dir, "session.log")
    const lines = readFileSync(pi, "utf8").split("\n").slice(0, 6)
    lines.splice(3, 0, '{"type":"message", oops')
    writeFileSync(file, `${lines.join("\n")}\n`)
    const lenient = await Compact.run(file, { engine: "sliding-window" }, quiet)
    expect(lenient.exitCode).toBe(0)
    expect(lenient.report!.import.skipped).toBe(1)
    expect(lenient.report!.import.issues[0]).toMatchObject({ line: 4, action: "skipped" })
    expect(lenient.output).toContain("import: 1 line(s) skipped")
    expect(lenient.output).toMatch(/line 4: skipped: invalid JSON/)
    const strict = await Compact.run(file, { engine: "sliding-window", strict: true }, quiet)
    expect(strict.exitCode).toBe(1)
    expect(strict.output).toMatch(/line 4/)
    const forced = await Compact.run(file, { engine: "sliding-window", format: "pi" }, quiet)
    expect(forced.report!.format).toBe("pi")
    const wrong = await Compact.run(transcript("swe-agent/pydicom__pydicom-1458.traj"), { format: "pi" }, quiet)
    expect(wrong.exitCode).toBe(3)
    expect(wrong.output).toMatch(/does not look like pi: .*auto-detection says it looks like swe-agent/)
    const clean = await first
    expect(clean.report!.import.issues).toEqual([])
    expect(clean.output).not.toContain("import:")
  })

  it("the command line accepts --format and --strict on compact", () => {
    const bin = join(repoRoot, "packages/cli/src/bin.ts")
    const help = spawnSync(process.execPath, [bin, "compact", "--help"], { encoding: "utf8" })
    expect(help.status).toBe(0)
    expect(help.stdout).toMatch(/--format <format>/)
    expect(help.stdout).toMatch(/--strict/)
    const bad = spawnSync(process.execPath, [bin, "compact", pi, "--format", "nope"], { encoding: "utf8" })
    expect(bad.status).not.toBe(0)
    expect(bad.stderr).toMatch(/Allowed choices are auto, pi/)
  })
})

describe("trigger replay on the real pi session (Pi-equivalent policy)", { timeout: 120_000 }, () => {
  it("the usage-anchored trigger first fires in the second segment exactly where pi recorded its compaction", async () => {
    const entries = (await Import.importFilePromise(pi)).transcript.entries
    const policy = {
      ...PolicyRegistry.lookupSync("claude-opus-4-5"),
      contextWindowTokens: 200_000,
      reserveTokens: 16_384,
      keepRecentTokens: 20_000,
      toolLoopReserveTokens: 0,
      safetyMarginTokens: 0
    }
    const compactions = entries.filter((entry) => entry.kind === "checkpoint")
    const second = entries.indexOf(compactions[1]!)
    const first = entries.indexOf(compactions[0]!)
    const engine = TieredSummaryEngine.makeAsync()
    let previousMessageId: string | undefined
    let firedAt: string | undefined
    for (let index = first + 1; index < second && firedAt === undefined; index++) {
      const entry = entries[index]!
      const usage = (entry.meta as { usage?: { input: number; cacheRead: number; cacheWrite: number } } | undefined)
        ?.usage
      if (entry.kind === "message" && entry.message.role === "assistant" && usage && previousMessageId) {
        const input = { entries: entries.slice(0, index + 1), policy }
        await engine.recordOutcome(input, {
          inputTokens: usage.input + usage.cacheRead + usage.cacheWrite,
          lastEntryId: previousMessageId
        })
        if ((await engine.shouldCompact(input)).reasons.includes("threshold")) firedAt = entry.id
      }
      if (entry.kind === "message") previousMessageId = entry.id
    }
    // pi wrote its compaction right after the last assistant message before it
    const piPoint = entries.slice(0, second).findLast((entry) => entry.kind === "message")!.id
    expect(firedAt).toBe(piPoint)
  })
})
