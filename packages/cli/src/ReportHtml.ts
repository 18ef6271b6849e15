/**
 * The `report` page: one self-contained HTML file (no network) with the
 * replay's numbers, token composition per step as a stacked area chart by
 * category with the budget line, each compaction (what it covered, dropped
 * and kept, the checkpoint text, validation; shadow checkpoints marked), the
 * largest entries and the damage measures.
 *
 * The chart is drawn by Chart.js (chartjs.org, MIT), whose UMD build is read
 * from the installed `chart.js` package and inlined, so the file opens
 * offline. The report's JSON is embedded in a `<script type="application/json">`
 * and every number on the page is rendered from it, so the page and
 * `replay --json` cannot disagree (the model line is `PolicyOptions.modelLabel`,
 * as the CLI headers print it). When the page has rendered it sets
 * `document.body.dataset.ready = "true"`.
 *
 * @since 0.2.0
 */
import { readFileSync } from "node:fs"
import { createRequire } from "node:module"
import { dirname, join } from "node:path"
import { Measurement } from "@context-engine/core"
import * as PolicyOptions from "./PolicyOptions.ts"

/** A largest entry, as `inspect` lists them. @category models */
export interface LargestEntry {
  readonly entryId: string
  readonly role: string
  readonly tokens: number
  readonly category: string
  readonly preview: string
}

/** Colours per category (Chart.js default palette order, then greys). */
const COLOURS: Readonly<Record<Measurement.Category, string>> = {
  system: "#4e79a7",
  toolSchemas: "#a0cbe8",
  memory: "#b07aa1",
  checkpoint: "#f28e2b",
  userText: "#59a14f",
  assistantText: "#8cd17d",
  reasoning: "#b6992d",
  toolCalls: "#e15759",
  toolResults: "#ff9d9a",
  media: "#79706e",
  framing: "#d4a6c8",
  reservedOutput: "#bab0ac"
}

const chartJs = (): string => {
  const require = createRequire(import.meta.url)
  // The package's exports hide dist/chart.umd.min.js; it sits beside the CommonJS entry.
  return readFileSync(join(dirname(require.resolve("chart.js")), "chart.umd.min.js"), "utf8")
}

/** JSON safe inside a `<script>` element. */
const embed = (value: unknown): string =>
  JSON.stringify(value).replaceAll("<", "\\u003c").replaceAll("\u2028", "\\u2028").replaceAll("\u2029", "\\u2029")

const STYLE = `
body{font:14px/1.45 system-ui,sans-serif;margin:24px;color:#222;max-width:1200px}
h1{font-size:20px;margin:0 0 4px}h2{font-size:16px;margin:28px 0 8px}
.meta{color:#555}.cards{display:flex;gap:12px;flex-wrap:wrap;margin:16px 0}
.card{border:1px solid #ddd;border-radius:6px;padding:8px 12px;min-width:140px}
.card b{display:block;font-size:20px}table{border-collapse:collapse;width:100%}
td,th{border-bottom:1px solid #eee;padding:4px 6px;text-align:left;vertical-align:top}
td.n,th.n{text-align:right;font-variant-numeric:tabular-nums}
.shadow{background:#fff6e5}.badge{font-size:11px;border-radius:3px;padding:1px 4px;background:#f28e2b;color:#fff}
.fail{color:#c00}pre{white-space:pre-wrap;max-height:320px;overflow:auto;background:#f7f7f7;padding:8px}
#chart-box{position:relative;height:360px}`

