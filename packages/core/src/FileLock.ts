/**
 * A cross-process exclusive lock file, for stores that keep state in plain
 * files (the JSONL transcript store's write section).
 *
 * Acquire writes the owner's pid to a private temporary file and hard-links
 * it to the lock path: `link` fails with `EEXIST` atomically when the lock is
 * held, so the lock never exists without its owner's pid in it. A lock whose
 * owner process is gone (SIGKILL while writing) or that is older than
 * `staleMs` is broken: it is renamed away to a unique name (only one breaker
 * succeeds), checked to still be the stale lock, and removed.
 *
 * @since 0.1.0
 */
import { randomBytes } from "node:crypto"
import { link, readdir, readFile, rename, stat, unlink, writeFile } from "node:fs/promises"
import { join } from "node:path"

/**
 * Lock timing, in milliseconds.
 *
 * @category models
 */
export interface LockOptions {
  /** Give up after this long (default 10 000 ms). */
  readonly timeoutMs?: number
  /** A lock older than this is stale even if its pid is alive (pid reuse; default 30 000 ms). */
  readonly staleMs?: number
}

const isAlive = (pid: number): boolean => {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === "EPERM"
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

const code = (error: unknown) => (error as NodeJS.ErrnoException).code

const readOwner = async (path: string): Promise<{ pid: number; ageMs: number } | undefined> => {
  try {
    const [text, info] = await Promise.all([readFile(path, "utf8"), stat(path)])
    return { pid: Number.parseInt(text, 10), ageMs: Date.now() - info.mtimeMs }
  } catch (error) {
    if (code(error) === "ENOENT") return undefined
    throw error
  }
}

const breakIfStale = async (path: string, staleMs: number): Promise<void> => {
  const owner = await readOwner(path)
  if (owner === undefined) return
  const stale =
    !Number.isInteger(owner.pid) || owner.ageMs > staleMs || (owner.pid !== process.pid && !isAlive(owner.pid))
  if (!stale) return
  const aside = `${path}.stale-${process.pid}-${randomBytes(4).toString("hex")}`
  try {
    await rename(path, aside)
  } catch (error) {
    if (code(error) === "ENOENT") return
    throw error
  }
  const moved = await readOwner(aside)
  if (moved !== undefined && moved.pid !== owner.pid) {
    // Another process broke the stale lock and took it in between: give it back.
    await link(aside, path).catch(() => undefined)
  }
  await unlink(aside).catch(() => undefined)
}

/**
 * Runs `body` while holding the lock file `path`; removes it afterwards.
 *
 * @throws Error when the lock is not acquired within `timeoutMs`.
 * @category combinators
 */
export const withLock = async <A>(path: string, body: () => Promise<A>, options: LockOptions = {}): Promise<A> => {
  const timeoutMs = options.timeoutMs ?? 10_000
  const staleMs = options.staleMs ?? 30_000
  const temporary = `${path}.${process.pid}-${randomBytes(6).toString("hex")}`
  await writeFile(temporary, String(process.pid))
  const started = Date.now()
  try {
    for (let attempt = 0; ; attempt++) {
      try {
        await link(temporary, path)
        break
      } catch (error) {
        if (code(error) !== "EEXIST") throw error
      }
      await breakIfStale(path, staleMs)
      if (Date.now() - started > timeoutMs) throw new Error(`lock ${path} not acquired within ${timeoutMs} ms`)
      await sleep(Math.min(20, 1 + attempt) * (0.5 + Math.random()))
    }
  } finally {
    await unlink(temporary).catch(() => undefined)
  }
  try {
    return await body()
  } finally {
    await unlink(path).catch(() => undefined)
  }
}

const LEFTOVER = /\.lock\.(?:stale-)?(\d+)-[0-9a-f]+$/

/**
 * Removes the temporary and broken-lock files (`<lock>.<pid>-<hex>`,
 * `<lock>.stale-<pid>-<hex>`) that processes killed while acquiring or
 * breaking a lock in `directory` left behind. Files of live processes stay.
 *
 * @category combinators
 */
export const sweep = async (directory: string): Promise<number> => {
  let removed = 0
  for (const name of await readdir(directory).catch(() => [] as Array<string>)) {
    const match = LEFTOVER.exec(name)
    if (match === null || isAlive(Number(match[1]))) continue
    await unlink(join(directory, name)).then(
      () => removed++,
      () => undefined
    )
  }
  return removed
}
