/**
 * Fills a checkpoint budget by priority (issue #11 requirement 3): what the
 * next model needs first — the current goal, the pending ask, the next
 * steps, the user's constraints and corrections (the most binding first), failed approaches and
 * unknown outcomes, work in progress, the newest decisions, the newest Done items, the code identifiers,
 * the rest of Done, older decisions, earlier requests — each list newest first, until the rendered checkpoint reaches
 * `maxTokens`. The artifact ledger is kept whole (the renderer shows its
 * newest items per group and counts the rest), so it stays cumulative.
 * Whatever did not fit is counted in `dropped`, so the handoff says what it
 * left out.
 *
 * @since 0.2.0
 */
import type { Checkpoint } from "@context-engine/core"
import { CheckpointRenderer, ShellCommand } from "@context-engine/core"
import * as CommandText from "./CommandText.ts"
import * as Constraints from "./Constraints.ts"
import { LATEST_ANSWERED, SESSION_START } from "./Extract.ts"
import * as Ledger from "./Ledger.ts"
import { shortDone, withoutChange } from "./Progress.ts"
import { REPORTED } from "./Reports.ts"

type Content = Checkpoint.CheckpointContent

/**
 * The default checkpoint budget in tokens (issue #11: pi's two real
 * Opus-written summaries are ~1.0–1.2K tokens; 2,000 leaves room for a
 * longer session while staying a handoff, not an index). The engine lowers it
 * further when the request has less room.
 *
 * @category constants
 */
export const DEFAULT_CHECKPOINT_TOKENS = 2_000

/**
 * Per-section caps (items), newest kept; `keyIdentifiers` keeps the best
 * ranked (`KeyIdentifiers.rank`).
 */
const CAP = {
  constraints: 14,
  failed: 6,
  done: 24,
  doneFirst: 5,
  decisions: 6,
  decisionsFirst: 3,
  context: 12,
  keyIdentifiers: 30
} as const

interface Slot {
  readonly section: string
  readonly index: number
  readonly text: string
}

const newestFirst = (section: string, items: ReadonlyArray<string>, cap = Number.POSITIVE_INFINITY): Array<Slot> =>
  items
    .map((text, index) => ({ section, index, text }))
    .reverse()
    .slice(0, cap)

/**
 * Constraints: of the newest twice the cap (older rules are more likely superseded), the most binding
 * (`Constraints.strength`) first, newest first among equals.
 */
const bindingFirst = (items: ReadonlyArray<string>): Array<Slot> =>
  items
    .map((text, index) => ({ section: "constraints", index, text, strength: Constraints.strength(text) }))
    .slice(-2 * CAP.constraints)
    .sort((a, b) => b.strength - a.strength || b.index - a.index)
    .slice(0, CAP.constraints)
    .map(({ section, index, text }) => ({ section, index, text }))

/**
 * A Done run's command without its output filters (`ShellCommand.withoutOutputFilters`: `npm run check 2>&1 |
 * tail -5` → `npm run check`): the key of a command the agent ran again. A command clipped before its end has a key
 * only when a filter began before the clip (two clipped commands with one prefix may differ after it); one shown
 * in pieces (`CommandText.ofItem`: long paths by their tails) is keyed by its pieces.
 */
const runKey = (text: string): string | undefined => {
  const run = CommandText.ofItem(text)
  if (run === undefined) return undefined
  const last = run.pieces.at(-1)!
  const key = ShellCommand.withoutOutputFilters(last)
  const filtered = ShellCommand.steps(key).length < ShellCommand.steps(last).length
  return !run.cut || filtered ? [...run.pieces.slice(0, -1), key].join(" … ") : undefined
}

/**
 * Done items the tools evidence (edits, commands, results) before the
 * agent's own completion reports, which mostly restate them; newest first
 * within each. A command run again later (the same command, any output
 * filter: the agent's repeated `npm run check`, `npm run build`) comes after
 * the reports: its newest run shows the state it checks, the older runs
 * only repeat that check, while a report names work no tool result names
 * (what the edits were for). Then at most `cap` of them.
 */
const evidencedFirst = (slots: ReadonlyArray<Slot>, cap: number): Array<Slot> => {
  const seen = new Set<string>()
  const repeated = new Set<Slot>()
  for (const slot of slots) {
    const key = runKey(slot.text)
    if (key === undefined) continue
    if (seen.has(key)) repeated.add(slot)
    seen.add(key)
  }
  return [
    ...slots.filter((slot) => !slot.text.startsWith(REPORTED) && !repeated.has(slot)),
    ...slots.filter((slot) => slot.text.startsWith(REPORTED)),
    ...slots.filter((slot) => repeated.has(slot))
  ].slice(0, cap)
}

