import { spawnSync } from "node:child_process"
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, describe, expect, it } from "vitest"
import * as FileLock from "../src/FileLock.ts"

const directory = mkdtempSync(join(tmpdir(), "file-lock-"))
afterAll(() => rmSync(directory, { recursive: true, force: true }))

describe("FileLock.withLock", () => {
  it("runs holders one at a time and removes the lock afterwards", async () => {
    const path = join(directory, "serial.lock")
    const events: Array<string> = []
    let release: () => void = () => {}
    const held = new Promise<void>((resolve) => {
      release = resolve
    })
    const first = FileLock.withLock(path, async () => {
      events.push("first:start")
      await held
      events.push("first:end")
    })
    // Start the second holder only once the first really holds the lock (acquiring is asynchronous I/O).
    while (!events.includes("first:start")) await new Promise((resolve) => setTimeout(resolve, 1))
    const second = FileLock.withLock(path, async () => {
      events.push("second")
    })
    await new Promise((resolve) => setTimeout(resolve, 50))
    expect(events).toEqual(["first:start"])
    release()
    await Promise.all([first, second])
    expect(events).toEqual(["first:start", "first:end", "second"])
    expect(existsSync(path)).toBe(false)
  })

  it("breaks a lock left by a process that no longer exists", async () => {
    const path = join(directory, "stale.lock")
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid
    writeFileSync(path, String(dead))
    expect(await FileLock.withLock(path, async () => "acquired", { timeoutMs: 5_000 })).toBe("acquired")
    expect(existsSync(path)).toBe(false)
  })

  it("sweeps files left by processes killed while locking, and keeps those of live ones", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid
    const sweepDirectory = mkdtempSync(join(directory, "sweep-"))
    writeFileSync(join(sweepDirectory, `s.jsonl.lock.${dead}-0a1b2c3d4e5f`), String(dead))
    writeFileSync(join(sweepDirectory, `s.jsonl.lock.stale-${dead}-0a1b2c3d`), "1")
    writeFileSync(join(sweepDirectory, `s.jsonl.lock.${process.pid}-0a1b2c3d4e5f`), String(process.pid))
    writeFileSync(join(sweepDirectory, "s.jsonl"), "")
    expect(await FileLock.sweep(sweepDirectory, ".jsonl.lock")).toBe(2)
    expect(readdirSync(sweepDirectory).sort()).toEqual(["s.jsonl", `s.jsonl.lock.${process.pid}-0a1b2c3d4e5f`])
  })

  it("sweeps only the exact leftover names it creates: not other files, not symlinks", async () => {
    const dead = spawnSync(process.execPath, ["-e", "process.exit(0)"]).pid
    const sweepDirectory = mkdtempSync(join(directory, "sweep-foreign-"))
    const outside = join(directory, "outside-target")
    writeFileSync(outside, "keep")
    const foreign = [
      "backup.lock.2024-01",
      `notes.lock.${dead}-0a1b2c`,
      `s.jsonl.lock.${dead}-0A1B2C3D4E5F`,
      `s.jsonl.lock.${dead}-0a1b2c3d4e5f.bak`,
      `s.txt.lock.${dead}-0a1b2c3d4e5f`
    ]
    for (const name of foreign) writeFileSync(join(sweepDirectory, name), String(dead))
    symlinkSync(outside, join(sweepDirectory, `s.jsonl.lock.${dead}-ffffffffffff`))
    expect(await FileLock.sweep(sweepDirectory, ".jsonl.lock")).toBe(0)
    expect(readdirSync(sweepDirectory).sort()).toEqual([...foreign, `s.jsonl.lock.${dead}-ffffffffffff`].sort())
    expect(readFileSync(outside, "utf8")).toBe("keep")
  })

  it("refuses a symlink planted at the lock path instead of reading through it", async () => {
    const outside = join(directory, "outside-lock-target")
    writeFileSync(outside, "1")
    const path = join(directory, "planted.lock")
    symlinkSync(outside, path)
    await expect(FileLock.withLock(path, async () => "acquired", { timeoutMs: 500 })).rejects.toThrow(/ELOOP|symbolic/)
    expect(readFileSync(outside, "utf8")).toBe("1")
  })

  it("gives up after timeoutMs while a live process holds the lock", async () => {
    const path = join(directory, "held.lock")
    writeFileSync(path, String(process.ppid))
    await expect(FileLock.withLock(path, async () => "never", { timeoutMs: 100 })).rejects.toThrow(/not acquired/)
    expect(existsSync(path)).toBe(true)
  })
})
