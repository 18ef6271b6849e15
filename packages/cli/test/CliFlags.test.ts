import { spawnSync } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { PolicyRegistry } from "@context-engine/core"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Inspect from "../src/commands/inspect.ts"
import * as Replay from "../src/commands/replay.ts"
import * as ExitCodes from "../src/ExitCodes.ts"
import * as Progress from "../src/Progress.ts"

const quiet = Progress.make({ enabled: false })
const swe = transcript("swe-agent/pydicom__pydicom-1458.traj")
const pi = transcript("pi/before-compaction.jsonl")
const bin = join(repoRoot, "packages/cli/src/bin.ts")

describe("CLI policy flags and exit codes", { timeout: 180_000 }, () => {
  it("an unknown --model is a usage error naming the closest ids", async () => {
    const { output, exitCode } = await Compact.run(swe, { model: "claude-sonet-4-5" }, quiet)
    expect(exitCode).toBe(ExitCodes.USAGE)
    expect(output).toContain('Unknown model "claude-sonet-4-5"')
    expect(output).toContain("claude-sonnet-4-5")
    expect(output).toContain("--allow-unknown-model")
    // command-line advice, not the library's
    expect(output).not.toContain("PolicyRegistry")
  })

  it("warns when a --model extends a catalog id with anything but a snapshot date or version", async () => {
    // QA sessions 5 and 6: --model gpt-5-nonexistent ran with gpt-5's 400,000-token window and no warning.
    const typo = await Compact.run(swe, { model: "gpt-5-nonexistent" }, quiet)
    expect(typo.exitCode).toBe(0)
    expect(typo.output).toContain(
      'warning: model "gpt-5-nonexistent" is not in the catalog; it extends the id of catalog entry gpt-5, whose 400,000-token window is used'
    )
    const warned = (output: string) => output.includes("is not in the catalog")
    for (const snapshot of ["gpt-4o-2024-08-06", "claude-sonnet-4-5-20250929", "claude-sonnet-4-5@20250929", "gpt-4o"])
      expect({ snapshot, warned: warned((await Compact.run(swe, { model: snapshot }, quiet)).output) }).toEqual({
        snapshot,
        warned: false
      })
    // a window from the command line is not the entry's: nothing to warn about
    expect(warned((await Compact.run(swe, { model: "gpt-5-nonexistent", contextWindow: 32_000 }, quiet)).output)).toBe(
      false
    )
  })

  it("the header names the catalog entry a --model resolved to when it is not that entry's id", async () => {
    // Session 4: 'model gpt-4o-2024-08-06 (flag)' — which entry's window and tokenizer? A typo past a boundary
    // (gpt-4o-typo) resolves silently the same way.
    const header = (output: string) => output.split("\n").find((line) => line.includes(" model ")) ?? ""
    for (const [model, entry] of [
      ["gpt-4o-2024-08-06", "gpt-4o"],
      ["gpt-4o-typo", "gpt-4o"],
      ["anthropic/claude-sonnet-4.5", "claude-sonnet-4-5"]
    ] as const) {
      const compacted = await Compact.run(swe, { model }, quiet)
      expect(header(compacted.output)).toContain(`model ${model} (flag, catalog entry ${entry}) · window`)
      const inspected = await Inspect.run(swe, { model }, quiet)
      expect(header(inspected.output)).toContain(`model ${model} (flag, catalog entry ${entry}) · window`)
      expect(JSON.parse((await Inspect.run(swe, { model, json: true }, quiet)).output).model.catalogId).toBe(entry)
    }
    const replayed = await Replay.run(swe, { model: "gpt-4o-2024-08-06", contextWindow: 32_000 })
    expect(header(replayed.output)).toContain("model gpt-4o-2024-08-06 (flag, catalog entry gpt-4o) · window")
    // The entry's own id, or a recorded id the catalog lists, needs no note.
    expect(header((await Compact.run(swe, { model: "gpt-4o" }, quiet)).output)).toContain(
      "model gpt-4o (flag) · window"
    )
  })

  it("--allow-unknown-model uses the generic 32,768-token window and says so", async () => {
    const { exitCode, report } = await Compact.run(
      swe,
      { model: "acme-7b", allowUnknownModel: true, json: true },
      quiet
    )
    expect(exitCode).toBe(0)
    expect(report!.policy.contextWindowTokens).toBe(32_768)
    expect(report!.model.known).toBe(false)
    expect(report!.warnings.join(" ")).toContain("not in the catalog")
  })

  it("--context-window, --reserve and --keep-recent set the budget", async () => {
    const { exitCode, report } = await Compact.run(
      swe,
      { contextWindow: 32_000, reserve: 4_000, keepRecent: 3_000, json: true },
      quiet
    )
    expect(exitCode).toBe(0)
    expect(report!.policy).toMatchObject({ contextWindowTokens: 32_000, reserveTokens: 4_000, keepRecentTokens: 3_000 })
  })

  it("--context-window below the model's output limit gives the library's policy for that window", async () => {
    const { exitCode, report } = await Compact.run(swe, { contextWindow: 8_000, json: true }, quiet)
    expect(exitCode).toBe(0)
    const library = PolicyRegistry.resolveSync({ model: "claude-sonnet-4-5", contextWindowTokens: 8_000 })
    expect(report!.policy).toMatchObject({
      contextWindowTokens: library.contextWindowTokens,
      reserveTokens: library.reserveTokens,
      keepRecentTokens: library.keepRecentTokens
    })
    expect(report!.policy.reserveTokens).toBe(4_000)
  })

  it("--policy FILE applies the policy-file format", async () => {
    const path = join(mkdtempSync(join(tmpdir(), "policy-")), "policy.json")
    writeFileSync(path, JSON.stringify({ models: { "claude-sonnet-4-5": { contextWindowTokens: 100_000 } } }))
    const { exitCode, report } = await Compact.run(swe, { model: "claude-sonnet-4-5", policy: path, json: true }, quiet)
    expect(exitCode).toBe(0)
    expect(report!.policy.contextWindowTokens).toBe(100_000)
    const bad = await Compact.run(swe, { policy: join(tmpdir(), "missing-policy.json") }, quiet)
    expect(bad.exitCode).toBe(ExitCodes.USAGE)
  })

  it("inspect and compact report the same before figure", async () => {
    const inspected = JSON.parse((await Inspect.run(pi, { json: true }, quiet)).output) as {
      activeContext: { inputTokens: number }
    }
    const compacted = await Compact.run(pi, { json: true }, quiet)
    expect(compacted.report!.tokens.before.input).toBe(inspected.activeContext.inputTokens)
  })

  it("commander's own errors exit with the usage code; --help lists the exit codes", () => {
    const unknown = spawnSync(process.execPath, [bin, "inspect", swe, "--bogus"], { encoding: "utf8" })
    expect(unknown.status).toBe(ExitCodes.USAGE)
    // The error and where the options are, not the whole help text after it (a new user scrolled back 40 lines).
    expect(unknown.stderr).toBe("error: unknown option '--bogus'\nrun context-engine inspect --help for its options\n")
    const missing = spawnSync(process.execPath, [bin, "compact"], { encoding: "utf8" })
    expect(missing.status).toBe(ExitCodes.USAGE)
    expect(missing.stderr).toBe(
      "error: missing required argument 'file'\nrun context-engine compact --help for its options\n"
    )
    const topLevel = spawnSync(process.execPath, [bin, "--bogus"], { encoding: "utf8" })
    expect(topLevel.status).toBe(ExitCodes.USAGE)
    expect(topLevel.stderr).toBe("error: unknown option '--bogus'\nrun context-engine --help for the commands\n")
    const help = spawnSync(process.execPath, [bin, "--help"], { encoding: "utf8" })
    expect(help.status).toBe(0)
    expect(help.stdout).toContain("Exit codes:")
    expect(help.stdout).toContain("replay")
  })

  it("a --summarizer in none of its forms is a usage error (3) naming the forms; a well-formed one without a key is 2", async () => {
    const cli = spawnSync(process.execPath, [bin, "compact", swe, "--summarizer", "bogus"], { encoding: "utf8" })
    expect(cli.status).toBe(ExitCodes.USAGE)
    expect(cli.stderr.split("\n")[0]).toBe(
      `error: option '-s, --summarizer <summarizer>' argument 'bogus' is invalid. expected extractive, anthropic:<id>, openai:<id> or an AI Gateway id provider/model (e.g. anthropic/claude-haiku-4.5), got "bogus"`
    )
    for (const spec of ["bogus", "gpt-4o", "anthropic:", "openai: gpt-4o"]) {
      const { exitCode, output } = await Compact.run(swe, { summarizer: spec }, quiet)
      expect(exitCode, spec).toBe(ExitCodes.USAGE)
      expect(output).toBe(
        `context-engine compact: option '--summarizer': expected extractive, anthropic:<id>, openai:<id> or an AI Gateway id provider/model (e.g. anthropic/claude-haiku-4.5), got ${JSON.stringify(spec)}`
      )
    }
    const saved = { ...process.env }
    for (const key of ["ANTHROPIC_API_KEY", "OPENAI_API_KEY", "AI_GATEWAY_API_KEY", "VERCEL_OIDC_TOKEN"])
      delete process.env[key]
    try {
      for (const spec of ["openai:gpt-4o", "anthropic/claude-haiku-4.5"])
        expect((await Compact.run(swe, { summarizer: spec }, quiet)).exitCode, spec).toBe(
          ExitCodes.SUMMARIZER_UNAVAILABLE
        )
    } finally {
      Object.assign(process.env, saved)
    }
  })

  it("a missing --policy or --catalog file is one line naming the path and why, with the usage code", async () => {
    const missingDir = mkdtempSync(join(tmpdir(), "missing-"))
    for (const name of ["policy.json", "policy.ts"]) {
      const path = join(missingDir, name)
      const { exitCode, output } = await Compact.run(swe, { policy: path }, quiet)
      expect(exitCode).toBe(ExitCodes.USAGE)
      expect(output).toBe(`context-engine compact: Invalid policy file ${path}: cannot read: file not found (ENOENT)`)
    }
    const catalog = join(missingDir, "catalog.json")
    const inspected = await Inspect.run(swe, { catalog }, quiet)
    expect(inspected.exitCode).toBe(ExitCodes.USAGE)
    expect(inspected.output).toBe(
      `context-engine inspect: Invalid model catalog ${catalog}: cannot read: file not found (ENOENT)`
    )
    const folder = join(missingDir, "dir.json")
    mkdirSync(folder)
    const directory = await Compact.run(swe, { policy: folder }, quiet)
    expect(directory.exitCode).toBe(ExitCodes.USAGE)
    expect(directory.output).toBe(
      `context-engine compact: Invalid policy file ${folder}: cannot read: is a directory, not a file (EISDIR)`
    )
  })

  it("a forced --format the file is not in is a usage error in compact, inspect, replay and report (and with --strict)", () => {
    // QA session 6: `compact pi/large-session.jsonl --format aider` read the pi session as one aider entry and exited 0.
    const dir = mkdtempSync(join(tmpdir(), "ce-wrong-format-"))
    for (const command of ["compact", "inspect", "replay", "report"])
      for (const strict of command === "compact" || command === "inspect" ? [[], ["--strict"]] : [[]]) {
        const out = command === "report" ? ["--out", join(dir, "r.html")] : []
        const run = spawnSync(process.execPath, [bin, command, pi, "--format", "aider", ...strict, ...out], {
          encoding: "utf8",
          cwd: dir
        })
        expect({ command, strict, status: run.status, stderr: run.stderr.trim() }).toEqual({
          command,
          strict,
          status: ExitCodes.USAGE,
          stderr: `context-engine ${command}: ${pi} does not look like aider: it has none of aider's markers (a line \`# aider chat started at …\` or a \`#### \` prompt line); auto-detection says it looks like pi. Pass --format pi, or --format auto to detect it.`
        })
      }
    // auto-detection and a forced format that matches are unchanged
    for (const format of ["auto", "pi"])
      expect(spawnSync(process.execPath, [bin, "inspect", pi, "--format", format], { encoding: "utf8" }).status).toBe(
        ExitCodes.OK
      )
  })

  it("--version prints the package's version; a typo'd command names the right one", () => {
    const { version } = JSON.parse(readFileSync(join(repoRoot, "packages/cli/package.json"), "utf8")) as {
      version: string
    }
    const printed = spawnSync(process.execPath, [bin, "--version"], { encoding: "utf8" })
    expect(printed.status).toBe(0)
    expect(printed.stdout.trim()).toBe(version)
    const typo = spawnSync(process.execPath, [bin, "compat", swe], { encoding: "utf8" })
    expect(typo.status).toBe(ExitCodes.USAGE)
    expect(typo.stderr).toContain("(Did you mean compact?)")
  })

  it("report without --out writes report.html in the working directory and says where", () => {
    const dir = mkdtempSync(join(tmpdir(), "ce-report-"))
    const run = spawnSync(process.execPath, [bin, "report", swe, "--context-window", "16k"], {
      cwd: dir,
      encoding: "utf8"
    })
    expect(run.status).toBe(ExitCodes.OK)
    expect(run.stdout).toContain(`Wrote ${join(dir, "report.html")}: `)
    expect(readFileSync(join(dir, "report.html"), "utf8")).toContain("<!doctype html>")
  })

  it("says which model it assumed when the transcript names none", async () => {
    // The SWE-agent trajectory records no model id.
    const { report } = await Compact.run(swe, {}, quiet)
    expect(report!.model.source).toBe("default")
    expect(report!.warnings).toEqual([
      "the transcript names no model: assuming claude-sonnet-4-5 (200,000-token window, its tokenizer); pass --model or --context-window for yours"
    ])
    const flagged = await Compact.run(swe, { contextWindow: 32_000 }, quiet)
    expect(flagged.report!.warnings).toEqual([])
  })
})
