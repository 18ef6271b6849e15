/**
 * The JSONL transcript store, the embedded default: one file per session
 * (`<directory>/<encodeURIComponent(sessionId)>.jsonl`), one entry per line,
 * append-only.
 *
 * Writes happen inside an exclusive lock file (`<file>.lock`, see
 * {@link FileLock}) so that several processes can write one session: the
 * writer catches up on lines others appended, checks ids and the checkpoint
 * generation (compare-and-set), appends its lines with one `write` and
 * `fdatasync`s before acknowledging. A new file's directory is fsynced too.
 * A torn final line (a writer killed mid-write — never acknowledged) is
 * ignored with a warning by readers and cut off by the next writer; a final
 * line that is complete JSON and only lacks its newline (a hand edit) is kept
 * and terminated by the next writer instead.
 *
 * A checkpoint install is a single line: a reader sees it whole (new view)
 * or not at all (old view), never a mixture.
 *
 * @since 0.1.0
 */
import { type FileHandle, lstat, open as openFile, readdir } from "node:fs/promises"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import * as BackendTranscriptStore from "./BackendTranscriptStore.ts"
import { InvalidInput } from "./Errors.ts"
import * as FileLock from "./FileLock.ts"
import * as PrivateFiles from "./PrivateFiles.ts"
import type { Backend, Cursor, RawRecord, Transaction } from "./TranscriptBackend.ts"
import { type AsyncTranscriptStore, checkSessionId, type Service, TranscriptStore, toAsync } from "./TranscriptStore.ts"

/**
 * Options of the JSONL store.
 *
 * @category models
 */
export interface Options {
  /** Directory holding the session files; created when missing. */
  readonly directory: string
  /** Lock timing in milliseconds. */
  readonly lock?: FileLock.LockOptions
  /** Permission bits of created session and lock files (default `0o600`: owner only). */
  readonly fileMode?: number
  /** Permission bits of created directories (default `0o700`). */
  readonly directoryMode?: number
}

const SUFFIX = ".jsonl"
const LOCK_SUFFIX = `${SUFFIX}.lock`
/**
 * The longest encoded file name stem, in bytes: 255 (the usual file name
 * limit) minus the longest suffix the store adds (`.jsonl.lock.stale-<pid>-<8 hex>`).
 */
const MAX_NAME_BYTES = 200
const NEWLINE = 0x0a
const CHUNK_BYTES = 1 << 16

/**
 * The file of a session: `<directory>/<name>.jsonl` where `name` is
 * `encodeURIComponent(sessionId)` with a leading `.` written `%2E` (no
 * hidden files, no `..`). The encoding is reversible, so `listSessions`
 * returns every id exactly as given. Ids that break the store-wide rule
 * ({@link TranscriptStore.checkSessionId}) or whose encoded name is longer
 * than 200 bytes (file names are limited to 255) are rejected.
 *
 * @throws InvalidInput naming the rule the id breaks.
 * @category getters
 */
export const sessionPath = (directory: string, sessionId: string): string => {
  const problem = checkSessionId(sessionId)
  if (problem !== undefined) throw problem
  const name = encodeURIComponent(sessionId).replace(/^\./, "%2E")
  if (name.length > MAX_NAME_BYTES) {
    throw new InvalidInput({
      what: "session id",
      path: "",
      detail: `encodes to a file name of ${name.length} bytes; at most ${MAX_NAME_BYTES}`
    })
  }
  return join(directory, `${name}${SUFFIX}`)
}

/** The session id a file name stands for, or undefined when the file is not a session file of this store. */
const sessionIdOf = (directory: string, name: string): string | undefined => {
  if (!name.endsWith(SUFFIX)) return undefined
  try {
    const sessionId = decodeURIComponent(name.slice(0, -SUFFIX.length))
    return sessionPath(directory, sessionId) === join(directory, name) ? sessionId : undefined
  } catch {
    return undefined
  }
}

/**
 * Lines of `[from, to)`; `end` is the byte offset just after each line's
 * newline. Linear in the bytes read: each chunk is searched once and an
 * unfinished line is kept as chunk copies joined once when it ends (a 40 MiB
 * single line is not re-copied per 64 KiB chunk, #12 req 1).
 */
async function* lines(
  handle: FileHandle,
  from: number,
  to: number,
  firstLine: number
): AsyncGenerator<RawRecord & { readonly end: number }> {
  let pending: Array<Buffer> = []
  let line = firstLine
  let position = from
  const buffer = Buffer.allocUnsafe(CHUNK_BYTES)
  const take = (tail: Buffer): Buffer => {
    const whole = pending.length === 0 ? tail : Buffer.concat([...pending, tail])
    pending = []
    return whole
  }
  while (position < to) {
    const { bytesRead } = await handle.read(buffer, 0, Math.min(CHUNK_BYTES, to - position), position)
    if (bytesRead === 0) break
    const chunk = buffer.subarray(0, bytesRead)
    const chunkStart = position
    position += bytesRead
    let start = 0
    let newline = chunk.indexOf(NEWLINE)
    while (newline !== -1) {
      line++
      yield {
        line,
        text: take(chunk.subarray(start, newline)).toString("utf8"),
        torn: false,
        end: chunkStart + newline + 1
      }
      start = newline + 1
      newline = chunk.indexOf(NEWLINE, start)
    }
    // The buffer is reused for the next read: keep a copy of the unfinished line's bytes.
    if (start < bytesRead) pending.push(Buffer.from(chunk.subarray(start)))
  }
  if (pending.length > 0) yield { line: line + 1, text: take(Buffer.alloc(0)).toString("utf8"), torn: true, end: to }
}

