/**
 * Tools that only look — read a file, list or search a directory, fetch or
 * search the web — by their tool name: the one home of that list, used by
 * `ToolActions` (a look is not done work, and its result is not a failure
 * because the content it returns says "error" or "exit code 1") and by
 * `IdentifierExtraction` (a successful look's body is content, not an
 * outcome, so its error lines are not the session's errors). Beside it, the
 * tools that write files ({@link isWriteTool}): their output shows the
 * content they wrote, a diff or the file, so it is not read for failure
 * markers either (`ToolOutcome`).
 *
 * Names, matched whole and case-insensitively:
 * - generic and Claude Code / pi / Codex / OpenCode: `read`, `read_file`,
 *   `view`, `view_file`, `cat`, `open`, `open_file`, `glob`, `ls`, `list`,
 *   `grep`, `search`, `find`, `web_fetch`, `web_search`, `TodoRead`,
 *   `NotebookRead`;
 * - Gemini CLI's read-only tools, by the name the model calls
 *   (`read_many_files`, `glob`, `list_directory`, `search_file_content`,
 *   `google_web_search`, `web_fetch`, as in a Gemini JSON log) and by the
 *   display name its console prints (`ReadManyFiles`, `FindFiles`,
 *   `ReadFolder`, `SearchText`, `GoogleSearch`, `WebFetch`) — the `name` /
 *   `displayName` pairs of Gemini CLI's `packages/core/src/tools/*.ts`
 *   (`docs/tools/file-system.md`, `web-search.md`, `web-fetch.md`). Its
 *   `ReadFile` / `read_file` are in the generic names.
 *
 * @since 0.2.0
 */

const READ_TOOL_RE =
  /^(?:read|read_?file|view|view_?file|cat|open|open_?file|glob|ls|list|grep|search|find|web_?fetch|web_?search|todoread|notebookread|read_?many_?files|find_?files|read_?folder|list_?directory|search_?text|search_file_content|google_?search|google_web_search)$/i

/**
 * Whether a tool, by its name, only looks (see the module docs for the names
 * and their sources).
 *
 * @category guards
 */
export const isReadTool = (toolName: string): boolean => READ_TOOL_RE.test(toolName)

/**
 * Read tools whose target is a directory to list or search, not a file:
 * `glob`, `ls`, `list`, `list_dir`, `list_directory`, `find`, and Gemini
 * CLI's console names for its glob and list_directory tools, `FindFiles` and
 * `ReadFolder` (Pi's file ops count only its read tool as a file read).
 *
 * @category guards
 */
export const isDirectoryTool = (toolName: string): boolean =>
  /^(?:glob|ls|list|list_?dir(?:ectory)?|find|find_?files|read_?folder)$/i.test(toolName)

/**
 * Read tools that search the text under a path: `grep`, `search`, `rg`,
 * Gemini CLI's `search_file_content` (console `SearchText`). Their path is
 * the search's scope, a file or a directory (Claude Code's console prints
 * `Grep(/repo)` and `Search(pattern: …, path: "/repo/src")`).
 *
 * @category guards
 */
export const isSearchTool = (toolName: string): boolean =>
  /^(?:grep|search|rg|ripgrep|search_?text|search_file_content)$/i.test(toolName)

/**
 * Whether a path names a file by its form: its last segment has an
 * extension (`a.ts`, `.env.local`; not `src`, `BookMinder`, `.claude`).
 * For a search tool's scope, which is a directory unless it names a file.
 *
 * @category guards
 */
export const looksLikeFile = (path: string): boolean =>
  /(?:^|\/)[^/]*[^/.][^/]*\.[^/.]+$/.test(path.replace(/\/+$/, ""))

/**
 * Tools that write or edit files, by a word of their name (substring,
 * case-insensitive): `edit`, `write`, `create`, `apply_patch`,
 * `str_replace`, `replace`, `patch`, `insert`, `multiedit`, or exactly
 * `update` (Claude Code's console name of an edit: `Update(src/a.ts)`) —
 * Claude Code's `Edit` / `MultiEdit` / `Write`, pi's `edit` / `write`, Codex's
 * `apply_patch`, Gemini CLI's `replace` / `write_file` (console `Edit`,
 * `WriteFile`), SWE-agent's `str_replace_editor`.
 *
 * @category guards
 */
export const isWriteTool = (toolName: string): boolean =>
  /(?:edit|write|create|apply_?patch|str_replace|replace|patch|insert|multiedit|^update$)/i.test(toolName)
