/**
 * Reads a transcript line by line, from a file (streamed in 64 KiB chunks,
 * never held whole) or from a string, with 1-based line numbers, the
 * number of bytes read so far (for progress), and a flag on a final line
 * that has no trailing newline (a truncated write).
 *
 * @since 0.1.0
 */
import { closeSync, createReadStream, openSync, readSync } from "node:fs"
import { StringDecoder } from "node:string_decoder"

/**
 * Receives lines. `unterminated` is true only for a final line without `\n`.
 *
 * @category models
 */
export interface LineSink {
  readonly line: (text: string, lineNumber: number, unterminated: boolean) => void
  readonly end: () => void
}

/**
 * Progress callback: bytes read so far and the total size in bytes. Called
 * after each chunk's lines went to the sink; a returned promise is awaited
 * before the next chunk is read (a caller may do work between chunks, e.g.
 * a rolling compaction's round).
 *
 * @category models
 */
export type OnProgress = (bytesRead: number, totalBytes: number) => unknown

/**
 * Bytes per read: 64 KiB, Node's default `highWaterMark` for file streams.
 * Measured on the 101 MiB pi session of `bench/compact-memory.bench.ts`:
 * importing it peaked at 289 MiB RSS with 1 MiB reads and 258 MiB with 64 KiB
 * reads (same entries, less CPU) — a 1 MiB chunk and the string decoded from
 * it are large objects V8 frees only in a full GC, a 64 KiB one dies young.
 */
const CHUNK_BYTES = 64 * 1024

/**
 * `text` without a leading UTF-8 byte order mark (U+FEFF, which Windows
 * editors write first); it is not part of the first line or the JSON.
 *
 * @category utils
 */
export const withoutByteOrderMark = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text)

/**
 * Splits decoded chunks into lines, keeping the unfinished tail between
 * chunks. A trailing `\r` is dropped (CRLF files), and a byte order mark
 * before the first line (U+FEFF; Windows editors write one). Linear in the input: each
 * chunk is scanned once (the unfinished tail is kept as pieces and joined
 * once, when its line ends), so a 40 MiB line costs what 40 lines of 1 MiB
 * do (#12 req 1).
 *
 * @category constructors
 */
export const makeSplitter = (sink: LineSink) => {
  let pieces: Array<string> = []
  let lineNumber = 0
  const emit = (text: string, unterminated: boolean): void => {
    lineNumber++
    const line = lineNumber === 1 ? withoutByteOrderMark(text) : text
    const end = !unterminated && line.charCodeAt(line.length - 1) === 13 ? line.length - 1 : line.length
    sink.line(end === line.length ? line : line.slice(0, end), lineNumber, unterminated)
  }
  return {
    push: (chunk: string): void => {
      let start = 0
      let index = chunk.indexOf("\n")
      while (index !== -1) {
        const piece = chunk.slice(start, index)
        if (pieces.length === 0) emit(piece, false)
        else {
          pieces.push(piece)
          emit(pieces.join(""), false)
          pieces = []
        }
        start = index + 1
        index = chunk.indexOf("\n", start)
      }
      if (start < chunk.length) pieces.push(start === 0 ? chunk : chunk.slice(start))
    },
    end: (): number => {
      if (pieces.length > 0) {
        emit(pieces.join(""), true)
        pieces = []
      }
      sink.end()
      return lineNumber
    }
  }
}

/**
 * Feeds a string to a sink; returns the number of lines.
 *
 * @category constructors
 */
export const fromString = (text: string, sink: LineSink): number => {
  const splitter = makeSplitter(sink)
  splitter.push(text)
  return splitter.end()
}

/**
 * Streams a file to a sink; resolves to `{ lines, bytes }`.
 *
 * @category constructors
 */
export const fromFile = async (
  path: string,
  sink: LineSink,
  options: { readonly totalBytes: number; readonly onProgress?: OnProgress | undefined }
): Promise<{ lines: number; bytes: number }> => {
  const splitter = makeSplitter(sink)
  const decoder = new StringDecoder("utf8")
  let bytes = 0
  const stream = createReadStream(path, { highWaterMark: CHUNK_BYTES })
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    bytes += chunk.length
    splitter.push(decoder.write(chunk))
    await options.onProgress?.(bytes, options.totalBytes)
  }
  const tail = decoder.end()
  if (tail.length > 0) splitter.push(tail)
  return { lines: splitter.end(), bytes }
}

/**
 * Reads the first `maxBytes` of a file (for detection).
 *
 * @category constructors
 */
export const head = (path: string, maxBytes = 64 * 1024): Buffer => {
  const fd = openSync(path, "r")
  try {
    const buffer = Buffer.alloc(maxBytes)
    const read = readSync(fd, buffer, 0, maxBytes, 0)
    return buffer.subarray(0, read)
  } finally {
    closeSync(fd)
  }
}

/**
 * Why a buffer looks binary, or `undefined` when it looks like text: a NUL
 * byte, or more than 1% invalid UTF-8 / control characters in the sample.
 * (A truncated multi-byte character at the very end of the sample is fine.)
 *
 * @category guards
 */
export const binaryReason = (sample: Buffer): string | undefined => {
  const nul = sample.indexOf(0)
  if (nul !== -1) return `NUL byte at offset ${nul}`
  const text = new StringDecoder("utf8").write(sample)
  let bad = 0
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i)
    if (code === 0xfffd || (code < 32 && code !== 9 && code !== 10 && code !== 13 && code !== 12 && code !== 27)) bad++
  }
  return text.length > 0 && bad / text.length > 0.01
    ? `${bad} of ${text.length} sampled characters are invalid UTF-8 or control characters`
    : undefined
}
