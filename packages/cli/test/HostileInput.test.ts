/**
 * Issue #12 req 5/8: a corpus of hostile API inputs and files. For every
 * item the outcome is a typed result or a typed error, the input is
 * unchanged, and the run ends under a time bound (child processes are killed
 * on a hang; the bound is generous for a loaded 2-core CI machine).
 *
 * `FUZZ_RUNS` also scales the generated part (random entry shapes through the
 * engines): default 40 here; `FUZZ_RUNS=10000 pnpm fuzz` for the heavy run.
 */
import { execFileSync, spawn } from "node:child_process"
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { isDeepStrictEqual } from "node:util"
import { type ContextEngine, InMemoryTranscriptStore, PolicyRegistry } from "@context-engine/core"
import { repoRoot, transcript } from "@context-engine/core/test-support"
import { SlidingWindowEngine, TieredSummaryEngine } from "@context-engine/engines"
import { Effect, Exit } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as ExitCodes from "../src/ExitCodes.ts"

const RUNS = Number(process.env.FUZZ_RUNS ?? 40)
const ITEM_TIME_BOUND_MS = 120_000

const policy = PolicyRegistry.lookupSync("claude-sonnet-4-5")
const entry = (id: string, message: unknown) => ({
  id,
  parentId: null,
  timestamp: "2026-01-01T00:00:00.000Z",
  schemaVersion: 1,
  kind: "message",
  message
})
const userText = (text: string) => ({ role: "user", content: [{ type: "text", text }] })
const callWith = (input: unknown) => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input }]
})

const deep = (depth: number): unknown => {
  let value: unknown = "leaf"
  for (let level = 0; level < depth; level++) value = { nested: value }
  return value
}
const cyclic = (): unknown => {
  const value: Record<string, unknown> = { command: "ls" }
  value.self = value
  return value
}

/** Hostile engine inputs: what a caller can pass through the typed API (or around it, from plain JS). */
const hostileInputs = (): Record<string, unknown> => ({
  "entries is a number": { entries: 42, policy },
  "policy missing": { entries: [] },
  "null input": null,
  "entry with a lone surrogate id": { entries: [entry("\ud800", userText("hi"))], policy },
  "deeply nested tool input (100,000 levels)": {
    entries: [entry("u", userText("go")), entry("a", callWith(deep(100_000)))],
    policy
  },
  "cyclic tool input": { entries: [entry("u", userText("go")), entry("a", callWith(cyclic()))], policy },
  "BigInt tool input": { entries: [entry("u", userText("go")), entry("a", callWith({ n: 10n }))], policy },
  "6 MiB of one letter in a user message": { entries: [entry("u", userText("A".repeat(6 * 1024 * 1024)))], policy },
  "empty latest user message": {
    entries: [
      entry("u0", userText("first")),
      entry("a0", { role: "assistant", content: "ok" }),
      entry("u1", userText(""))
    ],
    policy
  },
  "message content of the wrong type": { entries: [entry("u", { role: "user", content: 7 })], policy }
})

const engines: Record<string, ContextEngine.ContextEngine> = {
  "sliding-window": SlidingWindowEngine.make(),
  "tiered-summary": TieredSummaryEngine.make()
}

const isTyped = (exit: Exit.Exit<unknown, unknown>): boolean => {
  if (Exit.isSuccess(exit)) return true
  const failure = exit.cause.reasons.find((reason) => reason._tag === "Fail") as { error?: { _tag?: unknown } }
  return failure !== undefined && typeof failure.error?._tag === "string"
}

