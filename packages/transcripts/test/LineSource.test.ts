import { mkdtempSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { LineSource } from "@context-engine/transcripts"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const collect = () => {
  const lines: Array<[string, number, boolean]> = []
  const sink: LineSource.LineSink = {
    line: (text, n, unterminated) => lines.push([text, n, unterminated]),
    end: () => {}
  }
  return { lines, sink }
}

/** What the lines of `text` are, by String.split: CRLF is one break; a final empty piece is no line. */
const expected = (text: string): Array<[string, number, boolean]> => {
  const pieces = text.split("\n")
  const last = pieces.pop()!
  const lines = pieces.map((piece, index): [string, number, boolean] => [piece.replace(/\r$/, ""), index + 1, false])
  if (last.length > 0) lines.push([last, lines.length + 1, true])
  return lines
}

describe("LineSource", () => {
  it("yields the same numbered lines however the text is split into chunks", () => {
    fc.assert(
      fc.property(
        fc.string({ unit: fc.constantFrom("a", "é", "😀", "\n", "\r\n", "{", " ") }),
        fc.array(fc.nat(), { maxLength: 8 }),
        (text, cuts) => {
          const { lines, sink } = collect()
          const splitter = LineSource.makeSplitter(sink)
          const points = [...new Set(cuts.map((cut) => cut % (text.length + 1)))].sort((a, b) => a - b)
          let start = 0
          for (const point of points) {
            splitter.push(text.slice(start, point))
            start = point
          }
          splitter.push(text.slice(start))
          expect(splitter.end()).toBe(expected(text).length)
          expect(lines).toEqual(expected(text))
        }
      ),
      { numRuns: 300 }
    )
  })

  it("streams a file with multi-byte characters across chunk boundaries intact", async () => {
    const dir = mkdtempSync(join(tmpdir(), "ce-lines-"))
    const path = join(dir, "big.txt")
    const line = `${"é😀".repeat(100_000)}x`
    writeFileSync(path, `${line}\n${line}`)
    const { lines, sink } = collect()
    const progress: Array<number> = []
    const result = await LineSource.fromFile(path, sink, { totalBytes: 0, onProgress: (bytes) => progress.push(bytes) })
    expect(result.lines).toBe(2)
    expect(lines.map(([text]) => text === line)).toEqual([true, true])
    expect(lines[1]![2]).toBe(true)
    expect(progress.length).toBeGreaterThan(1)
    expect(progress.at(-1)).toBe(result.bytes)
  })

  it("tells binary content from text", () => {
    expect(LineSource.binaryReason(Buffer.from("plain text\nwith ümlauts 😀\n"))).toBeUndefined()
    expect(LineSource.binaryReason(Buffer.from([0x50, 0x4b, 0x03, 0x04, 0x00, 0x00]))).toMatch(/NUL byte at offset 4/)
    expect(LineSource.binaryReason(Buffer.from(Array.from({ length: 200 }, (_, i) => (i % 2 ? 0xff : 0x41))))).toMatch(
      /invalid UTF-8/
    )
  })
})
