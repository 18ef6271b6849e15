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
import { constants } from "node:fs"
import { link, lstat, open, readdir, rename, unlink, writeFile } from "node:fs/promises"
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
  /** Permission bits of the lock file (default `0o600`). */
  readonly fileMode?: number
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

/** The owner of a lock file, read without following a symlink (a symlink at a lock path fails with ELOOP). */
const readOwner = async (path: string): Promise<{ pid: number; ageMs: number } | undefined> => {
  try {
    const handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW)
    try {
      const [text, info] = await Promise.all([handle.readFile("utf8"), handle.stat()])
      return { pid: Number.parseInt(text, 10), ageMs: Date.now() - info.mtimeMs }
    } finally {
      await handle.close()
    }
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
  // `wx`: O_CREAT | O_EXCL, which never follows a symlink.
  await writeFile(temporary, String(process.pid), { flag: "wx", mode: options.fileMode ?? 0o600 })
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

const escapeRegExp = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")

/**
 * Removes the temporary and broken-lock files that processes killed while
 * acquiring or breaking a lock in `directory` left behind — and only those:
 * names of the exact forms `withLock` creates, `<name><lockSuffix>.<pid>-<12 hex>`
 * and `<name><lockSuffix>.stale-<pid>-<8 hex>`, that are regular files (not
 * symlinks) owned by this user and whose creating process is gone. Every
 * other file (e.g. `backup.lock.2024-01`) stays.
 *
 * @returns how many files were removed.
 * @category combinators
 */
export const sweep = async (directory: string, lockSuffix = ".lock"): Promise<number> => {
  const leftover = new RegExp(`^.+${escapeRegExp(lockSuffix)}\\.(?:(\\d+)-[0-9a-f]{12}|stale-(\\d+)-[0-9a-f]{8})$`)
  const uid = process.geteuid?.()
  let removed = 0
  for (const name of await readdir(directory).catch(() => [] as Array<string>)) {
    const match = leftover.exec(name)
    if (match === null) continue
    const pid = Number(match[1] ?? match[2])
    if (isAlive(pid)) continue
    const path = join(directory, name)
    const info = await lstat(path).catch(() => undefined)
    if (info === undefined || !info.isFile() || (uid !== undefined && info.uid !== uid)) continue
    await unlink(path).then(
      () => removed++,
      () => undefined
    )
  }
  return removed
}
