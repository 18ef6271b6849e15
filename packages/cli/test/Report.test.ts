import { existsSync, mkdirSync, mkdtempSync, statSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { chromium } from "playwright-core"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import * as ReplayCommand from "../src/commands/replay.ts"
import * as Progress from "../src/Progress.ts"
import * as ReportHtml from "../src/ReportHtml.ts"

/**
 * The report page in real headless Chromium (Debian's `chromium`, installed
 * by `.ci/run` when absent; `CHROMIUM_PATH` overrides the path).
 */
const CHROMIUM = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium"
const quiet = Progress.make({ enabled: false })
const swe = transcript("swe-agent/pydicom__pydicom-1458.traj")
const artifacts = join(repoRoot, "test-artifacts")
const fmt = (value: number) => Math.round(value).toLocaleString("en-US")

const write = async (mode: "active" | "shadow") => {
  const { report, largest } = await ReplayCommand.buildWithLargest(swe, { contextWindow: 16_000, mode }, quiet)
  const path = join(mkdtempSync(join(tmpdir(), "report-")), `report-${mode}.html`)
  writeFileSync(path, ReportHtml.render(report, largest))
  return { report, largest, path }
}

describe("context-engine report in headless Chromium", { timeout: 180_000 }, () => {
  let browser: Awaited<ReturnType<typeof chromium.launch>>
  beforeAll(async () => {
    if (!existsSync(CHROMIUM))
      throw new Error(`Chromium not found at ${CHROMIUM}: apt-get install chromium (CI's .ci/run does this)`)
    browser = await chromium.launch({ executablePath: CHROMIUM, args: ["--no-sandbox", "--disable-gpu"] })
  })
  afterAll(async () => browser?.close())

  const open = async (path: string) => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 1400 } })
    const errors: Array<string> = []
    page.on("console", (message) => {
      if (message.type() === "error") errors.push(message.text())
    })
    page.on("pageerror", (error) => errors.push(error.message))
    page.on("request", (request) => {
      if (!request.url().startsWith("file:")) errors.push(`network request: ${request.url()}`)
    })
    await page.goto(`file://${path}`)
    await page.waitForSelector("body[data-ready='true']", { timeout: 30_000 })
    const text = async (id: string) => (await page.textContent(`[data-testid="${id}"]`))?.trim()
    return { page, errors, text }
  }

  it("renders offline with no console errors; its numbers equal the JSON report; writes a screenshot", async () => {
    const { report, largest, path } = await write("active")
    expect(report.compactions.length).toBeGreaterThan(0)
    const { page, errors, text } = await open(path)
    expect(errors).toEqual([])
    expect(await text("steps")).toBe(fmt(report.steps.length))
    expect(await text("compactions")).toBe(fmt(report.compactions.length))
    expect(await text("peak")).toBe(fmt(report.peak.inputTokens))
    expect(await text("cache-rewrites")).toBe(fmt(report.cacheRewrites))
    expect(await text("rereads")).toBe(fmt(report.damage.rereads.length))
    expect(await page.locator('[data-testid="compaction-rows"] tr[data-step]').count()).toBe(report.compactions.length)
    expect(await page.locator('[data-testid="largest-rows"] tr').count()).toBe(largest.length)
    // The damage table names its rows or says "none" (QA s5 item 8: an empty table with no word).
    const damage = report.damage.rereads.length + report.damage.repeatedSideEffects.length
    expect(await page.locator('[data-testid="damage-rows"] tr').count()).toBe(Math.max(1, damage))
    if (damage === 0)
      expect(await text("damage-rows")).toBe(
        `none: no re-read or repeated side effect within ${report.damage.windowSteps} steps of a compaction`
      )
    // The checkpoint column shows the checkpoint's own tokens, not the request size after compaction.
    expect(await page.locator('[data-testid="checkpoint-tokens"]').allTextContents()).toEqual(
      report.compactions.map((compaction) => (compaction.checkpoint ? fmt(compaction.checkpoint.tokens) : "–"))
    )
    // Evaluated in the page (a string: the test's TypeScript has no DOM types).
    const chart = (await page.evaluate(`(() => {
      const canvas = document.getElementById("chart")
      const instance = window.Chart.getChart(canvas)
      return {
        width: canvas.width,
        labels: instance.data.labels.length,
        datasets: instance.data.datasets.map((set) => ({ label: set.label, data: set.data }))
      }
    })()`)) as { width: number; labels: number; datasets: Array<{ label: string; data: Array<number> }> }
    expect(chart.width).toBeGreaterThan(0)
    expect(chart.labels).toBe(report.steps.length)
    // Framing is its own series in the chart, named in words.
    expect(chart.datasets.map((set) => set.label)).toContain("message framing")
    const sums = report.steps.map((_, index) =>
      chart.datasets.filter((set) => set.label !== "budget").reduce((sum, set) => sum + (set.data[index] ?? 0), 0)
    )
    // the stacked categories add up to each step's input tokens; the budget line is the policy's input budget
    expect(sums).toEqual(report.steps.map((step) => step.inputTokens))
    const budget = chart.datasets.find((set) => set.label === "budget")
    expect(budget?.data).toEqual(report.steps.map((step) => step.budgetTokens))
    expect(report.steps.every((step) => Number.isFinite(step.budgetTokens) && step.budgetTokens > 0)).toBe(true)
    mkdirSync(artifacts, { recursive: true })
    const screenshot = join(artifacts, "report.png")
    await page.screenshot({ path: screenshot, fullPage: true })
    expect(statSync(screenshot).size).toBeGreaterThan(10_000)
    await page.close()
  })

  it("names the catalog entry a model id resolved to, as the CLI header does", async () => {
    // The page said 'gpt-4o-2024-08-06 · window …' where replay's header said '(flag, catalog entry gpt-4o)'.
    const { report, largest } = await ReplayCommand.buildWithLargest(
      swe,
      { model: "gpt-4o-2024-08-06", contextWindow: 16_000 },
      quiet
    )
    const path = join(mkdtempSync(join(tmpdir(), "report-")), "report-model.html")
    writeFileSync(path, ReportHtml.render(report, largest))
    const { page, errors, text } = await open(path)
    expect(errors).toEqual([])
    expect(await text("model")).toBe(
      "gpt-4o-2024-08-06 (flag, catalog entry gpt-4o) · window 16,000 · engine tiered-summary · mode active"
    )
    expect(ReplayCommand.render(report)).toContain(
      "model gpt-4o-2024-08-06 (flag, catalog entry gpt-4o) · window 16,000"
    )
    await page.close()
  })

  it("shows shadow checkpoints beside what was sent", async () => {
    const { report, path } = await write("shadow")
    expect(report.compactions.every((compaction) => compaction.shadow)).toBe(true)
    const { page, errors } = await open(path)
    expect(errors).toEqual([])
    expect(await page.locator('[data-testid="compaction-rows"] tr.shadow[data-step]').count()).toBe(
      report.compactions.length
    )
    await page.screenshot({ path: join(artifacts, "report-shadow.png"), fullPage: true })
    await page.close()
  })
})
