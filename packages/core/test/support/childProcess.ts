/**
 * Spawning the transcript store child process (`transcriptStoreChild.ts`)
 * efficiently. Loading `effect` from source takes ~1 s per process, which
 * would make 200+ crash iterations take minutes, so the child is bundled
 * once per test file with rolldown (already installed as vite's bundler,
 * resolved through vitest → vite → rolldown) into one tree-shaken file that
 * starts in ~0.1 s. When rolldown cannot be resolved the `.ts` child runs
 * directly (slower, same behaviour).
 */
import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process"
import { createRequire } from "node:module"
import { basename, dirname, join } from "node:path"
import { fileURLToPath, pathToFileURL } from "node:url"

const childSource = join(dirname(fileURLToPath(import.meta.url)), "transcriptStoreChild.ts")

/** Bundles the child (`source`, by default the transcript store child) into `directory` and returns the script to run. */
export const buildChild = async (directory: string, source: string = childSource): Promise<string> => {
  try {
    const fromHere = createRequire(import.meta.url)
    const fromVitest = createRequire(fromHere.resolve("vitest/package.json"))
    const fromVite = createRequire(fromVitest.resolve("vite/package.json"))
    const rolldown = (await import(pathToFileURL(fromVite.resolve("rolldown")).href)) as {
      build: (options: unknown) => Promise<unknown>
    }
    const file = join(directory, `${basename(source, ".ts")}.mjs`)
    await rolldown.build({
      input: source,
      platform: "node",
      logLevel: "silent",
      output: { file, format: "esm" }
    })
    return file
  } catch {
    return source
  }
}

/** A running child with its stdout split into lines. */
export interface Child {
  readonly process: ChildProcessWithoutNullStreams
  readonly lines: Array<string>
  /** Resolves with the first line (at or after index `from`) that satisfies `predicate`. */
  readonly waitFor: (predicate: (line: string) => boolean, from?: number) => Promise<string>
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>
}

const running = new Set<ChildProcessWithoutNullStreams>()

/** SIGKILLs every child still running (for `afterAll`, when a test failed midway). */
export const killAll = (): void => {
  for (const child of running) child.kill("SIGKILL")
}

/** Spawns the child script with `args`. */
export const spawnChild = (script: string, args: ReadonlyArray<string>): Child => {
  const child = spawn(process.execPath, [script, ...args], { stdio: ["pipe", "pipe", "pipe"] })
  running.add(child)
  const lines: Array<string> = []
  const waiters: Array<{ predicate: (line: string) => boolean; from: number; resolve: (line: string) => void }> = []
  let buffered = ""
  let stderr = ""
  child.stderr.on("data", (chunk: Buffer) => {
    stderr += chunk.toString()
  })
  child.stdout.on("data", (chunk: Buffer) => {
    buffered += chunk.toString()
    let newline = buffered.indexOf("\n")
    while (newline !== -1) {
      lines.push(buffered.slice(0, newline))
      buffered = buffered.slice(newline + 1)
      newline = buffered.indexOf("\n")
    }
    for (const waiter of waiters.slice()) {
      const found = lines.slice(waiter.from).find(waiter.predicate)
      if (found !== undefined) {
        waiters.splice(waiters.indexOf(waiter), 1)
        waiter.resolve(found)
      }
    }
  })
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on("close", (code, signal) => {
      running.delete(child)
      for (const waiter of waiters.splice(0)) waiter.resolve(`exited ${code} ${signal} ${stderr.slice(-2000)}`)
      resolve({ code, signal })
    })
  )
  return {
    process: child,
    lines,
    exited,
    waitFor: (predicate, from = 0) =>
      new Promise((resolve) => {
        const found = lines.slice(from).find(predicate)
        if (found !== undefined) resolve(found)
        else waiters.push({ predicate, from, resolve })
      })
  }
}
