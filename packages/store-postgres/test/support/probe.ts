/**
 * The multi-process store probe (issue #16 requirement 3, after Mastra's
 * shared-memory-store probe: 250 jittered iterations × 3 seeds): several OS
 * processes (`probeWorker.ts`) append, commit compactions, roll back and
 * resume on one session of a SQLite or PostgreSQL store at the same time.
 * Afterwards a fresh store checks that no acknowledged entry is lost or
 * duplicated, that there is one checkpoint per generation, that every
 * committed compaction is whole (never visible in part), and that the final
 * view has no orphan tool result; the workers report what they saw on each
 * resume. Target: 0 violations.
 *
 * Full probe (documented in README):
 *   DATABASE_URL=… node packages/store-postgres/test/support/probe.ts --processes 2 --iterations 250 --seeds 3
 * `--kinds sqlite` runs SQLite only (no server needed). CI runs a small count
 * (`MultiProcessProbe.test.ts`).
 */
import { spawn } from "node:child_process"
import { mkdtempSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { dirname, join } from "node:path"
import { fileURLToPath } from "node:url"
import { parseArgs } from "node:util"
import type { TranscriptStore } from "@context-engine/core"
import { SqliteTranscriptStore } from "@context-engine/core/node"
import * as PostgresTranscriptStore from "../../src/PostgresTranscriptStore.ts"

/** The worker's source file. */
export const worker = join(dirname(fileURLToPath(import.meta.url)), "probeWorker.ts")

/** Options of one probe run. */
export interface ProbeOptions {
  readonly kind: "sqlite" | "postgres"
  readonly processes: number
  readonly iterations: number
  readonly seed: number
  /** Required for `postgres`. */
  readonly databaseUrl?: string
  /** The worker script to run (a bundle of `probeWorker.ts` starts faster); default `probeWorker.ts`. */
  readonly workerScript?: string
}

/** What one run did and found. */
export interface ProbeResult {
  readonly kind: string
  readonly seed: number
  readonly processes: number
  readonly iterations: number
  readonly acknowledgedEntries: number
  readonly commits: number
  readonly conflicts: number
  readonly rollbacks: number
  readonly errors: ReadonlyArray<string>
  readonly violations: ReadonlyArray<string>
}

const runWorker = (script: string, args: ReadonlyArray<string>): Promise<Array<string>> =>
  new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [script, ...args], { stdio: ["ignore", "pipe", "pipe"] })
    let stdout = ""
    let stderr = ""
    child.stdout.on("data", (chunk: Buffer) => {
      stdout += chunk.toString()
    })
    child.stderr.on("data", (chunk: Buffer) => {
      stderr += chunk.toString()
    })
    child.on("error", reject)
    child.on("close", (code) => {
      const lines = stdout.split("\n").filter((line) => line.length > 0)
      if (code !== 0) lines.push(`error worker exited with ${code}: ${stderr.slice(-500)}`)
      resolve(lines)
    })
  })

/** Checks the final transcript against every worker's acknowledgements. */
const verify = async (store: TranscriptStore.AsyncTranscriptStore, sessionId: string, lines: Array<string>) => {
  const violations: Array<string> = lines.filter((line) => line.startsWith("violation ")).map((line) => line.slice(10))
  const loaded = await store.load(sessionId)
  const counts = new Map<string, number>()
  for (const entry of loaded.entries) counts.set(entry.id, (counts.get(entry.id) ?? 0) + 1)
  for (const issue of loaded.issues) violations.push(`stored record issue: ${issue.kind} ${issue.reason}`)
  const acknowledged = lines.filter((line) => line.startsWith("ack ")).flatMap((line) => line.slice(4).split(" "))
  for (const id of acknowledged) {
    const count = counts.get(id) ?? 0
    if (count !== 1) violations.push(`acknowledged entry ${id} stored ${count} times`)
  }
  const generations = new Map<number, Array<string>>()
  for (const entry of loaded.entries) {
    if (entry.kind !== "checkpoint") continue
    generations.set(entry.checkpoint.generation, [...(generations.get(entry.checkpoint.generation) ?? []), entry.id])
  }
  for (const [generation, ids] of generations) {
    if (ids.length > 1) violations.push(`generation ${generation} has ${ids.length} checkpoints: ${ids.join(", ")}`)
  }
  for (const line of lines.filter((candidate) => candidate.startsWith("commit "))) {
    const [, , ...ids] = line.split(" ")
    for (const id of ids) if (counts.get(id) !== 1) violations.push(`committed compaction lacks ${id}`)
  }
  const calls = new Set<string>()
  for (const item of (await store.activeView(sessionId)).view.items) {
    if (typeof item.message.content === "string") continue
    for (const part of item.message.content as ReadonlyArray<{ type: string; toolCallId?: string }>) {
      if (part.type === "tool-call") calls.add(part.toolCallId!)
      if (part.type === "tool-result" && !calls.has(part.toolCallId!)) {
        violations.push(`orphan tool result ${part.toolCallId} in the final view`)
      }
    }
  }
  return { violations, acknowledged: acknowledged.length }
}

