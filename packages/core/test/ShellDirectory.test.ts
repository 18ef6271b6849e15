/**
 * ShellDirectory: where a shell call ran — the `cd` steps of a line, and the directory a harness's shell starts a
 * call in after earlier calls (kept by Claude Code's `Bash`, fresh for Gemini CLI's and Codex's shell tools, in
 * doubt for a tool we cannot tell).
 */
import { ShellDirectory } from "@context-engine/core"
import { describe, expect, it } from "vitest"

describe("ShellDirectory.after: where a line leaves its shell", () => {
  it("follows cd steps, relative, absolute and back up", () => {
    expect(ShellDirectory.after("cd packages/core", "")).toBe("packages/core")
    expect(ShellDirectory.after("cd ../..", "packages/core")).toBe("")
    expect(ShellDirectory.after("cd /repo/pkg && npm test", "packages/core")).toBe("/repo/pkg")
    expect(ShellDirectory.after("cd types", "/repo/app")).toBe("/repo/app/types")
    expect(ShellDirectory.after("cd ./src/ && ls", "")).toBe("src")
    expect(ShellDirectory.after("npm test", "pkg")).toBe("pkg")
  })

  it("a pipeline's stages and a ( … ) group run in subshells; a cd it cannot follow gives null", () => {
    expect(ShellDirectory.after("(cd pkg && make)", "")).toBe("")
    expect(ShellDirectory.after("ls | cd pkg", "")).toBe("")
    expect(ShellDirectory.after("cd -", "pkg")).toBe(null)
    expect(ShellDirectory.after('cd "$PKG" && npm test', "")).toBe(null)
    expect(ShellDirectory.after("cd", "pkg")).toBe(null)
  })
})

describe("ShellDirectory.tracker: the directory each call starts in", () => {
  const ok = { output: "", failed: false }

  it("a kept shell (Claude Code's Bash) carries a cd to the next call", () => {
    const shells = ShellDirectory.tracker()
    expect(shells.start("Bash", "kept", "cd packages/core", ok)).toBe("")
    expect(shells.start("Bash", "kept", "npm test", ok)).toBe("packages/core")
    expect(shells.start("Bash", "kept", "cd ../..", ok)).toBe("packages/core")
    expect(shells.start("Bash", "kept", "npm test", ok)).toBe("")
  })

  it("Claude Code's reset notice puts the shell back; a line that opens with an absolute cd runs there from anywhere", () => {
    const shells = ShellDirectory.tracker()
    expect(shells.start("Bash", "kept", "cd /tmp/x", { output: "Shell cwd was reset to /repo", failed: false })).toBe(
      ""
    )
    expect(shells.start("Bash", "kept", "npm test", ok)).toBe("/repo")
    expect(shells.start("Bash", "kept", "cd /repo/app && npx tsc", ok)).toBe("")
    expect(shells.start("Bash", "kept", "npm run build", ok)).toBe("/repo/app")
  })

  it("a fresh shell (Gemini CLI, Codex) starts every call where the session started", () => {
    const shells = ShellDirectory.tracker()
    shells.start("run_shell_command", "fresh", "cd packages/core", ok)
    expect(shells.start("run_shell_command", "fresh", "npm test", ok)).toBe("")
  })

  it("an unknown harness: after a call that moved its shell, the next call's directory is in doubt", () => {
    const shells = ShellDirectory.tracker()
    shells.start("bash", "unknown", "cd packages/core", ok)
    const first = shells.start("bash", "unknown", "npm test", ok)
    shells.start("bash", "unknown", "cd ../..", ok)
    const second = shells.start("bash", "unknown", "npm test", ok)
    expect([first.startsWith(ShellDirectory.UNKNOWN_PREFIX), second.startsWith(ShellDirectory.UNKNOWN_PREFIX)]).toEqual(
      [true, true]
    )
    expect(first).not.toBe(second)
  })

  it("an unknown harness: a line opening with the same relative cd as the call that moved the shell re-runs from its start", () => {
    const shells = ShellDirectory.tracker()
    expect(shells.start("bash", "unknown", "cd pkg && npm run check | tail -5", { output: "", failed: true })).toBe("")
    expect(shells.start("bash", "unknown", "cd pkg && npm run check | tail -3", ok)).toBe("")
  })

  it("a kept shell whose line failed at its cd: the next call's directory is in doubt; failed after it: moved", () => {
    const shells = ShellDirectory.tracker()
    shells.start("Bash", "kept", "cd pkg && npm test", { output: "cd: pkg: No such file or directory", failed: true })
    expect(shells.start("Bash", "kept", "npm test", ok).startsWith(ShellDirectory.UNKNOWN_PREFIX)).toBe(true)
    const other = ShellDirectory.tracker()
    other.start("Bash", "kept", "cd pkg && npm test", { output: "FAIL src/a.test.ts", failed: true })
    expect(other.start("Bash", "kept", "npm test", ok)).toBe("pkg")
  })

  it("harnesses by their shell tool's name", () => {
    expect(["Bash", "run_shell_command", "shell", "bash", "terminal"].map(ShellDirectory.carryOf)).toEqual([
      "kept",
      "fresh",
      "fresh",
      "unknown",
      "unknown"
    ])
  })
})
