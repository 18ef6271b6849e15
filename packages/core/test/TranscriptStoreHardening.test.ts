/**
 * Hardened local files (issue #16 requirement 5): no symlink is followed,
 * files are created 0600 and directories 0700, the directory must belong to
 * this user, opening a store removes only its own leftover lock files of dead
 * owners, and every session id is stored and listed exactly as given or
 * rejected with a typed error.
 */
import { spawnSync } from "node:child_process"
import {
  chownSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync
} from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as JsonlTranscriptStore from "../src/JsonlTranscriptStore.ts"
import * as SqliteTranscriptStore from "../src/SqliteTranscriptStore.ts"
import { conversation } from "./support/compactionFixture.ts"

const root = mkdtempSync(join(tmpdir(), "transcript-hardening-"))
afterAll(() => rmSync(root, { recursive: true, force: true }))
let counter = 0
const fresh = (name: string) => join(root, `${name}-${++counter}`)
const mode = (path: string) => statSync(path).mode & 0o777
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

describe("JSONL store files", () => {
  it("refuses a symlink planted at a session file: nothing is written or read through it", async () => {
    const directory = fresh("symlink")
    const store = JsonlTranscriptStore.open({ directory })
    const outside = join(root, `outside-${counter}.txt`)
    writeFileSync(outside, "not a transcript\n")
    symlinkSync(outside, JsonlTranscriptStore.sessionPath(directory, "planted"))
    await expect(store.append("planted", conversation(1))).rejects.toMatchObject({
      _tag: "TranscriptStoreFailed",
      reason: expect.stringMatching(/ELOOP|symbolic link/)
    })
    await expect(store.load("planted")).rejects.toMatchObject({ _tag: "TranscriptStoreFailed" })
    expect(readFileSync(outside, "utf8")).toBe("not a transcript\n")
    // A dangling link does not create its target either.
    const target = join(root, `dangling-target-${counter}`)
    symlinkSync(target, JsonlTranscriptStore.sessionPath(directory, "dangling"))
    await expect(store.append("dangling", conversation(1))).rejects.toMatchObject({ _tag: "TranscriptStoreFailed" })
    expect(existsSync(target)).toBe(false)
    expect((await store.listSessions()).map((session) => session.sessionId)).toEqual([])
  })

  it("creates directories 0700 and files 0600 unless configured", async () => {
    const directory = join(fresh("modes"), "nested")
    const store = JsonlTranscriptStore.open({ directory })
    await store.append("s", conversation(1))
    expect(mode(directory)).toBe(0o700)
    expect(mode(JsonlTranscriptStore.sessionPath(directory, "s"))).toBe(0o600)
    const shared = fresh("configured")
    const open = JsonlTranscriptStore.open({ directory: shared, fileMode: 0o640, directoryMode: 0o750 })
    await open.append("s", conversation(1))
    expect(mode(shared)).toBe(0o750)
    expect(mode(JsonlTranscriptStore.sessionPath(shared, "s"))).toBe(0o640)
  })

  it.runIf(process.geteuid?.() === 0)("refuses a directory owned by another user", () => {
    const directory = fresh("foreign")
    mkdirSync(directory, { mode: 0o777 })
    chownSync(directory, 65534, 65534)
    expect(() => JsonlTranscriptStore.open({ directory })).toThrow(/owned by uid 65534/)
  })

  it("opening sweeps only its own leftover lock files of dead owners", async () => {
    const directory = fresh("sweep")
    mkdirSync(directory, { mode: 0o700 })
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid
    const own = `s.jsonl.lock.${dead}-0a1b2c3d4e5f`
    const foreign = ["backup.lock.2024-01", `s.jsonl.lock.${dead}-0a1b`, `notes.lock.${dead}-0a1b2c3d4e5f`]
    for (const name of [own, ...foreign]) writeFileSync(join(directory, name), String(dead))
    JsonlTranscriptStore.open({ directory })
    // Opening starts the sweep without awaiting it. Wait for the removal as long as a loaded disk takes (a fixed
    // 50 ms sleep made the test a deadline on a readdir, an lstat and an unlink; 30 s is only a hang guard),
    // then give a foreign file the sweep reads after its own one 50 ms to be (wrongly) removed too.
    await expect.poll(() => existsSync(join(directory, own)), { timeout: 30_000, interval: 5 }).toBe(false)
    await pause(50)
    for (const name of foreign) expect(existsSync(join(directory, name))).toBe(true)
  })
})