/** Runs one probe: `processes` workers × `iterations` on one session. */
export const runProbe = async (options: ProbeOptions): Promise<ProbeResult> => {
  const directory = mkdtempSync(join(tmpdir(), "store-probe-"))
  const schema = `ce_probe_${process.pid}_${options.seed}_${Math.floor(Math.random() * 1e6)}`
  const location = options.kind === "sqlite" ? join(directory, "probe.db") : `${options.databaseUrl}#${schema}`
  const open = () =>
    options.kind === "sqlite"
      ? Promise.resolve(SqliteTranscriptStore.open({ filename: location }))
      : PostgresTranscriptStore.open({ url: options.databaseUrl!, schema })
  const sessionId = `probe-${options.seed}`
  const store = await open()
  try {
    await store.append(sessionId, [
      {
        id: "root",
        parentId: null,
        timestamp: new Date(0).toISOString(),
        schemaVersion: 1,
        kind: "message",
        message: { role: "system", content: "probe" }
      }
    ])
    const outputs = await Promise.all(
      Array.from({ length: options.processes }, (_, index) =>
        runWorker(options.workerScript ?? worker, [
          options.kind,
          location,
          sessionId,
          `w${index}`,
          String(options.seed * 1000 + index),
          String(options.iterations)
        ])
      )
    )
    const lines = outputs.flat()
    const { violations, acknowledged } = await verify(store, sessionId, lines)
    const count = (prefix: string) => lines.filter((line) => line.startsWith(prefix)).length
    return {
      kind: options.kind,
      seed: options.seed,
      processes: options.processes,
      iterations: options.iterations,
      acknowledgedEntries: acknowledged,
      commits: count("commit "),
      conflicts: count("conflict "),
      rollbacks: count("rollback "),
      errors: lines.filter((line) => line.startsWith("error ")),
      violations
    }
  } finally {
    await store.close()
    rmSync(directory, { recursive: true, force: true })
    if (options.kind === "postgres") await PostgresTranscriptStore.dropSchema(options.databaseUrl!, schema)
  }
}

const main = async () => {
  const { values } = parseArgs({
    options: {
      kinds: { type: "string", default: "sqlite,postgres" },
      processes: { type: "string", default: "2" },
      iterations: { type: "string", default: "250" },
      seeds: { type: "string", default: "3" }
    }
  })
  const databaseUrl = process.env.DATABASE_URL
  let total = 0
  for (const kind of values.kinds.split(",") as Array<"sqlite" | "postgres">) {
    if (kind === "postgres" && !databaseUrl) throw new Error("DATABASE_URL is not set (see README, 'Store tests')")
    for (let seed = 1; seed <= Number(values.seeds); seed++) {
      const result = await runProbe({
        kind,
        seed,
        processes: Number(values.processes),
        iterations: Number(values.iterations),
        ...(databaseUrl ? { databaseUrl } : {})
      })
      total += result.violations.length + result.errors.length
      console.log(
        `${kind} seed ${seed}: ${result.processes} processes × ${result.iterations} iterations: ` +
          `${result.acknowledgedEntries} entries acknowledged, ${result.commits} compactions committed, ` +
          `${result.conflicts} CAS conflicts, ${result.rollbacks} rollbacks; ` +
          `violations ${result.violations.length}, errors ${result.errors.length}`
      )
      for (const line of [...result.violations, ...result.errors].slice(0, 10)) console.log(`  ${line}`)
    }
  }
  console.log(`total violations and errors: ${total}`)
  process.exitCode = total === 0 ? 0 : 1
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main()