describe("hostile API inputs: typed result or typed error, input unchanged", () => {
  for (const [engineName, engine] of Object.entries(engines)) {
    for (const [name, input] of Object.entries(hostileInputs())) {
      it(
        `${engineName}: ${name}`,
        () => {
          const before = structuredCloneSafe(input)
          for (const method of ["measure", "shouldCompact", "compact", "assembleContext"] as const) {
            const exit = Effect.runSyncExit(
              Effect.suspend(() => (engine[method] as (input: unknown) => Effect.Effect<unknown, unknown>)(input))
            )
            expect(isTyped(exit), `${method}: ${Exit.isFailure(exit) ? String(exit.cause).slice(0, 300) : ""}`).toBe(
              true
            )
          }
          if (before !== undefined) expect(isDeepStrictEqual(input, before)).toBe(true)
        },
        ITEM_TIME_BOUND_MS
      )
    }
  }

  it(
    "generated entries of random shapes never produce an untyped error",
    () => {
      const engine = engines["tiered-summary"]!
      fc.assert(
        fc.property(fc.array(fc.anything(), { maxLength: 6 }), (messages) => {
          const input = { entries: messages.map((message, index) => entry(`e${index}`, message)), policy }
          for (const method of ["measure", "compact", "assembleContext"] as const) {
            const run = engine[method] as (input: unknown) => Effect.Effect<unknown, unknown>
            const exit = Effect.runSyncExit(Effect.suspend(() => run(input)))
            expect(isTyped(exit)).toBe(true)
          }
        }),
        { numRuns: RUNS }
      )
    },
    Math.max(ITEM_TIME_BOUND_MS, RUNS * 100)
  )
})

/** A deep copy to compare against, or undefined when the value cannot be copied (then only the typed outcome is checked). */
function structuredCloneSafe(value: unknown): unknown {
  try {
    return structuredClone(value)
  } catch {
    return undefined
  }
}

describe("hostile store arguments: typed errors", () => {
  const store = InMemoryTranscriptStore.make()
  const calls: Record<string, () => Effect.Effect<unknown, unknown>> = {
    "append to a lone-surrogate session id": () => store.append("\udc00bad", [entry("e1", userText("hi")) as never]),
    "append entries that are not an array": () => store.append("s", 42 as never),
    "append with a numeric session id": () => store.append(7 as never, []),
    "load a session id that is an object": () => store.load({} as never)
  }
  for (const [name, call] of Object.entries(calls)) {
    it(name, async () => {
      const exit = await Effect.runPromiseExit(Effect.suspend(call))
      expect(isTyped(exit), Exit.isFailure(exit) ? String(exit.cause).slice(0, 300) : "").toBe(true)
    })
  }
})

/** Items that must fail (exit 1, `ExitCodes.FAILED`) with a message naming the problem. */
/**
 * The documented outcome of every hostile file (`ExitCodes`: 0 success, 1
 * the transcript cannot be read or imported): the exit code, and for a
 * failure the one-line message that names the problem.
 */
const EXPECTED: Record<string, { readonly exitCode: number; readonly message?: RegExp }> = {
  empty: { exitCode: ExitCodes.FAILED, message: /is corrupt: file is empty \(0 bytes\)/ },
  directory: { exitCode: ExitCodes.FAILED, message: /is a directory/ },
  fifo: { exitCode: ExitCodes.FAILED, message: /not a regular file \(a FIFO\)/ },
  "character device": { exitCode: ExitCodes.FAILED, message: /not a regular file \(a character device\)/ },
  "binary garbage": { exitCode: ExitCodes.FAILED, message: /is corrupt: binary file/ },
  "deeply nested JSON line": { exitCode: ExitCodes.FAILED, message: /Could not detect the transcript format/ },
  "a 4 MiB single line of base64 in a pi message": { exitCode: ExitCodes.OK },
  "lone surrogates and NULs": { exitCode: ExitCodes.FAILED, message: /is corrupt: binary file: NUL byte/ },
  "forced wrong --format": {
    exitCode: ExitCodes.USAGE,
    message:
      /does not look like claude-code: it has none of claude-code's markers .*auto-detection says it looks like pi/
  }
}