/** Ids that break naive encodings: dots, separators, percent signs, case, non-ASCII, controls. */
const trickyIds = [
  ".",
  "..",
  ".hidden",
  "a/b",
  "a\\b",
  "%",
  "%41",
  "A",
  "a",
  "ü",
  "u\u0308",
  "🎉 party",
  " spaced ",
  "line\nbreak",
  "tab\t",
  "CON",
  "x".repeat(60)
]

describe.each([
  ["jsonl", () => JsonlTranscriptStore.open({ directory: fresh("ids") })],
  ["sqlite", () => SqliteTranscriptStore.open({ filename: join(fresh("ids"), "store.db") })]
] as const)("session ids (%s)", (_name, open) => {
  it("stores and lists every valid id exactly as given", async () => {
    const store = open()
    for (const sessionId of trickyIds) await store.append(sessionId, conversation(1))
    const listed = (await store.listSessions()).map((session) => session.sessionId)
    expect([...listed].sort()).toEqual([...trickyIds].sort())
    for (const sessionId of trickyIds) expect((await store.load(sessionId)).entries).toHaveLength(1)
    await store.close()
  })

  it("rejects ids it cannot hold with InvalidInput, before writing anything", async () => {
    const store = open()
    const invalid: ReadonlyArray<[string, RegExp]> = [
      ["", /non-empty/],
      ["lone \uD800 surrogate", /lone surrogate/],
      ["\uDC00", /lone surrogate/],
      ["nul\u0000byte", /U\+0000/],
      ["y".repeat(1025), /at most 1024/]
    ]
    for (const [sessionId, detail] of invalid) {
      await expect(store.append(sessionId, conversation(1))).rejects.toMatchObject({
        _tag: "InvalidInput",
        what: "session id",
        detail: expect.stringMatching(detail)
      })
    }
    expect(await store.listSessions()).toEqual([])
    await store.close()
  })
})

describe("SQLite store files", () => {
  it("creates the database 0600 in a 0700 directory", async () => {
    const directory = join(fresh("sqlite-modes"), "nested")
    const store = SqliteTranscriptStore.open({ filename: join(directory, "store.db") })
    await store.append("s", conversation(1))
    expect(mode(directory)).toBe(0o700)
    expect(mode(join(directory, "store.db"))).toBe(0o600)
    expect(lstatSync(join(directory, "store.db-wal")).mode & 0o077).toBe(0)
    await store.close()
  })

  it("refuses a symlink planted at the database path", () => {
    const directory = fresh("sqlite-symlink")
    mkdirSync(directory, { mode: 0o700 })
    const outside = join(root, `outside-${counter}.db`)
    writeFileSync(outside, "")
    symlinkSync(outside, join(directory, "store.db"))
    expect(() => SqliteTranscriptStore.open({ filename: join(directory, "store.db") })).toThrow(/symbolic link/)
    expect(readFileSync(outside, "utf8")).toBe("")
  })
})

describe("JSONL long ids", () => {
  it("rejects an id whose file name would not fit, with the numbers", async () => {
    const store = JsonlTranscriptStore.open({ directory: fresh("long") })
    await expect(store.append("ü".repeat(40), conversation(1))).rejects.toMatchObject({
      _tag: "InvalidInput",
      detail: "encodes to a file name of 240 bytes; at most 200"
    })
  })
})
