/**
 * Codex's `apply_patch` edits, read off a tool call. Codex CLI edits files
 * with a patch envelope of its own (`codex-rs/apply-patch`, the grammar in
 * its `apply_patch_tool_instructions.md`), sent as the input of a freeform
 * `apply_patch` tool (a raw string), of a function tool (`{ input }`), or as
 * a shell command (`["apply_patch", patch]`, or a heredoc
 * `apply_patch <<'EOF' … EOF` inside `bash -lc`):
 *
 * ```text
 * *** Begin Patch
 * *** Add File: docs/retry.md
 * +# Retry policy
 * *** Update File: src/retry.ts
 * *** Move to: src/backoff.ts
 * @@ export const retry
 * -export const retry = (attempts: number) => {
 * +export const retry = (attempts: number, delayMs = 100) => {
 * *** Delete File: src/old-retry.ts
 * *** End Patch
 * ```
 *
 * One patch touches several files; each is one {@link FileChange}, with what
 * it changed by `EditChange.between` over its hunks' removed (`-`) and added
 * (`+`) lines, context lines (` `) on both sides.
 *
 * @since 0.6.0
 */
import * as EditChange from "./EditChange.ts"
import type * as ToolActions from "./ToolActions.ts"
import * as ToolInput from "./ToolInput.ts"

/**
 * One file a patch touches.
 *
 * @category models
 */
export interface FileChange {
  readonly op: "add" | "update" | "delete"
  /** The path the patch names (`*** Add File: p`), as written. */
  readonly path: string
  /** Where an update moves the file (`*** Move to: p`). */
  readonly movedTo?: string | undefined
  /** The first line the file's hunks brought (or removed); `undefined` for a delete or hunks without one. */
  readonly change?: EditChange.Change | undefined
  /** The file's header line as the patch writes it (`*** Delete File: src/old.ts`). */
  readonly header: string
}

const BEGIN = "*** Begin Patch"
const FILE_RE = /^\*\*\* (Add|Update|Delete) File: (.+?)\s*$/
const MOVE_RE = /^\*\*\* Move to: (.+?)\s*$/
const OPS = { Add: "add", Update: "update", Delete: "delete" } as const

/** Input fields a patch is carried in: a function tool's `input` / `patch`, a shell tool's command. */
const PATCH_KEYS = ["input", "patch", "command", "cmd", "script"] as const

/**
 * The patch a tool call's input carries, from its `*** Begin Patch` line on:
 * a string input (a freeform tool), or a string — or an element of an
 * argument array — in one of its `input`, `patch`, `command`, `cmd`,
 * `script` fields. `undefined` when the input holds no patch envelope.
 *
 * @category getters
 */
export const patchOf = (input: unknown): string | undefined => {
  const texts: Array<string> = []
  if (typeof input === "string") texts.push(input)
  const fields = ToolInput.fieldsOf(input)
  if (fields !== undefined)
    for (const key of PATCH_KEYS) {
      const value = fields[key]
      if (typeof value === "string") texts.push(value)
      else if (Array.isArray(value)) for (const item of value) if (typeof item === "string") texts.push(item)
    }
  for (const text of texts) {
    const at = text.indexOf(BEGIN)
    if (at >= 0) return text.slice(at)
  }
  return undefined
}

/**
 * The files a patch touches, in the patch's order. Lines outside a file's
 * section, `@@` context headers and `*** End of File` markers are skipped;
 * reading stops at `*** End Patch`.
 *
 * @category constructors
 */
export const files = (patch: string): Array<FileChange> => {
  const found: Array<FileChange> = []
  let current: { op: FileChange["op"]; path: string; header: string; movedTo?: string } | undefined
  let removed: Array<string> = []
  let added: Array<string> = []
  const close = () => {
    if (current === undefined) return
    const change = current.op === "delete" ? undefined : EditChange.between(removed.join("\n"), added.join("\n"))
    found.push({ ...current, change })
  }
  for (const line of patch.split("\n")) {
    const header = FILE_RE.exec(line)
    if (header !== null) {
      close()
      current = { op: OPS[header[1] as keyof typeof OPS], path: header[2]!, header: line.trimEnd() }
      removed = []
      added = []
      continue
    }
    if (line.startsWith("*** End Patch")) break
    if (current === undefined) continue
    const move = MOVE_RE.exec(line)
    if (move !== null) current.movedTo = move[1]!
    else if (line.startsWith("+")) added.push(line.slice(1))
    else if (line.startsWith("-")) removed.push(line.slice(1))
    else if (line.startsWith(" ")) {
      removed.push(line.slice(1))
      added.push(line.slice(1))
    }
  }
  close()
  return found
}

/**
 * The actions of a call that carries a Codex patch ({@link patchOf}; whatever the tool's name — Codex sends one as
 * a shell command too): one per file, with the call's outcome (unknown when no result was recorded) — an added file
 * is created, an updated one edited (at the path it moved to), a deleted one a command named by its header line.
 * Empty for any other call.
 *
 * @category getters
 */
export const actionsOf = (
  entryId: string,
  part: { readonly toolName: string; readonly input: unknown },
  outcome: ToolActions.Outcome = { _tag: "unknown" }
): Array<ToolActions.Action> => {
  const patch = patchOf(part.input)
  if (patch === undefined) return []
  return files(patch).map((file): ToolActions.Action => {
    const base = { entryId, toolName: part.toolName, outcome }
    if (file.op === "delete") return { ...base, kind: "command", command: file.header }
    return {
      ...base,
      kind: file.op === "add" ? "create" : "edit",
      path: file.movedTo ?? file.path,
      change: file.change
    }
  })
}