const slotsOf = (content: Content): Array<Slot> => {
  const decisions = newestFirst(
    "decisions",
    content.decisions.map((d) => `${d.decision} ${d.rationale}`),
    CAP.decisions
  )
  const done = evidencedFirst(newestFirst("done", content.progress.done), CAP.done)
  return [
    ...newestFirst("pendingUserAsks", content.pendingUserAsks, 2),
    ...content.nextSteps.slice(0, 8).map((text, index) => ({ section: "nextSteps", index, text })),
    ...content.criticalContext.flatMap((text, index) =>
      text.startsWith(SESSION_START) || text.startsWith(LATEST_ANSWERED)
        ? [{ section: "criticalContext", index, text }]
        : []
    ),
    ...bindingFirst(content.constraints),
    ...newestFirst("blocked", content.progress.blocked),
    ...newestFirst("failedApproaches", content.failedApproaches ?? [], CAP.failed),
    ...newestFirst("inProgress", content.progress.inProgress),
    // The newest decisions with their reasons before a long Done list: they are what keeps the next model
    // from undoing the work; the rest of them after it.
    ...decisions.slice(0, CAP.decisionsFirst),
    // The newest Done items: what was being worked on just before the cut (Claude Code's summary has a
    // "Current Work" section, written from the most recent messages) — without them a long code vocabulary or
    // a long rule list leaves Done at the one item the fill requires.
    ...done.slice(0, CAP.doneFirst),
    // The code identifiers the work kept using (Claude Code's summary lists the key technical concepts and
    // code sections second, after the request): a word each, before the rest of the long Done list.
    ...(content.keyIdentifiers ?? [])
      .slice(0, CAP.keyIdentifiers)
      .map((text, index) => ({ section: "keyIdentifiers", index, text })),
    ...done.slice(CAP.doneFirst),
    ...decisions.slice(CAP.decisionsFirst),
    ...newestFirst("criticalContext", content.criticalContext, CAP.context)
  ]
}

const pick = <A>(items: ReadonlyArray<A>, kept: ReadonlySet<string>, section: string): Array<A> =>
  items.filter((_, index) => kept.has(`${section}:${index}`))

const build = (content: Content, kept: ReadonlySet<string>, dropped: ReadonlyArray<string>): Content => ({
  ...content,
  constraints: pick(content.constraints, kept, "constraints"),
  progress: {
    done: pick(content.progress.done, kept, "done"),
    inProgress: pick(content.progress.inProgress, kept, "inProgress"),
    blocked: pick(content.progress.blocked, kept, "blocked")
  },
  decisions: pick(content.decisions, kept, "decisions"),
  nextSteps: pick(content.nextSteps, kept, "nextSteps"),
  criticalContext: pick(content.criticalContext, kept, "criticalContext"),
  pendingUserAsks: pick(content.pendingUserAsks, kept, "pendingUserAsks"),
  failedApproaches: pick(content.failedApproaches ?? [], kept, "failedApproaches"),
  ...(content.keyIdentifiers ? { keyIdentifiers: pick(content.keyIdentifiers, kept, "keyIdentifiers") } : {}),
  dropped: [...(content.dropped ?? []), ...dropped]
})

const sizes = (content: Content): Record<string, number> => ({
  pendingUserAsks: content.pendingUserAsks.length,
  nextSteps: content.nextSteps.length,
  constraints: content.constraints.length,
  blocked: content.progress.blocked.length,
  failedApproaches: content.failedApproaches?.length ?? 0,
  inProgress: content.progress.inProgress.length,
  done: content.progress.done.length,
  decisions: content.decisions.length,
  criticalContext: content.criticalContext.length,
  keyIdentifiers: content.keyIdentifiers?.length ?? 0
})

const droppedNote = (content: Content, kept: ReadonlySet<string>, maxTokens: number): Array<string> => {
  const counts = new Map<string, number>()
  for (const [section, size] of Object.entries(sizes(content))) {
    const left = size - [...kept].filter((key) => key.startsWith(`${section}:`)).length
    if (left > 0) counts.set(section, left)
  }
  if (counts.size === 0) return []
  const parts = [...counts].map(([section, count]) => `${count} ${section}`)
  return [`older items left out to fit ${maxTokens} tokens: ${parts.join(", ")}`]
}

/** Items of every section, to compare how much two fills keep. */
const itemCount = (content: Content): number => Object.values(sizes(content)).reduce((sum, size) => sum + size, 0)

/**
 * Keeps the content's items by priority until its rendering fits
 * `maxTokens` (in tokens of `countTokens`). When items would be left out,
 * the lines file edits quote (`Progress.withoutChange`) go first: the fill
 * without them is kept when it keeps more items. When Done items would
 * still be left out, it tries their short form (`Progress.shortDone`) and
 * keeps whichever fill lists more finished work. The goal is always kept
 * (clipped by the extractor); when even the goal and the first next step do
 * not fit, the result is that minimum (validation then decides).
 *
 * @category combinators
 */
