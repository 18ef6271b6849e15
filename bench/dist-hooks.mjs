// `node --import ./bench/dist-hooks.mjs packages/cli/dist/bin.js …`: runs the built CLI as it is published —
// every @context-engine/* import resolves to the package's dist/*.js (what publishConfig.exports names) instead
// of the workspace's src/*.ts. In-thread (module.registerHooks, Node ≥ 22.15): no loader worker adds memory.
import { registerHooks } from "node:module"

registerHooks({
  resolve(specifier, context, nextResolve) {
    const resolved = nextResolve(specifier, context)
    const source = /^(file:\/\/.*\/packages\/[^/]+)\/src\/(.+)\.ts$/.exec(resolved.url)
    if (source === null || !specifier.startsWith("@context-engine/")) return resolved
    return { ...resolved, url: `${source[1]}/dist/${source[2]}.js`, format: "module" }
  }
})