/** Hostile files for the CLI. */
const hostileFiles = (
  dir: string
): Record<string, { readonly path: string; readonly args?: ReadonlyArray<string> }> => {
  const file = (name: string, content: string | Buffer) => {
    const path = join(dir, name)
    writeFileSync(path, content)
    return { path }
  }
  mkdirSync(join(dir, "a-directory"))
  const fifo = join(dir, "a-fifo")
  execFileSync("mkfifo", [fifo])
  let seed = 7
  const bytes = Buffer.alloc(64 * 1024)
  for (let index = 0; index < bytes.length; index++) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff
    bytes[index] = seed & 0xff
  }
  return {
    empty: file("empty.jsonl", ""),
    directory: { path: join(dir, "a-directory") },
    fifo: { path: fifo },
    "character device": { path: "/dev/zero" },
    "binary garbage": file("garbage.jsonl", bytes),
    "deeply nested JSON line": file("deep.jsonl", `${"[".repeat(200_000)}${"]".repeat(200_000)}\n`),
    "a 4 MiB single line of base64 in a pi message": file(
      "blob.jsonl",
      `${JSON.stringify({ type: "session", id: "s", timestamp: "2026-01-01T00:00:00Z", cwd: "/w" })}\n${JSON.stringify({
        type: "message",
        id: "m1",
        parentId: null,
        timestamp: "2026-01-01T00:00:01Z",
        message: { role: "user", content: [{ type: "text", text: "A".repeat(4 * 1024 * 1024) }], timestamp: 1 }
      })}\n`
    ),
    "lone surrogates and NULs": file("weird.jsonl", `{"type":"message","text":"\\ud800\\u0000"}\n\u0000\u0000\n`),
    "forced wrong --format": { path: transcript("pi/before-compaction.jsonl"), args: ["--format", "claude-code"] }
  }
}

const runCli = (
  args: ReadonlyArray<string>
): Promise<{ readonly status: number | null; readonly stderr: string; readonly timedOut: boolean }> =>
  new Promise((resolve) => {
    const child = spawn(process.execPath, [join(repoRoot, "packages/cli/src/bin.ts"), ...args], {
      stdio: ["ignore", "ignore", "pipe"]
    })
    let stderr = ""
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString("utf8")
    })
    let timedOut = false
    const timer = setTimeout(() => {
      timedOut = true
      child.kill("SIGKILL")
    }, ITEM_TIME_BOUND_MS - 10_000)
    child.on("close", (status) => {
      clearTimeout(timer)
      resolve({ status, stderr, timedOut })
    })
  })

describe("hostile files through the CLI: the documented exit code, a one-line error, never a stack trace or a hang", () => {
  it("every hostile file has a documented outcome, and every exit code is documented in --help and the README", () => {
    expect(Object.keys(EXPECTED).sort()).toEqual(
      Object.keys(hostileFiles(mkdtempSync(join(tmpdir(), "hostile-names-")))).sort()
    )
    const readme = readFileSync(join(repoRoot, "README.md"), "utf8")
    for (const code of [ExitCodes.OK, ExitCodes.FAILED, ExitCodes.SUMMARIZER_UNAVAILABLE, ExitCodes.USAGE]) {
      expect(ExitCodes.HELP).toMatch(new RegExp(`^  ${code}  `, "m"))
      expect(readme).toContain(`\`${code}\``)
    }
  })

  const dir = mkdtempSync(join(tmpdir(), "hostile-"))
  const files = hostileFiles(dir)
  for (const [name, { path, args = [] }] of Object.entries(files)) {
    it(
      `inspect: ${name}`,
      async () => {
        const { status, stderr, timedOut } = await runCli(["inspect", path, ...args])
        expect(timedOut).toBe(false)
        expect(stderr).not.toMatch(/\n\s+at /)
        expect(stderr).not.toMatch(/Maximum call stack|RangeError|TypeError/)
        const expected = EXPECTED[name]!
        expect(status).toBe(expected.exitCode)
        if (expected.message !== undefined) {
          expect(stderr.trim().split("\n")).toHaveLength(1)
          expect(stderr).toMatch(/^context-engine inspect: /)
          expect(stderr).toMatch(expected.message)
        }
      },
      ITEM_TIME_BOUND_MS
    )
  }
})