export const fitToBudget = (content: Content, maxTokens: number, countTokens: (text: string) => number): Content => {
  const full = fitOnce(content, maxTokens, countTokens)
  if (itemCount(full) === itemCount(content)) return full
  const plainDone = content.progress.done.map(withoutChange)
  const plain = plainDone.some((item, index) => item !== content.progress.done[index])
    ? fitOnce({ ...content, progress: { ...content.progress, done: plainDone } }, maxTokens, countTokens)
    : full
  const fitted = itemCount(plain) > itemCount(full) ? plain : full
  if (fitted.progress.done.length === content.progress.done.length) return fitted
  // Done items were left out: in their short form (the action and its outcome's ids), without the file
  // edits the artifact ledger already lists, more of them may stay.
  const inLedger = new Set(
    (content.artifacts ?? []).flatMap((artifact) =>
      artifact.kind === "file" && artifact.status !== "read" ? [artifact.value] : []
    )
  )
  // A Done edit names its file as the tool line showed it; the ledger lists an elided one by its full path.
  const listed = (path: string) => inLedger.has(path) || Ledger.resolvedElision(path, [...inLedger]) !== undefined
  const done = once(content.progress.done.filter((item) => !listed(FILE_EDIT_RE.exec(item)?.[1] ?? "")))
  const short = fitOnce({ ...content, progress: { ...content.progress, done } }, maxTokens, countTokens)
  // Edits the ledger lists and short items said once with their count are still listed.
  const listedInLedger = content.progress.done.length - done.length
  return short.progress.done.length + listedInLedger > fitted.progress.done.length ? short : fitted
}

/**
 * Short Done items said once, at the newest, with the count of the different items each stands for when more than
 * one (`ran \`sqlite3\` …\`/data/BK…\` (4 times)`): the short form drops what told them apart (their outcomes,
 * the paths' heads), and a line repeated says nothing more.
 */
const once = (items: ReadonlyArray<string>): Array<string> => {
  const shorts = items.map(shortDone)
  const sources = new Map<string, Set<string>>()
  shorts.forEach((short, index) => {
    sources.set(short, (sources.get(short) ?? new Set()).add(items[index]!))
  })
  return shorts.flatMap((short, index) => {
    if (shorts.indexOf(short, index + 1) >= 0) return []
    const count = sources.get(short)!.size
    return [count > 1 ? `${short} (${count} times)` : short]
  })
}

/** A Done item for a command run (`ran \`…\` → …`, `the user ran \`…\``: `Progress.doneOf`, `userCommandsOf`). */
const RUN_RE = /^(?:ran|the user ran) …?[`"]/

/** A Done item for a file edit (`created \`path\``, `edited \`path\` (3 edits)`), its path captured. */
const FILE_EDIT_RE = /^(?:created|edited) `([^`]+)`/

const fitOnce = (content: Content, maxTokens: number, countTokens: (text: string) => number): Content => {
  const slots = slotsOf(content)
  const kept = new Set<string>()
  // Kept whatever the budget: the latest ask (pending or answered), the newest unknown outcome or work in
  // progress, the newest Done item (else a Done list left out whole reads "(none)" beside work that was done),
  // the first next step.
  const required = [
    slots.find((slot) => slot.section === "pendingUserAsks"),
    slots.find((slot) => slot.section === "criticalContext" && slot.text.startsWith(LATEST_ANSWERED)),
    slots.find((slot) => slot.section === "inProgress" || slot.section === "blocked"),
    slots.find((slot) => slot.section === "done"),
    slots.find((slot) => slot.section === "nextSteps")
  ]
  // Then, when it fits, the newest run among the Done items: the newest item says what changed last, the run
  // the check that last showed the state — without it the next model cannot tell whether that change was run.
  const run = slots.find((slot) => slot.section === "done" && RUN_RE.test(slot.text))
  const order = run === undefined ? slots : [run, ...slots.filter((slot) => slot !== run)]
  for (const slot of required) if (slot) kept.add(`${slot.section}:${slot.index}`)
  const requiredKeys = new Set(kept)
  const render = (dropped: ReadonlyArray<string>) => build(content, kept, dropped)
  let tokens = countTokens(CheckpointRenderer.renderContent(render([])))
  for (const slot of order) {
    if (kept.has(`${slot.section}:${slot.index}`)) continue
    const cost = countTokens(slot.text) + (slot.section === "keyIdentifiers" ? 3 : 6)
    if (tokens + cost > maxTokens && kept.size > 0) continue
    kept.add(`${slot.section}:${slot.index}`)
    tokens += cost
  }
  let result = render(droppedNote(content, kept, maxTokens))
  // The per-item estimate misses section headings: drop the lowest-priority items until it fits, a batch
  // worth the excess at a time (one rendering per batch, not per item).
  let index = slots.length - 1
  for (let excess = countTokens(CheckpointRenderer.renderContent(result)) - maxTokens; excess > 0 && index >= 0; ) {
    let freed = 0
    for (; index >= 0 && freed < excess; index--) {
      const slot = slots[index]!
      const key = `${slot.section}:${slot.index}`
      if (!requiredKeys.has(key) && kept.delete(key)) freed += countTokens(slot.text) + 2
    }
    result = render(droppedNote(content, kept, maxTokens))
    excess = countTokens(CheckpointRenderer.renderContent(result)) - maxTokens
  }
  return result
}
