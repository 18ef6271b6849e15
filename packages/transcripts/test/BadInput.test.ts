import { mkdtempSync, readFileSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { Errors } from "@context-engine/core"
import { transcript } from "@context-engine/core/test-support"
import { Import, ImportResult } from "@context-engine/transcripts"
import { Effect, Exit } from "effect"
import * as fc from "fast-check"
import { describe, expect, it } from "vitest"

const dir = mkdtempSync(join(tmpdir(), "ce-import-"))
let counter = 0
/** Writes content to a temp file with a misleading extension (detection must not use it). */
const file = (content: string | Buffer, extension = ".txt") => {
  const path = join(dir, `input-${counter++}${extension}`)
  writeFileSync(path, content)
  return path
}

const failure = async (effect: Effect.Effect<unknown, Import.ImportError>) => {
  const exit = await Effect.runPromiseExit(effect)
  if (Exit.isSuccess(exit)) throw new Error("expected a failure")
  const reason = exit.cause.reasons.find((r) => r._tag === "Fail")
  return (reason as { error: Import.ImportError }).error
}

const piLines = [
  JSON.stringify({ type: "session", id: "s", timestamp: "2025-01-01T00:00:00.000Z", cwd: "/" }),
  JSON.stringify({ type: "message", timestamp: "2025-01-01T00:00:01.000Z", message: { role: "user", content: "hi" } }),
  '{"type":"message","message":{"role":"assistant", BROKEN',
  JSON.stringify({
    type: "message",
    timestamp: "2025-01-01T00:00:02.000Z",
    message: { role: "assistant", content: [{ type: "text", text: "hello" }] }
  }),
  JSON.stringify({ type: "future_entry_kind", timestamp: "2025-01-01T00:00:03.000Z", payload: 1 }),
  JSON.stringify({ type: "message", message: { role: "wizard", content: "?" } })
]

describe("bad input", () => {
  it("lenient (default): skips a malformed line, reports its line number and reason, imports the rest", async () => {
    const result = await Import.importFilePromise(file(`${piLines.join("\n")}\n`))
    expect(result.format).toBe("pi")
    const skipped = result.issues.filter((issue) => issue.action === "skipped")
    expect(skipped.map((issue) => issue.line)).toEqual([3, 6])
    expect(skipped[0]!.reason).toMatch(/invalid JSON/)
    expect(skipped[1]!.reason).toMatch(/unknown message role "wizard"/)
    expect(result.transcript.entries.filter((entry) => entry.kind === "message")).toHaveLength(2)
  })

  it("still detects a JSONL file whose first line is corrupt, and reports that line", async () => {
    const result = await Import.importFilePromise(file(`{"type":"sess\n${piLines.slice(1, 2).join("\n")}\n`))
    expect(result.format).toBe("pi")
    expect(result.issues.map((issue) => issue.line)).toEqual([1])
    expect(result.transcript.entries).toHaveLength(1)
  })

  it("keeps an unknown record type as an event and says so", async () => {
    const result = await Import.importFilePromise(file(`${piLines.join("\n")}\n`))
    const kept = result.issues.filter((issue) => issue.action === "kept-as-event")
    expect(kept).toEqual([{ line: 5, action: "kept-as-event", reason: 'unknown pi entry type "future_entry_kind"' }])
    const event = result.transcript.entries.find((entry) => entry.kind === "event" && entry.event.name === "pi.unknown")
    expect(event).toBeDefined()
  })

  it("strict: the first malformed line fails with TranscriptCorrupt naming the line", async () => {
    const error = await failure(Import.importFile(file(`${piLines.join("\n")}\n`), { strict: true }))
    expect(error).toBeInstanceOf(Errors.TranscriptCorrupt)
    expect((error as Errors.TranscriptCorrupt).line).toBe(3)
    expect(error.message).toMatch(/line 3/)
  })

  it("reports a truncated final line (no newline) as truncated and keeps everything before it", async () => {
    const text = `${piLines.slice(0, 2).join("\n")}\n{"type":"message","message":{"role":"assi`
    const result = await Import.importFilePromise(file(text))
    expect(result.issues).toEqual([
      { line: 3, action: "skipped", reason: expect.stringMatching(/^truncated final line/) }
    ])
    expect(result.transcript.entries).toHaveLength(2)
    const strict = await failure(Import.importFile(file(text), { strict: true }))
    expect((strict as Errors.TranscriptCorrupt).reason).toMatch(/truncated final line/)
  })

  it("fails an empty or whitespace-only file with a typed error; with an explicit format, lenient mode returns an empty transcript", async () => {
    for (const content of ["", "\n\n  \n"]) {
      const error = await failure(Import.importFile(file(content)))
      expect(error).toBeInstanceOf(Errors.TranscriptCorrupt)
      expect(error.message).toMatch(/empty/)
    }
    const result = await Import.importFilePromise(file(""), { format: "pi" })
    expect(result.transcript.entries).toEqual([])
    expect(result.issues[0]!.reason).toMatch(/empty/)
    expect(await failure(Import.importFile(file(""), { format: "pi", strict: true }))).toBeInstanceOf(
      Errors.TranscriptCorrupt
    )
  })

  it("fails a binary file with TranscriptCorrupt, in both modes", async () => {
    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52])
    for (const strict of [false, true]) {
      const error = await failure(Import.importFile(file(png, ".jsonl"), { strict }))
      expect(error).toBeInstanceOf(Errors.TranscriptCorrupt)
      expect(error.message).toMatch(/binary file/)
    }
  })

  it("lists the formats it tried when nothing matches", async () => {
    const error = await failure(Import.importFile(file("just some notes\nnothing to see\n", ".jsonl")))
    expect(error).toBeInstanceOf(ImportResult.FormatNotDetected)
    for (const format of ImportResult.formats) expect(error.message).toContain(format)
  })

  it("skips a ModelMessage that does not decode, naming the bad path; strict fails without a line number", async () => {
    const document = [
      { role: "user", content: "hi" },
      { role: "assistant", content: [{ type: "text", text: 42 }] }
    ]
    const result = Effect.runSync(Import.importValue(document, { format: "model-messages" }))
    expect(result.transcript.entries).toHaveLength(1)
    expect(result.issues).toEqual([
      { line: 0, action: "skipped", reason: expect.stringMatching(/^messages\[1\]: Invalid message at content/) }
    ])
    const error = await failure(Import.importValue(document, { format: "model-messages", strict: true }))
    expect(error).toBeInstanceOf(Errors.TranscriptCorrupt)
    expect((error as Errors.TranscriptCorrupt).line).toBeUndefined()
  })

  it("reports the line of a malformed JSON document", async () => {
    const error = await failure(Import.importFile(file('{\n  "messages": [\n    {"role": "user",, }\n  ]\n}\n')))
    expect(error).toBeInstanceOf(Errors.TranscriptCorrupt)
    expect((error as Errors.TranscriptCorrupt).line).toBe(3)
  })

  it("numbers the last line of a JSON document that ends too early, with or without a final newline", async () => {
    const broken = '{"messages": [{"role": "user", "content": "hi"}'
    for (const content of [broken, `${broken}\n`, `${broken}\n\n  \n`]) {
      const error = await failure(Import.importFile(file(content, ".json")))
      expect(error).toBeInstanceOf(Errors.TranscriptCorrupt)
      expect((error as Errors.TranscriptCorrupt).line).toBe(1)
      expect(error.message).toMatch(/line 1 is corrupt: .*ends before the JSON is complete/)
      expect(error.message).not.toMatch(/line 2/)
    }
    const twoLines = await failure(Import.importFile(file('{"messages": [\n  {"role": "user",, }]}\n', ".json")))
    expect((twoLines as Errors.TranscriptCorrupt).line).toBe(2)
    expect(twoLines.message).toMatch(/at column 19/)
  })

  it("a missing file or a directory fails with TranscriptUnreadable saying so, not with 'corrupt'", async () => {
    const missing = await failure(Import.importFile(join(dir, "no-such-file.jsonl")))
    expect(missing).toBeInstanceOf(ImportResult.TranscriptUnreadable)
    expect((missing as ImportResult.TranscriptUnreadable).problem).toBe("not-found")
    expect(missing.message).toBe(`Transcript file ${join(dir, "no-such-file.jsonl")} not found`)
    const directory = await failure(Import.importFile(dir))
    expect(directory).toBeInstanceOf(ImportResult.TranscriptUnreadable)
    expect((directory as ImportResult.TranscriptUnreadable).problem).toBe("is-a-directory")
    expect(directory.message).toBe(`${dir} is a directory, not a transcript file`)
    for (const error of [missing, directory]) expect(error.message).not.toMatch(/corrupt/)
  })

  it("a forced format that imports nothing from a non-empty file fails with FormatMismatch naming the format and the first skip", async () => {
    // content auto-detection cannot place: the forced format stands and is read, and fails when it reads nothing
    const notPi = file("not json\n{ nor this\n", ".jsonl")
    const error = await failure(Import.importFile(notPi, { format: "pi" }))
    expect(error).toBeInstanceOf(ImportResult.FormatMismatch)
    const mismatch = error as ImportResult.FormatMismatch
    expect(mismatch.format).toBe("pi")
    expect(mismatch.firstIssue).toEqual({ line: 1, reason: expect.any(String) })
    expect(error.message).toContain("does not read as pi: --format pi imported nothing from 2 line(s) (line 1: ")
    const text = await failure(Import.importText("not json\nstill not\n", { format: "claude-code" }))
    expect(text).toBeInstanceOf(ImportResult.FormatMismatch)
    expect((await Import.importFilePromise(file(`${piLines.slice(0, 2).join("\n")}\n`), { format: "pi" })).format).toBe(
      "pi"
    )
  })

  it("a forced format whose markers the content lacks, while auto-detection finds another, is FormatMismatch in both modes", async () => {
    const swe = transcript("swe-agent/pydicom__pydicom-1458.traj")
    const piFile = transcript("pi/before-compaction.jsonl")
    const cases = [
      { path: piFile, format: "aider", detected: "pi" },
      { path: piFile, format: "claude-code", detected: "pi" },
      { path: piFile, format: "openai-chat", detected: "pi" },
      { path: swe, format: "pi", detected: "swe-agent" },
      { path: swe, format: "aider", detected: "swe-agent" },
      { path: swe, format: "anthropic-messages", detected: "swe-agent" }
    ] as const
    for (const { path, format, detected } of cases)
      for (const strict of [false, true]) {
        const error = await failure(Import.importFile(path, { format, strict }))
        expect(error).toBeInstanceOf(ImportResult.FormatMismatch)
        expect({ format, strict, detected: (error as ImportResult.FormatMismatch).detected }).toEqual({
          format,
          strict,
          detected
        })
        expect(error.message).toContain(`does not look like ${format}: it has none of ${format}'s markers (`)
        expect(error.message).toContain(`auto-detection says it looks like ${detected}. Pass --format ${detected}`)
      }
    const text = await failure(Import.importText(readFileSync(piFile, "utf8"), { format: "aider" }))
    expect((text as ImportResult.FormatMismatch).detected).toBe("pi")
    // auto-detection, and forcing the detected format, read both files as before
    expect((await Import.importFilePromise(piFile)).format).toBe("pi")
    expect((await Import.importFilePromise(swe, { format: "swe-agent" })).format).toBe("swe-agent")
    // text no format's markers match: a forced format still reads it (what FormatNotDetected advises)
    const notes = await Import.importFilePromise(file("# Notes\n\nsome text\n", ".md"), { format: "aider" })
    expect(notes.format).toBe("aider")
    expect(notes.transcript.entries.length).toBeGreaterThan(0)
  })

  it("never throws an untyped error on arbitrary bytes, and lenient imports never fail on text that detects", async () => {
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 400 }), async (bytes) => {
        const exit = await Effect.runPromiseExit(Import.importFile(file(Buffer.from(bytes))))
        if (Exit.isFailure(exit)) {
          const reason = exit.cause.reasons.find((r) => r._tag === "Fail") as { error: unknown } | undefined
          expect(reason).toBeDefined()
          expect(
            reason!.error instanceof Errors.TranscriptCorrupt ||
              reason!.error instanceof ImportResult.FormatNotDetected ||
              reason!.error instanceof ImportResult.FormatMismatch ||
              reason!.error instanceof ImportResult.TranscriptUnreadable
          ).toBe(true)
        }
      }),
      { numRuns: 60 }
    )
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.string(), fc.constantFrom(...piLines)), { maxLength: 12 }),
        async (lines) => {
          const result = await Effect.runPromiseExit(
            Import.importText([piLines[0], ...lines].join("\n"), { format: "pi" })
          )
          expect(Exit.isSuccess(result)).toBe(true)
        }
      ),
      { numRuns: 60 }
    )
  })

  it("a UTF-8 byte order mark before the first line is not part of it (JSONL and whole-JSON files)", async () => {
    // QA session 4: a BOM-prefixed pi session skipped its header line ("invalid JSON: Unexpected token '\uFEFF'")
    // and a BOM-prefixed AI SDK messages file failed as "it ends before the JSON is complete (truncated?)".
    const jsonl = `${[piLines[0], piLines[1], piLines[3]].join("\n")}\n`
    const messages = JSON.stringify([
      { role: "user", content: "hi" },
      { role: "assistant", content: "hello" }
    ])
    for (const [text, extension] of [
      [jsonl, ".jsonl"],
      [messages, ".json"]
    ] as const) {
      const plain = await Import.importFilePromise(file(text, extension))
      const withBom = await Import.importFilePromise(
        file(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), extension)
      )
      expect(withBom.issues).toEqual([])
      expect(withBom.format).toBe(plain.format)
      expect(withBom.transcript.entries).toEqual(plain.transcript.entries)
      expect(withBom.transcript.entries.length).toBeGreaterThan(0)
    }
  })
})
