import * as fs from "node:fs"
import * as path from "node:path"
import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { Entry } from "../src/index.ts"

const header = { id: "m1", parentId: null, timestamp: "2026-01-01T00:00:00.000Z" }

describe("Entry.make", () => {
  it("writes the current schema version and keeps the transcript's key order", () => {
    const entry = Entry.make(header, { kind: "message", message: { role: "user", content: "hi" } })
    expect(entry.schemaVersion).toBe(1)
    expect(Object.keys(entry)).toEqual(["id", "parentId", "timestamp", "schemaVersion", "kind", "message"])
    expect(Schema.decodeUnknownSync(Entry.Entry)(entry)).toEqual(entry)
  })

  it("writes meta only when it has fields", () => {
    const body = { kind: "event", event: { name: "x" } } as const
    expect("meta" in Entry.make({ ...header, meta: {} }, body)).toBe(false)
    const withMeta = Entry.make({ ...header, meta: { source: "pi" } }, body)
    expect(Object.keys(withMeta)).toEqual(["id", "parentId", "timestamp", "schemaVersion", "meta", "kind", "event"])
  })
})

describe("Entry.chain", () => {
  it("parents the first entry on the given id and each next one on the previous", () => {
    const entries = Entry.chain("m0", header.timestamp, [
      { id: "e1", body: { kind: "event", event: { name: "a" } } },
      { id: "e2", body: { kind: "event", event: { name: "b" } } }
    ])
    expect(entries.map((entry) => [entry.id, entry.parentId, entry.timestamp])).toEqual([
      ["e1", "m0", header.timestamp],
      ["e2", "e1", header.timestamp]
    ])
    expect(Entry.chain(null, header.timestamp, [])).toEqual([])
  })
})

describe("Entry.withParent", () => {
  it("re-links a copy and keeps everything else, key order included; the given entry is not modified", () => {
    const entry = Object.freeze(
      Entry.make({ ...header, id: "m2", meta: { source: "pi" } }, { kind: "event", event: { name: "x" } })
    )
    const linked = Entry.withParent(entry, "m1")
    expect(linked.parentId).toBe("m1")
    expect(entry.parentId).toBeNull()
    expect({ ...linked, parentId: null }).toEqual(entry)
    expect(Object.keys(linked)).toEqual(Object.keys(entry))
    expect(Entry.withParent(linked, null).parentId).toBeNull()
    expect(Entry.withParent(linked, "m1")).toBe(linked)
  })
})

describe("Entry.freshId", () => {
  const event = (id: string) =>
    Entry.make({ id, parentId: null, timestamp: "2026-01-01T00:00:00.000Z" }, { kind: "event", event: { name: "x" } })

  it("keeps a free id and suffixes a taken one with the first free ~n", () => {
    const entries = [event("checkpoint:1:m9"), event("checkpoint:1:m9~2"), event("memory:1:m9:0")]
    expect(Entry.freshId("checkpoint:2:m9", entries)).toBe("checkpoint:2:m9")
    expect(Entry.freshId("checkpoint:1:m9", entries)).toBe("checkpoint:1:m9~3")
    expect(Entry.freshId("memory:1:m9:0", entries)).toBe("memory:1:m9:0~2")
    expect(Entry.freshId("memory:1:m9:0", [])).toBe("memory:1:m9:0")
  })
})

describe("schemaVersion is written in one place", () => {
  it("no source file but Entry.ts writes an entry's schemaVersion", () => {
    const root = path.resolve(import.meta.dirname, "../../..")
    // Other formats with their own version field: the JSONL batch frame (written by TranscriptLog from
    // Entry.CURRENT_SCHEMA_VERSION) and the CLI's inspect report.
    const ownFormats = new Set(["packages/core/src/TranscriptLog.ts", "packages/cli/src/InspectReport.ts"])
    const writers: Array<string> = []
    const walk = (dir: string) => {
      for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
        const full = path.join(dir, entry.name)
        if (entry.isDirectory()) walk(full)
        else if (entry.name.endsWith(".ts")) {
          const relative = path.relative(root, full)
          if (relative === "packages/core/src/Entry.ts" || ownFormats.has(relative)) continue
          if (
            /schemaVersion\s*:\s*(1\b|CURRENT_SCHEMA_VERSION|Entry\.CURRENT_SCHEMA_VERSION)/.test(
              fs.readFileSync(full, "utf8")
            )
          )
            writers.push(relative)
        }
      }
    }
    for (const pkg of fs.readdirSync(path.join(root, "packages"))) {
      const src = path.join(root, "packages", pkg, "src")
      if (fs.existsSync(src)) walk(src)
    }
    expect(writers).toEqual([])
  })
})

describe("an entry is re-linked in one place", () => {
  it("no source file but Entry.ts copies an entry with a new parentId by spreading it", () => {
    const root = path.resolve(import.meta.dirname, "../../..")
    const spreads: Array<string> = []
    for (const pkg of fs.readdirSync(path.join(root, "packages"))) {
      const src = path.join(root, "packages", pkg, "src")
      if (!fs.existsSync(src)) continue
      for (const file of fs.readdirSync(src, { recursive: true, encoding: "utf8" })) {
        const relative = path.join("packages", pkg, "src", file)
        if (!file.endsWith(".ts") || relative === "packages/core/src/Entry.ts") continue
        if (/\{\s*\.\.\.\w+,\s*parentId\s*:/.test(fs.readFileSync(path.join(src, file), "utf8"))) spreads.push(relative)
      }
    }
    expect(spreads).toEqual([])
  })
})
