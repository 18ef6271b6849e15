import { IdentifierExtraction, type Message } from "@context-engine/core"
import fc from "fast-check"
import { describe, expect, it } from "vitest"

describe("IdentifierExtraction.fromText", () => {
  const text = [
    "Edit /work/app/src/main.ts and src/tui/renderer.ts, then package.json.",
    "See https://github.com/acme/app/pull/12. Commit 3f9a2c1b is the base.",
    "Run `pnpm vitest run` against localhost:3000 (port 8080).",
    "TypeError: Cannot read properties of undefined",
    "Session 123e4567-e89b-12d3-a456-426614174000 in #42"
  ].join("\n")
  const ids = IdentifierExtraction.fromText(text)

  it("finds each category", () => {
    expect(ids.paths).toEqual(expect.arrayContaining(["/work/app/src/main.ts", "src/tui/renderer.ts", "package.json"]))
    expect(ids.urls).toEqual(["https://github.com/acme/app/pull/12"])
    expect(ids.hashes).toEqual(["3f9a2c1b"])
    expect(ids.ports).toEqual(expect.arrayContaining(["localhost:3000", "8080"]))
    expect(ids.commands).toEqual(["pnpm vitest run"])
    expect(ids.errors).toEqual(["TypeError: Cannot read properties of undefined"])
    expect(ids.ids).toEqual(expect.arrayContaining(["123e4567-e89b-12d3-a456-426614174000", "#42"]))
  })

  it("does not read a URL's path as a file path, nor a UUID as a hash", () => {
    expect(ids.paths.some((path) => path.includes("github.com"))).toBe(false)
    expect(ids.hashes.some((hash) => "123e4567-e89b-12d3-a456-426614174000".includes(hash))).toBe(false)
  })

  it("property: every identifier is a verbatim substring of its source", () => {
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom(...text.split(/(\s+)/), "a/b.ts", "x", ":", "\n"), { maxLength: 60 }),
        (words) => {
          const source = words.join("")
          for (const { value } of IdentifierExtraction.flatten(IdentifierExtraction.fromText(source)))
            expect(source).toContain(value)
        }
      )
    )
  })
})

describe("IdentifierExtraction.fromMessages", () => {
  it("takes commands and paths from tool calls, only errors from tool results", () => {
    const messages: Array<Message.Message> = [
      {
        role: "assistant",
        content: [{ type: "tool-call", toolCallId: "c1", toolName: "bash", input: { command: "git log -1\nexit" } }]
      },
      {
        role: "tool",
        content: [
          {
            type: "tool-result",
            toolCallId: "c1",
            toolName: "bash",
            output: { type: "text", value: "see /etc/hosts\nfatal: not a git repository" }
          }
        ]
      }
    ]
    const ids = IdentifierExtraction.fromMessages(messages)
    expect(ids.commands).toEqual(["git log -1"])
    expect(ids.errors).toEqual(["fatal: not a git repository"])
    expect(ids.paths).not.toContain("/etc/hosts")
  })

  it("caps error strings per message", () => {
    const log = Array.from({ length: 50 }, (_, index) => `ERROR job ${index} failed`).join("\n")
    const ids = IdentifierExtraction.fromMessages([
      {
        role: "tool",
        content: [{ type: "tool-result", toolCallId: "c", toolName: "bash", output: { type: "text", value: log } }]
      }
    ])
    expect(ids.errors.length).toBe(IdentifierExtraction.MAX_ERRORS_PER_MESSAGE)
  })
})
