/**
 * `Fit.fitToBudget` (issue #13 req 3: validation and fitting cost independent
 * of how much there is to fit): the checkpoint is rendered a bounded number
 * of times — once to start, once per batch of drops — not once per item, so
 * fitting 400 items costs about as many renderings as fitting 50.
 */
import { Checkpoint, CheckpointRenderer } from "@context-engine/core"
import { describe, expect, it } from "vitest"
import { fitToBudget } from "../../src/checkpoint/Fit.ts"

const GOAL = "Refactor the session module into phases (goal marker)"

const contentOf = (items: number): Checkpoint.CheckpointContent => ({
  ...Checkpoint.emptyContent(),
  goal: GOAL,
  constraints: Array.from({ length: items }, (_, index) => `"never touch generated file ${index}" (e${index})`),
  progress: {
    done: Array.from({ length: items }, (_, index) => `edited \`src/module${index}.ts\` to split phase ${index}`),
    inProgress: [],
    blocked: []
  },
  decisions: Array.from({ length: items }, (_, index) => ({
    decision: `use a record between phase ${index} and ${index + 1}`,
    rationale: "plain data is testable"
  })),
  nextSteps: ["continue with the next phase"],
  criticalContext: Array.from({ length: items }, (_, index) => `the cache of step ${index} is keyed by identity`)
})

/** Fits `items` per list into 300 tokens; returns how many whole renderings were counted. */
const renderings = (items: number): number => {
  let rendered = 0
  const count = (text: string): number => {
    if (text.includes(GOAL)) rendered++
    return Math.ceil(text.length / 4)
  }
  const fitted = fitToBudget(contentOf(items), 300, count)
  // And it fits: the per-item estimate misses headings, the batches of drops correct it.
  expect(Math.ceil(CheckpointRenderer.renderContent(fitted).length / 4)).toBeLessThanOrEqual(300)
  expect(fitted.progress.done.length).toBeGreaterThan(0)
  return rendered
}

describe("fitToBudget", () => {
  it("renders a bounded number of times, whatever the number of items to fit", () => {
    const few = renderings(50)
    const many = renderings(400)
    expect(few).toBeLessThanOrEqual(6)
    expect(many).toBeLessThanOrEqual(few + 2)
  })
})

describe("fitToBudget: the newest Done items before the code vocabulary", () => {
  it("a short budget that cannot hold every code identifier still keeps the five newest Done items", () => {
    const content: Checkpoint.CheckpointContent = {
      ...Checkpoint.emptyContent(),
      goal: GOAL,
      progress: {
        done: Array.from({ length: 10 }, (_, index) => `edited \`src/phase_${index}.ts\` (3 edits)`),
        inProgress: [],
        blocked: []
      },
      nextSteps: ["continue with the next phase"],
      keyIdentifiers: Array.from({ length: 30 }, (_, index) => `sessionPhaseRecordField${index}`)
    }
    const count = (text: string): number => Math.ceil(text.length / 4)
    const fitted = fitToBudget(content, 200, count)
    expect(fitted.keyIdentifiers?.length).toBeLessThan(30)
    expect(fitted.progress.done).toEqual(content.progress.done.slice(5))
  })
})
