/**
 * Shared case C18 (../shared/cases): `/compact <instructions>` go to the
 * summarizer and never become an ask. With a model summarizer through the
 * tiered engine: A — the app passes the handoff instructions; the first reply
 * takes them as the user's task and is refused (its ask is not the user's),
 * the repair retry (told what was wrong) is committed; B — the transcript
 * ends with Claude Code's recorded `/compact` command; C — focus
 * instructions shorten the summary but done work stays done.
 */
import { CheckpointValidation, type Entry, Errors, type Message, RequestShape, Turns } from "@context-engine/core"
import { loadCase } from "@context-engine/core/test-support"
import { Cases } from "@context-engine/core/testing"
import { ExtractiveSummarizer, TieredSummaryEngine } from "@context-engine/engines"
import { describe, expect, it } from "vitest"
import * as LanguageModelSummarizer from "../src/LanguageModelSummarizer.ts"
import { type CaseReply, replyModel, toEntries } from "./support/CaseModel.ts"

interface C18 {
  readonly policy: Cases.CasePolicy
  readonly messages: Array<Message.Message>
  readonly compactInstructions: { readonly handoff: string; readonly focus: string }
  readonly recordedCommand: Array<Message.Message>
  readonly nextUserMessage: Message.Message
  readonly summarizerReplies: { readonly A: Array<CaseReply> }
}

const c18 = loadCase<C18>("C18")
const policy = Cases.policySync(c18.policy, "C18")
const STRIPE_IDS = ["evt_1QxYb2LkdIwHu7ixkq8N3dZa", "evt_1QxYd9LkdIwHu7ixW3mK0pTe"]

const engineWith = (replies: ReadonlyArray<CaseReply>) => {
  const scripted = replyModel(replies)
  const engine = TieredSummaryEngine.makeAsync({
    summarizer: LanguageModelSummarizer.make({ model: scripted.model }),
    fallbackSummarizer: null,
    memory: { extractor: null }
  })
  return { engine, prompts: scripted.prompts }
}

const textOf = (message: Message.Message): string => CheckpointValidation.messageText(message)

/** The checkpoint's task-like sections: where an instruction must never land. */
const taskText = (content: {
  goal: string
  pendingUserAsks: ReadonlyArray<string>
  nextSteps: ReadonlyArray<string>
}) => [content.goal, ...content.pendingUserAsks, ...content.nextSteps].join("\n")

/** Whether `text` carries the instruction: (nearly) all of its words. */
const carries = (text: string, instruction: string) => CheckpointValidation.askOverlap(instruction, text) >= 0.8

