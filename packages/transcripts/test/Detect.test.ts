import { Detect, Import, ImportResult } from "@context-engine/transcripts"
import { describe, expect, it } from "vitest"

const detect = (text: string) => Import.importTextSync(text).format

describe("format detection by content", () => {
  it("tells the JSON message formats apart by their markers", () => {
    expect(
      detect(
        JSON.stringify({
          model: "gpt-4o",
          messages: [
            { role: "user", content: "hi" },
            {
              role: "assistant",
              content: null,
              tool_calls: [{ id: "c", type: "function", function: { name: "f", arguments: "{}" } }]
            },
            { role: "tool", tool_call_id: "c", content: "ok" }
          ]
        })
      )
    ).toBe("openai-chat")
    expect(
      detect(
        JSON.stringify({
          system: "be brief",
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: [{ type: "tool_use", id: "t", name: "f", input: {} }] },
            { role: "user", content: [{ type: "tool_result", tool_use_id: "t", content: "ok" }] }
          ]
        })
      )
    ).toBe("anthropic-messages")
    expect(
      detect(
        JSON.stringify([
          { role: "user", content: "hi" },
          { role: "assistant", content: [{ type: "tool-call", toolCallId: "t", toolName: "f", input: {} }] },
          {
            role: "tool",
            content: [{ type: "tool-result", toolCallId: "t", toolName: "f", output: { type: "text", value: "ok" } }]
          }
        ])
      )
    ).toBe("model-messages")
    expect(detect(JSON.stringify({ history: [], trajectory: [], info: {} }))).toBe("swe-agent")
    expect(detect(JSON.stringify({ choices: [{ message: { role: "assistant", content: "x" } }] }))).toBe("openai-chat")
  })

  it("recognises the JSONL formats from their first record", () => {
    expect(detect(`${JSON.stringify({ type: "session", id: "s", timestamp: "t" })}\n`)).toBe("pi")
    expect(
      detect(
        `${JSON.stringify({ type: "user", uuid: "u", parentUuid: null, sessionId: "s", message: { role: "user", content: "hi" } })}\n`
      )
    ).toBe("claude-code")
  })

  it("recognises the text formats from their markers", () => {
    expect(detect("# aider chat started at 2024-08-05 19:29:00\n\n#### hi  \n\nHello!\n")).toBe("aider")
    expect(detect("> fix it\n\n⏺ Bash(ls)\n  ⎿  a.txt\n")).toBe("claude-code-console")
    expect(detect("╭──╮\n│  > fix it  │\n╰──╯\n\n✦ Sure.\n")).toBe("gemini-cli-console")
  })

  it("pairs a legacy OpenAI function_call with its function-role result", () => {
    const result = Import.importTextSync(
      JSON.stringify([
        { role: "user", content: "weather?" },
        { role: "assistant", content: null, function_call: { name: "weather", arguments: '{"city":"Oslo"}' } },
        { role: "function", name: "weather", content: "rain" }
      ])
    )
    expect(result.format).toBe("openai-chat")
    const [, call, answer] = result.transcript.entries.map((entry) => (entry.kind === "message" ? entry.message : null))
    const callPart = (call!.content as ReadonlyArray<{ type: string; toolCallId?: string; input?: unknown }>)[0]!
    expect(callPart).toMatchObject({ type: "tool-call", toolName: "weather", input: { city: "Oslo" } })
    expect(answer).toMatchObject({ role: "tool", content: [{ toolCallId: callPart.toolCallId, toolName: "weather" }] })
  })

  it("honours an explicit format over detection", () => {
    const text = JSON.stringify([{ role: "user", content: "hi" }])
    expect(Import.importTextSync(text, { format: "openai-chat" }).format).toBe("openai-chat")
  })

  it("every format id is registered once and declares its markers beside its detector", () => {
    expect(Detect.all.map((format) => format.id).sort()).toEqual([...ImportResult.formats].sort())
    for (const id of ImportResult.formats) {
      const format = Detect.byId(id)
      expect(typeof format.detect, id).toBe("function")
      expect(format.markers.trim().length, id).toBeGreaterThan(10)
    }
    // each wording names its own format's markers, so no two formats share one
    expect(new Set(Detect.all.map((format) => format.markers)).size).toBe(Detect.all.length)
  })

  it("a forced format's mismatch error names that format's own markers", () => {
    const pi = JSON.stringify({ type: "session", id: "s1", timestamp: "2026-01-01T00:00:00Z" })
    for (const id of ["aider", "claude-code", "gemini-cli-console"] as const) {
      try {
        Import.importTextSync(`${pi}\n`, { format: id })
        expect.unreachable(`${id} accepted a pi session`)
      } catch (error) {
        expect(error).toBeInstanceOf(ImportResult.FormatMismatch)
        expect((error as ImportResult.FormatMismatch).markers).toBe(Detect.byId(id).markers)
      }
    }
  })
})
