import { describe, expect, it } from "vitest"
import { emptyContent } from "../src/Checkpoint.ts"
import type { Message } from "../src/Message.ts"
import * as ReplayedSideEffects from "../src/ReplayedSideEffects.ts"

const call = (id: string, toolName: string, input: unknown): Message => ({
  role: "assistant",
  content: [{ type: "tool-call", toolCallId: id, toolName, input }]
})
const result = (id: string, toolName: string, value: string, error = false): Message => ({
  role: "tool",
  content: [
    {
      type: "tool-result",
      toolCallId: id,
      toolName,
      output: error ? { type: "error-text", value } : { type: "text", value }
    }
  ]
})

const covered: Array<Message> = [
  { role: "user", content: "Clone the template and deploy it to staging" },
  call("c1", "clone_repo", { url: "https://example.com/acme/template.git", dest: "/work/svc" }),
  result("c1", "clone_repo", "Cloned into /work/svc"),
  call("c2", "take_screenshot", { url: "https://staging.example.com/home", width: 1440 }),
  result("c2", "take_screenshot", "saved home.png"),
  call("c3", "deploy", { service: "svc", environment: "production" }),
  result("c3", "deploy", "permission denied", true)
]

const replayed = (nextSteps: Array<string>) =>
  ReplayedSideEffects.of({ ...emptyContent(), goal: "ship svc", nextSteps }, covered)

describe("ReplayedSideEffects", () => {
  it("flags a step that asks again for a world-changing call the range shows as done", () => {
    expect(replayed(["Clone https://example.com/acme/template.git into /work/svc"])).toHaveLength(1)
    expect(replayed(["Cloning the template into /work/svc"])).toHaveLength(1)
  })

  it("does not flag read-like tools, failed calls, other targets or other verbs", () => {
    expect(replayed(["Take a screenshot of https://staging.example.com/home at 1440"])).toEqual([])
    expect(replayed(["Deploy svc to production once permissions are fixed"])).toEqual([])
    expect(replayed(["Clone the docs repository into /work/docs"])).toEqual([])
    expect(replayed(["Check the README in /work/svc"])).toEqual([])
  })
})
