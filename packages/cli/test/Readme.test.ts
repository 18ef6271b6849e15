import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import * as Core from "@context-engine/core"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import * as Engines from "@context-engine/engines"
import * as ProviderAdapters from "@context-engine/provider-adapters"
import { Command } from "commander"
import { describe, expect, it } from "vitest"
import * as Compact from "../src/commands/compact.ts"
import * as Inspect from "../src/commands/inspect.ts"
import * as Replay from "../src/commands/replay.ts"
import * as Report from "../src/commands/report.ts"
import * as Progress from "../src/Progress.ts"

const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
const quickStart = readme.slice(readme.indexOf("## Quick start"), readme.indexOf("### Commands"))

const program = new Command()
for (const command of [Inspect, Compact, Replay, Report]) command.register(program)

describe("README quick start", { timeout: 120_000 }, () => {
  it("states the sizes `pnpm start` prints (within 3 %: the estimator may be recalibrated)", async () => {
    const stated =
      /measures about (\d+)K tokens, over gpt-4o's ([\d,]+)-token\s+input budget, and leaves at about (\d+)K tokens/.exec(
        quickStart.replace(/\n/g, " ")
      )
    expect(stated).not.toBeNull()
    expect(readme).toContain("before-compaction.jsonl --model gpt-4o --out compacted.json")
    const { report } = await Compact.run(
      transcript("pi/before-compaction.jsonl"),
      { model: "gpt-4o" },
      Progress.make({ enabled: false })
    )
    const within = (statedK: number, measured: number) =>
      expect(Math.abs(statedK * 1000 - measured) / measured).toBeLessThanOrEqual(0.03)
    within(Number(stated![1]), report!.tokens.before.input)
    expect(Number(stated![2]!.replace(/,/g, ""))).toBe(report!.policy.inputBudgetTokens)
    within(Number(stated![3]), report!.tokens.after.input)
    // "990 messages" (SOURCES.md) and "compacted twice by pi itself" (the generation written is 3)
    expect(quickStart).toContain("990 messages, compacted twice by pi")
    expect(report!.handoff.transcriptMessages).toBe(990)
    expect(report!.checkpoint?.generation).toBe(3)
    // "(In the 200K window of claude-opus-4-5 … about 60K tokens, so no checkpoint is written there.)"
    const ownWindow =
      /claude-opus-4-5, the model pi ran, clearing old tool output alone\s+brings it to about (\d+)K tokens/.exec(
        quickStart
      )
    expect(ownWindow).not.toBeNull()
    const own = await Compact.run(transcript("pi/before-compaction.jsonl"), {}, Progress.make({ enabled: false }))
    expect(own.report!.model.id).toBe("claude-opus-4-5")
    within(Number(ownWindow![1]), own.report!.tokens.after.input)
    expect(own.report!.checkpoint ?? null).toBeNull()
  })

  it("shows each command line beside its library call, and both name things that exist", () => {
    const rows = [...quickStart.matchAll(/^\| `(context-engine [^`]+)` \| `([^`]+)` \|$/gm)]
    expect(rows.length).toBeGreaterThanOrEqual(4)
    const exports: Record<string, Record<string, unknown>> = { ...Core, ...Engines, ...ProviderAdapters } as never
    for (const [, commandLine, library] of rows) {
      const [, name, , ...flags] = commandLine!.split(/\s+/)
      const command = program.commands.find((candidate) => candidate.name() === name)
      expect(command, `${name} is a command`).toBeDefined()
      for (const flag of flags.filter((word) => word.startsWith("--")))
        expect(
          command!.options.map((option) => option.long),
          `${name} takes ${flag}`
        ).toContain(flag)
      // Every Namespace.member the library column calls is exported by a package.
      for (const [, namespace, member] of library!.matchAll(/\b([A-Z]\w+)\.(\w+)\(/g))
        expect(typeof exports[namespace!]?.[member!], `${namespace}.${member}`).toBe("function")
      for (const [, fn] of library!.matchAll(/(?:^|[^.\w])([a-z]\w+)\(/g))
        expect(typeof (ProviderAdapters as Record<string, unknown>)[fn!], fn).toBe("function")
    }
  })
})

describe("example READMEs", () => {
  const examples = readdirSync(join(repoRoot, "examples"))
  it.each(examples)("examples/%s follows the one shape and names the command that runs it", (example) => {
    const text = readFileSync(join(repoRoot, "examples", example, "README.md"), "utf8")
    const headings = [...text.matchAll(/^## (.+)$/gm)].map((match) => match[1])
    expect(headings).toEqual(["What it shows", "Run it", "What you should see", "How it works", "Next"])
    const { name } = JSON.parse(readFileSync(join(repoRoot, "examples", example, "package.json"), "utf8")) as {
      name: string
    }
    expect(text).toContain(`pnpm --filter ${name} start`)
  })
})
