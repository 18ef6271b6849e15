import fc from "fast-check"
import { describe, expect, it } from "vitest"
import * as Checkpoint from "../src/Checkpoint.ts"
import * as CheckpointRenderer from "../src/CheckpointRenderer.ts"

describe("CheckpointRenderer ledger", () => {
  it("renders modified files mixing absolute and relative paths (no common directory), each named in full", () => {
    const artifact = (value: string) => ({ kind: "file", value, status: "modified", entryIds: ["e1"] }) as const
    const content = {
      ...Checkpoint.emptyContent(),
      goal: "Fix the parser",
      artifacts: [artifact("/repo/src/a.ts"), artifact("src/b.ts"), artifact("/repo/src/c.ts")]
    } as Checkpoint.CheckpointContent
    const text = CheckpointRenderer.renderContent(content)
    for (const name of ["a.ts", "src/b.ts", "c.ts"]) expect(text).toContain(name)
  })
})

describe("CheckpointRenderer ledger paths", () => {
  type Status = "read" | "modified" | "created"
  const ledger = (status: Status, paths: ReadonlyArray<string>) =>
    CheckpointRenderer.renderContent({
      ...Checkpoint.emptyContent(),
      goal: "Fix the parser",
      artifacts: paths.map((value, index) => ({ kind: "file", value, status, entryIds: [`e${index}`] }) as const)
    })
  const line = (text: string, label: string) => text.split("\n").find((row) => row.startsWith(`- ${label}`))

  it("shows relative paths read as the agent wrote them, never cut to a common directory it does not state", () => {
    const text = ledger("read", ["packages/api/src/handlers/module1.ts", "packages/api/src/handlers/module2.ts"])
    expect(line(text, "files read")).toBe(
      "- files read (newest): `packages/api/src/handlers/module1.ts`, `packages/api/src/handlers/module2.ts`"
    )
  })

  it("states the directory it shortens absolute paths read to", () => {
    const text = ledger("read", ["/home/u/Developer/App", "/home/u/Developer/App/src", "/home/u/Developer/App/a.md"])
    expect(line(text, "files read")).toBe(
      "- files read (newest, under `/home/u/Developer/`): `App`, `App/src`, `App/a.md`"
    )
  })

  it("never lists a relative path after an absolute base it is not under", () => {
    const text = ledger("created", ["/r/specs/a_spec.py", "/r/specs/b/c_spec.py", "specs/b/fixtures/.gitkeep"])
    expect(line(text, "files created")).toBe(
      "- files created (under `/r/specs/`): `a_spec.py`, `b/c_spec.py`; relative to the working directory: `specs/b/fixtures/.gitkeep`"
    )
  })

  it("never shortens a path to nothing: a directory beside its files is named under its parent", () => {
    const text = ledger("read", ["/repo/src/", "/repo/src/a.ts"])
    expect(line(text, "files read")).toBe("- files read (newest, under `/repo/`): `src/`, `src/a.ts`")
  })

  /** Each shown path joined to the base its line states (none for a relative path), and the count of older ones. */
  const shownPaths = (row: string) => {
    const [, notes = "", list = ""] = /^- files \w+(?: \(([^)]*)\))?: (.*)$/.exec(row) ?? []
    const base = /under `([^`]*)`/.exec(notes)?.[1] ?? ""
    const [under = "", relative = ""] = list
      .replace(/ \(\+\d+ older in the ledger\)$/, "")
      .split("; relative to the working directory: ")
    const spans = (part: string) => [...part.matchAll(/`([^`]*)`/g)].map((match) => match[1]!)
    return {
      paths: [...spans(under).map((path) => base + path), ...spans(relative)],
      older: Number(/\(\+(\d+) older in the ledger\)$/.exec(list)?.[1] ?? 0)
    }
  }

  it("shows every path so that, joined to the base its line states, it is a path of the ledger", () => {
    const segment = fc.constantFrom("repo", "src", "specs", "a.ts", "b.py", ".gitkeep", "Developer")
    const path = fc
      .tuple(fc.boolean(), fc.array(segment, { minLength: 1, maxLength: 4 }), fc.boolean())
      .map(([absolute, parts, slash]) => `${absolute ? "/" : ""}${parts.join("/")}${slash ? "/" : ""}`)
    const status = fc.constantFrom<Status>("read", "modified", "created")
    fc.assert(
      fc.property(status, fc.uniqueArray(path, { minLength: 1, maxLength: 12 }), (kind, paths) => {
        const row = line(ledger(kind, paths), `files ${kind}`)!
        const shown = shownPaths(row)
        for (const shownPath of shown.paths) expect(paths).toContain(shownPath)
        expect(new Set(shown.paths).size + shown.older).toBe(paths.length)
        if (kind !== "read") expect(shown.older).toBe(0)
      })
    )
  })
})

describe("CheckpointRenderer identifiersShown", () => {
  const content = {
    ...Checkpoint.emptyContent(),
    goal: "Fix src/quoted.ts",
    identifiers: {
      ...Checkpoint.emptyContent().identifiers,
      paths: ["src/quoted.ts", "src/a.ts", "src/b.ts", "src/c.ts", "src/d.ts"],
      hashes: ["abc1234"]
    }
  } as Checkpoint.CheckpointContent

  it("shows the first identifiers of a line and counts the rest after it, outside the code spans", () => {
    const text = CheckpointRenderer.renderContent(content, { identifiersShown: 2 })
    // src/quoted.ts is quoted by the Goal: neither listed nor counted.
    expect(text).toContain("- Paths: `src/a.ts`, `src/b.ts`, … 2 more")
    expect(text).toMatch(/^- Hashes: `abc1234`$/m)
  })

  it("shows every identifier by default", () => {
    expect(CheckpointRenderer.renderContent(content)).toContain(
      "- Paths: `src/a.ts`, `src/b.ts`, `src/c.ts`, `src/d.ts`"
    )
  })
})
