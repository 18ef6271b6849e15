/**
 * @context-engine/core/node: the parts of core that need Node built-ins
 * (`node:fs`, `node:sqlite`, `node:crypto`, WASM read from disk): the JSONL
 * and SQLite transcript stores, the cross-process file lock, policy files
 * and the `tiktoken` tokenizer backend. The main entry
 * (`@context-engine/core`) stays free of them so it loads on edge runtimes.
 *
 * @example
 * ```ts
 * import { JsonlTranscriptStore, PolicyFile } from "@context-engine/core/node"
 * const store = JsonlTranscriptStore.open({ directory: "./sessions" })
 * const registry = await PolicyFile.loadPolicyFilePromise("./policies.json")
 * ```
 *
 * @since 0.2.0
 */

export * as FileLock from "./FileLock.ts"
export * as JsonlTranscriptStore from "./JsonlTranscriptStore.ts"
export * as PolicyFile from "./PolicyFile.ts"
export * as PrivateFiles from "./PrivateFiles.ts"
export * as SqliteSearchIndex from "./SqliteSearchIndex.ts"
export * as SqliteTranscriptStore from "./SqliteTranscriptStore.ts"
export * as Tiktoken from "./Tiktoken.ts"