const isCompleteJson = (text: string): boolean => {
  try {
    JSON.parse(text)
    return true
  } catch {
    return false
  }
}

const fsyncDirectory = async (directory: string) => {
  const handle = await openFile(directory, "r")
  try {
    await handle.sync()
  } finally {
    await handle.close()
  }
}

const transaction = (path: string, handle: FileHandle): Transaction => ({
  readSince: async (cursor) => {
    const { size } = await handle.stat()
    if (size < cursor.offset) return { records: [], cursor, reset: true }
    const records: Array<RawRecord> = []
    let end: Cursor = cursor
    let repaired: RawRecord | undefined
    for await (const { end: offset, ...record } of lines(handle, cursor.offset, size, cursor.line)) {
      if (record.torn) {
        repaired = record
        break
      }
      records.push(record)
      end = { offset, line: record.line }
    }
    if (repaired === undefined) return { records, cursor: end, reset: false }
    const bytes = Buffer.byteLength(repaired.text)
    if (isCompleteJson(repaired.text)) {
      // Only the newline is missing (an editor, or a write cut just before it): keep the line, terminate it.
      await handle.write("\n")
      await handle.datasync()
      return {
        records: [...records, { ...repaired, torn: false }],
        cursor: { offset: end.offset + bytes + 1, line: repaired.line },
        reset: false,
        repaired: {
          source: path,
          line: repaired.line,
          kind: "torn-line",
          reason: "the final line had no newline but is complete JSON: kept and terminated"
        }
      }
    }
    // A torn final line: its writer died before acknowledging it. Cut it off so the next line starts clean.
    await handle.truncate(end.offset)
    await handle.datasync()
    return {
      records,
      cursor: end,
      reset: false,
      repaired: {
        source: path,
        line: repaired.line,
        kind: "torn-line",
        reason: `removed a torn final line of ${bytes} bytes (interrupted write, never acknowledged)`
      }
    }
  },
  write: async (cursor, texts) => {
    const data = Buffer.from(`${texts.join("\n")}\n`)
    try {
      let written = 0
      while (written < data.length) {
        const result = await handle.write(data, written, data.length - written)
        written += result.bytesWritten
      }
      await handle.datasync()
    } catch (error) {
      // Not acknowledged, so not stored: cut off what reached the file (best effort; a torn line otherwise).
      await handle.truncate(cursor.offset).catch(() => undefined)
      throw error
    }
    return { offset: cursor.offset + data.length, line: cursor.line + texts.length }
  }
})

/**
 * Creates the JSONL backend (for {@link make} and tests).
 *
 * @category constructors
 */
export const makeBackend = (options: Options): Backend => {
  const { directory } = options
  const fileMode = options.fileMode ?? PrivateFiles.FILE_MODE
  PrivateFiles.ensureDirectory(directory, options.directoryMode ?? PrivateFiles.DIRECTORY_MODE)
  void FileLock.sweep(directory, LOCK_SUFFIX)
  return {
    kind: "jsonl",
    atomicWrites: false,
    describe: (sessionId) => {
      try {
        return sessionPath(directory, sessionId)
      } catch {
        return join(directory, `<invalid session id ${JSON.stringify(sessionId.slice(0, 40))}>`)
      }
    },
    records: async function* (sessionId) {
      // An id the store cannot hold has nothing stored under it.
      if (checkSessionId(sessionId) !== undefined) return
      let handle: FileHandle
      try {
        handle = await PrivateFiles.openFile(sessionPath(directory, sessionId), "read")
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === "ENOENT") return
        throw error
      }
      try {
        const { size } = await handle.stat()
        for await (const { end: _end, ...record } of lines(handle, 0, size, 0)) yield record
      } finally {
        await handle.close()
      }
    },
    exclusive: async (sessionId, body) => {
      const path = sessionPath(directory, sessionId)
      PrivateFiles.ensureDirectory(directory, options.directoryMode ?? PrivateFiles.DIRECTORY_MODE)
      return FileLock.withLock(
        `${path}.lock`,
        async () => {
          const existed = await lstat(path).then(
            () => true,
            () => false
          )
          const handle = await PrivateFiles.openFile(path, "append", fileMode)
          try {
            if (!existed) await fsyncDirectory(directory)
            return await body(transaction(path, handle))
          } finally {
            await handle.close()
          }
        },
        { ...options.lock, fileMode }
      )
    },
    listSessions: async () => {
      const sessions: Array<{ sessionId: string; updatedAt: string }> = []
      for (const name of await readdir(directory)) {
        const sessionId = sessionIdOf(directory, name)
        if (sessionId === undefined) continue
        const info = await lstat(join(directory, name)).catch(() => undefined)
        if (info?.isFile()) sessions.push({ sessionId, updatedAt: info.mtime.toISOString() })
      }
      return sessions
    },
    close: async () => {}
  }
}

/**
 * Creates a JSONL transcript store.
 *
 * @category constructors
 */
export const make = (options: Options): Service => BackendTranscriptStore.make(makeBackend(options))

/**
 * A layer providing {@link TranscriptStore} backed by JSONL files.
 *
 * @category layers
 */
export const layer = (options: Options): Layer.Layer<TranscriptStore> =>
  Layer.effect(
    TranscriptStore,
    Effect.sync(() => make(options))
  )

/**
 * The Promise face of a JSONL store.
 *
 * @example
 * ```ts
 * const store = JsonlTranscriptStore.open({ directory: "./sessions" })
 * await store.append("s1", [entry])
 * const { view } = await store.activeView("s1")
 * ```
 *
 * @category constructors
 */
export const open = (options: Options): AsyncTranscriptStore => toAsync(make(options))
