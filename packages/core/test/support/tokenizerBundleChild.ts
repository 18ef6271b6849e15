/**
 * Child of `TokenizerLoading.test.ts`, bundled for the browser platform (as an
 * edge bundler would) into a folder with no `node_modules`: counting before
 * `Tokenizers.load` must fail with `TokenizerNotLoaded`, after it must count.
 * Prints one JSON line.
 */
import { Tokenizers } from "../../src/index.ts"

let before: unknown
try {
  before = Tokenizers.get("o200k_base").count("hello world")
} catch (error) {
  before = { tag: (error as { _tag?: unknown })._tag, message: (error as Error).message }
}
await Tokenizers.load("o200k_base")
process.stdout.write(`${JSON.stringify({ before, after: Tokenizers.get("o200k_base").count("hello world") })}\n`)
