// Loaded with `node --import ./bench/without-next-tick-fix.mjs main.js` by bench/writes-promise-hook.mjs
// only: replaces the server's next-tick-maps module with one whose call does nothing, so a server runs
// without the fix (and without the async hook it enables) for a side-by-side measure. Nothing in the
// server reads a switch for this; the module is swapped at load.
import { registerHooks } from "node:module";

registerHooks({
  load(url, context, nextLoad) {
    if (url.endsWith("/next-tick-maps.js")) {
      return {
        format: "module",
        shortCircuit: true,
        source: "export function keepNextTickMapsAlive() { return undefined; }",
      };
    }
    return nextLoad(url, context);
  },
});