describe("C18: /compact instructions go to the summarizer and never become an ask", () => {
  it("C18 A: the reply that takes the instructions as the task is refused; the repair (told why) is committed", async () => {
    const { engine, prompts } = engineWith(c18.summarizerReplies.A)
    const instructions = c18.compactInstructions.handoff
    const entries = toEntries(c18.messages)
    const result = await engine.compact({ entries, policy, manual: true, compactInstructions: instructions })
    expect(prompts).toHaveLength(2)
    for (const prompt of prompts)
      expect(prompt).toContain(`<summarizer-instructions>\n${instructions}\n</summarizer-instructions>`)
    // The first reply failed `asks-from-user`; the retry was told exactly that, naming the foreign ask.
    const refused = result.failures?.find(
      (failure): failure is Errors.ValidationFailed => failure instanceof Errors.ValidationFailed
    )
    expect(refused?.failedChecks).toContain("asks-from-user")
    expect(prompts[1]).toMatch(/- asks-from-user: not asked by the user: Write a detailed handoff/)
    expect(prompts[1]).toContain("remove from pendingUserAsks, the user never asked it")
    const checkpoint = result.checkpoint!
    expect(checkpoint.summarizer.kind).toBe("language-model")
    expect(checkpoint.validation?.ok).toBe(true)
    const content = checkpoint.content!
    expect(carries(taskText(content), instructions)).toBe(false)
    expect(content.goal).not.toMatch(/handoff/i)
    for (const id of STRIPE_IDS) expect(CheckpointValidation.checkpointText(checkpoint)).toContain(id)
    // The request after "ok, continue" holds the instruction neither as a user message nor as an ask.
    const next = toEntries([c18.nextUserMessage], "n", result.entriesToAppend.at(-1)!.id)
    const assembled = await engine.assembleContext({
      entries: [...entries, ...result.entriesToAppend, ...next],
      policy
    })
    const userTexts = assembled.messages.filter((m) => m.role === "user").map(textOf)
    expect(userTexts.some((text) => text.includes(instructions))).toBe(false)
    expect(textOf(assembled.messages.at(-1)!)).toBe("ok, continue")
  })

  it("C18 B: the recorded /compact command and caveat are not the user's ask and not the latest user message", async () => {
    const messages = [...c18.messages, ...c18.recordedCommand]
    const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(textOf(c18.recordedCommand.at(-1)!))![1]!
    expect(args).toBe(c18.compactInstructions.handoff)
    // The latest user message the engine keeps verbatim is the user's last real ask, not the records.
    const latest = Turns.latestUserIndex(messages.map((message) => ({ message })))
    expect(textOf(messages[latest]!)).toMatch(/^Now the webhook retries/)
    expect(CheckpointValidation.latestUserAsk(messages)?.text).toMatch(/^Now the webhook retries/)
    // The offline summary of the session never quotes the command's arguments as an ask, goal or next step.
    const covered = messages.slice(1).map((message, index) => ({ entryId: `m${index + 1}`, message }))
    const offline = ExtractiveSummarizer.summarizeSync({
      covered,
      maxTokens: 2_000,
      countTokens: (t) => Math.ceil(t.length / 4)
    })
    expect(carries(taskText(offline), args)).toBe(false)
    // Through the engine with the model summarizer (the corrected reply): the same holds for the checkpoint.
    const { engine } = engineWith([c18.summarizerReplies.A[1]!])
    const entries: Array<Entry.Entry> = toEntries(messages)
    const result = await engine.compact({ entries, policy, manual: true, compactInstructions: args })
    expect(result.fits).toBe(true)
    if (result.checkpoint) expect(carries(taskText(result.checkpoint.content!), args)).toBe(false)
  })

  it("C18 B (offline): the records stay in the kept tail, never a pending ask, and are marked as executed in the request", async () => {
    const messages = [...c18.messages, ...c18.recordedCommand]
    const args = /<command-args>([\s\S]*?)<\/command-args>/.exec(textOf(c18.recordedCommand.at(-1)!))![1]!
    const engine = TieredSummaryEngine.makeAsync({ memory: { extractor: null } })
    const entries: Array<Entry.Entry> = toEntries(messages)
    const result = await engine.compact({ entries, policy, manual: true, compactInstructions: args })
    const checkpoint = result.checkpoint!
    expect(checkpoint.validation?.ok).toBe(true)
    // The records are kept verbatim after the checkpoint (the kept tail), not covered by it…
    const kept = result.view.items.slice(result.view.items.findIndex((item) => item.source === "checkpoint") + 1)
    expect(kept.some((item) => textOf(item.message).includes("<command-name>/compact</command-name>"))).toBe(true)
    // …and the checkpoint neither asks for them nor quotes their arguments anywhere.
    const content = checkpoint.content!
    expect(content.pendingUserAsks.join("\n")).not.toContain("handoff")
    expect(carries(taskText(content), args)).toBe(false)
    expect(CheckpointValidation.checkpointText(checkpoint)).not.toContain(args)
    // The request assembled with no new user message ends on the records marked as executed, not as a fresh ask.
    const after = [...entries, ...result.entriesToAppend]
    const alone = await engine.assembleContext({ entries: after, policy })
    const last = alone.messages.at(-1)!
    expect(last.role).toBe("user")
    expect(textOf(last).startsWith(RequestShape.EXECUTED_COMMAND_MARK)).toBe(true)
    expect(textOf(alone.messages.at(-2)!).startsWith(RequestShape.EXECUTED_COMMAND_MARK)).toBe(true)
    // With the user's next message the records stay marked, and the request ends on the user's words.
    const next = toEntries([c18.nextUserMessage], "n", after.at(-1)!.id)
    const continued = await engine.assembleContext({ entries: [...after, ...next], policy })
    expect(textOf(continued.messages.at(-1)!)).toBe("ok, continue")
    const records = continued.messages.filter((message) => textOf(message).includes("<command-name>/compact"))
    expect(records.length).toBeGreaterThan(0)
    for (const record of records) expect(textOf(record).startsWith(RequestShape.EXECUTED_COMMAND_MARK)).toBe(true)
    // The transcript itself is unchanged: the mark is only in the request.
    expect(textOf((entries.at(-1) as Entry.MessageEntry).message).startsWith("<command-name>")).toBe(true)
  })

  it("C18 C: focus instructions do not become the goal, and the stripe-node upgrade stays done", async () => {
    // A model that follows the focus: a short line on the upgrade, under done.
    const focused: CaseReply = {
      text: c18.summarizerReplies.A[1]!.text as string
    }
    const { engine, prompts } = engineWith([focused])
    const result = await engine.compact({
      entries: toEntries(c18.messages),
      policy,
      manual: true,
      compactInstructions: c18.compactInstructions.focus
    })
    expect(prompts[0]).toContain(c18.compactInstructions.focus)
    const content = result.checkpoint!.content!
    expect(carries(content.goal, c18.compactInstructions.focus)).toBe(false)
    expect(content.goal).not.toMatch(/focus on/i)
    expect(content.progress.done.some((item) => /stripe-node/.test(item) && /17\.5/.test(item))).toBe(true)
    expect([...content.progress.inProgress, ...content.nextSteps].some((item) => /stripe-node/.test(item))).toBe(false)
    // A later compaction of the compacted session does not bring the instruction back as an ask.
    const entries = [...toEntries(c18.messages), ...result.entriesToAppend]
    const later = ExtractiveSummarizer.summarizeSync({
      previous: result.checkpoint,
      covered: toEntries([c18.nextUserMessage], "n").map((entry) => ({
        entryId: entry.id,
        message: (entry as Entry.MessageEntry).message
      })),
      maxTokens: 2_000,
      countTokens: (t) => Math.ceil(t.length / 4)
    })
    expect(entries.length).toBeGreaterThan(c18.messages.length)
    expect(carries(taskText(later), c18.compactInstructions.focus)).toBe(false)
  })
})
