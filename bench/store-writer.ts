/**
 * Several writer processes on one session, for `store-writers.bench.ts`.
 * Run directly, this file is one writer: `node bench/store-writer.ts <kind>
 * <location> <sessionId> <name> <appends>`; it opens the store, prints
 * `ready`, waits for a line on stdin, makes `appends` acknowledged
 * single-entry appends and prints `done`.
 */
import { spawn } from "node:child_process"
import { createInterface } from "node:readline"
import { fileURLToPath } from "node:url"
import * as JsonlTranscriptStore from "../packages/core/src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../packages/core/src/SqliteTranscriptStore.ts"
import type { AsyncTranscriptStore } from "../packages/core/src/TranscriptStore.ts"
import * as PostgresTranscriptStore from "../packages/store-postgres/src/PostgresTranscriptStore.ts"

export type Kind = "jsonl" | "sqlite" | "postgres"

/** Opens a store; `location` is a directory (jsonl), a file (sqlite) or `<url>#<schema>` (postgres). */
export const openStore = async (kind: Kind, location: string): Promise<AsyncTranscriptStore> => {
  if (kind === "jsonl") return JsonlTranscriptStore.open({ directory: location })
  if (kind === "sqlite") return SqliteTranscriptStore.open({ filename: location })
  const [url, schema] = location.split("#")
  return PostgresTranscriptStore.open({ url: url!, schema: schema!, maxConnections: 1 })
}

/**
 * Starts `processes` writers, waits until all are ready, releases them at
 * once and returns the wall time until the last one is done, in ms.
 */
export const runWriters = async (
  kind: Kind,
  location: string,
  sessionId: string,
  processes: number,
  appendsPerProcess: number
): Promise<number> => {
  const script = fileURLToPath(import.meta.url)
  const children = Array.from({ length: processes }, (_, index) =>
    spawn(process.execPath, [script, kind, location, sessionId, `w${index}`, String(appendsPerProcess)], {
      stdio: ["pipe", "pipe", "inherit"]
    })
  )
  const lineOf = (child: (typeof children)[number], wanted: string) =>
    new Promise<void>((resolve, reject) => {
      const lines = createInterface({ input: child.stdout! })
      lines.on("line", (line) => {
        if (line === wanted) resolve()
      })
      child.on("close", (code) => reject(new Error(`writer exited with ${code} before ${wanted}`)))
    })
  await Promise.all(children.map((child) => lineOf(child, "ready")))
  const done = Promise.all(children.map((child) => lineOf(child, "done")))
  const start = performance.now()
  for (const child of children) child.stdin!.write("go\n")
  await done
  const elapsed = performance.now() - start
  for (const child of children) child.stdin!.end()
  return elapsed
}

const writer = async (args: ReadonlyArray<string>) => {
  const [kind, location, sessionId, name, appends] = args
  const store = await openStore(kind as Kind, location!)
  await store.load(sessionId!)
  process.stdout.write("ready\n")
  const input = createInterface({ input: process.stdin })
  await new Promise<void>((resolve) => input.once("line", () => resolve()))
  for (let index = 0; index < Number(appends); index++) {
    const id = `${name}-${index}`
    await store.append(sessionId!, [
      {
        id,
        parentId: null,
        timestamp: "2026-01-01T00:00:00.000Z",
        schemaVersion: 1,
        kind: "message",
        message: { role: "user", content: `writer ${name} append ${index} ${"x".repeat(200)}` }
      }
    ])
  }
  process.stdout.write("done\n")
  input.close()
  await store.close()
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await writer(process.argv.slice(2))