/** The page script: renders everything from the embedded JSON. */
const APP = `
const data = JSON.parse(document.getElementById("report-data").textContent);
const report = data.report;
const fmt = (v) => Math.round(v).toLocaleString("en-US");
const el = (tag, attrs, ...children) => {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
  for (const child of children) node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  return node;
};
const set = (id, value) => { document.querySelector('[data-testid="' + id + '"]').textContent = value; };
set("file", report.file);
set("model", data.modelLabel + " · window " + fmt(report.policy.contextWindowTokens) + " · engine " + report.engine + " · mode " + report.mode);
set("steps", fmt(report.steps.length));
set("compactions", fmt(report.compactions.length));
set("peak", fmt(report.peak.inputTokens));
set("failures", fmt(report.failures.filter((f) => f.kind === "failed").length) + " / " + fmt(report.failures.filter((f) => f.kind === "skipped").length));
set("over-budget", fmt(report.overBudgetSteps));
set("cache-rewrites", fmt(report.cacheRewrites));
set("rereads", fmt(report.damage.rereads.length));
set("repeats", fmt(report.damage.repeatedSideEffects.length));
const categories = data.categories.filter((c) => c !== "reservedOutput" && report.steps.some((s) => s.byCategory[c] > 0));
new Chart(document.getElementById("chart"), {
  type: "line",
  data: {
    labels: report.steps.map((s) => s.step),
    datasets: [
      ...categories.map((c) => ({ label: data.labels[c], data: report.steps.map((s) => s.byCategory[c]), fill: true,
        backgroundColor: data.colours[c], borderColor: data.colours[c], pointRadius: 0, borderWidth: 1, stack: "tokens" })),
      { label: "budget", data: report.steps.map((s) => s.budgetTokens), fill: false, borderColor: "#000",
        borderDash: [6, 4], pointRadius: 0, borderWidth: 2, stack: "budget", order: -1 }
    ]
  },
  options: { animation: false, responsive: true, maintainAspectRatio: false, interaction: { mode: "index", intersect: false },
    scales: { x: { title: { display: true, text: "step (request)" } }, y: { stacked: true, beginAtZero: true, title: { display: true, text: "input tokens" } } } }
});
const rows = document.querySelector('[data-testid="compaction-rows"]');
for (const c of report.compactions) {
  const cp = c.checkpoint;
  const row = el("tr", { class: c.shadow ? "shadow" : "", "data-step": c.step },
    el("td", { class: "n" }, c.step),
    el("td", {}, c.shadow ? el("span", { class: "badge" }, "shadow") : "applied"),
    el("td", {}, c.reasons.join(", ")),
    el("td", { class: "n" }, fmt(c.tokensBefore)), el("td", { class: "n" }, fmt(c.tokensAfter)),
    el("td", {}, c.tier),
    el("td", { class: "n", "data-testid": "checkpoint-tokens" }, cp ? fmt(cp.tokens) : "–"),
    el("td", { class: "n" }, cp ? fmt(cp.coveredEntries) : "–"),
    el("td", {}, cp ? (cp.validation && !cp.validation.ok ? el("span", { class: "fail" }, "failed: " + cp.validation.failedChecks.join(", ")) : "passed") : c.checkpointSkipped ? "no checkpoint: " + c.checkpointSkipped : "–"));
  rows.append(row);
  if (cp) {
    const details = el("details", {}, el("summary", {}, "checkpoint gen " + cp.generation + " · " + fmt(cp.tokens) + " tokens (of a " + fmt(c.tokensAfter) + "-token request) · first kept " + (cp.firstKeptEntryId || "none")), el("pre", {}, cp.text));
    rows.append(el("tr", { class: c.shadow ? "shadow" : "" }, el("td", {}), el("td", { colspan: "8" }, details)));
  }
}
for (const f of report.failures.filter((f) => f.kind === "failed"))
  rows.append(el("tr", { class: "fail", "data-step": f.step }, el("td", { class: "n" }, f.step), el("td", {}, "failed"), el("td", { colspan: "7" }, f.reason)));
const largest = document.querySelector('[data-testid="largest-rows"]');
for (const e of data.largest) largest.append(el("tr", {}, el("td", {}, e.entryId), el("td", {}, e.role), el("td", {}, data.labels[e.category] || e.category), el("td", { class: "n" }, fmt(e.tokens)), el("td", {}, e.preview)));
const damage = document.querySelector('[data-testid="damage-rows"]');
for (const d of report.damage.rereads) damage.append(el("tr", {}, el("td", {}, "re-read"), el("td", { class: "n" }, d.step), el("td", { class: "n" }, d.compactionStep), el("td", {}, d.toolName + " " + d.target)));
for (const d of report.damage.repeatedSideEffects) damage.append(el("tr", {}, el("td", {}, "repeated side effect"), el("td", { class: "n" }, d.step), el("td", { class: "n" }, d.compactionStep), el("td", {}, d.target)));
if (report.damage.rereads.length + report.damage.repeatedSideEffects.length === 0) damage.append(el("tr", { "data-empty": "" }, el("td", { colspan: "4" }, "none: no re-read or repeated side effect within " + report.damage.windowSteps + " steps of a compaction")));
document.body.dataset.ready = "true";
`

/**
 * The HTML page for a replay report and the transcript's largest entries.
 *
 * @category rendering
 */
export const render = (
  report: { readonly file: string; readonly model: Parameters<typeof PolicyOptions.modelLabel>[0] },
  largest: ReadonlyArray<LargestEntry>
): string => `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width,initial-scale=1">
<title>context-engine report · ${report.file.replaceAll("<", "&lt;")}</title><style>${STYLE}</style></head>
<body>
<h1>context-engine report</h1>
<div class="meta"><span data-testid="file"></span><br><span data-testid="model"></span></div>
<div class="cards">
<div class="card">steps<b data-testid="steps"></b></div>
<div class="card">compactions<b data-testid="compactions"></b></div>
<div class="card">peak request (tokens)<b data-testid="peak"></b></div>
<div class="card">compactions failed / skipped<b data-testid="failures"></b></div>
<div class="card">requests over budget<b data-testid="over-budget"></b></div>
<div class="card">prompt-cache rewrites<b data-testid="cache-rewrites"></b></div>
<div class="card">re-reads after compaction<b data-testid="rereads"></b></div>
<div class="card">repeated side effects<b data-testid="repeats"></b></div>
</div>
<h2>Tokens per request, by category (dashed: input budget)</h2>
<div id="chart-box"><canvas id="chart"></canvas></div>
<h2>Compactions (shadow rows: computed, not applied; red rows: failed, the request went out uncompacted)</h2>
<table><thead><tr><th class="n">step</th><th>applied</th><th>reasons</th><th class="n">request before</th><th class="n">request after</th><th>resolved by</th><th class="n">checkpoint tokens</th><th class="n">messages covered</th><th>validation</th></tr></thead>
<tbody data-testid="compaction-rows"></tbody></table>
<h2>Largest entries</h2>
<table><thead><tr><th>entry</th><th>role</th><th>category</th><th class="n">tokens</th><th>preview</th></tr></thead><tbody data-testid="largest-rows"></tbody></table>
<h2>Damage after compaction</h2>
<table><thead><tr><th>kind</th><th class="n">step</th><th class="n">compaction step</th><th>call</th></tr></thead><tbody data-testid="damage-rows"></tbody></table>
<script type="application/json" id="report-data">${embed({ report, largest, modelLabel: PolicyOptions.modelLabel(report.model), categories: Measurement.categories, labels: Measurement.categoryLabels, colours: COLOURS })}</script>
<script>${chartJs()}</script>
<script>${APP}</script>
</body></html>
`
