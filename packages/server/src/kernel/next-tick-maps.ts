// Keeps the check out of V8's slow state (docs/performance.md, "The slow state and its fix").
//
// Node's own `process.nextTick` (lib/internal/process/task_queues.js) builds every tick as an object
// literal that starts with computed keys, `{ [async_id_symbol]: …, [trigger_async_id_symbol]: …, callback,
// args }` (Node 24 adds a third symbol). V8 defines such a literal's properties one by one, and each
// definition site in `nextTick` remembers, weakly, the hidden class (map) it saw. The maps after each
// added property are kept alive only by live tick objects, and a tick object lives for microseconds. When
// a full garbage collection runs while no tick object is alive, those maps are collected; the next tick
// builds a new, identical chain of maps, the sites see maps other than the ones they remembered, and they
// turn megamorphic for good. From then on every `nextTick` of every request (node:http makes several a
// request) defines its properties through V8's runtime: about 40,000 more instructions a request. Whether
// a tick object happens to be alive at the server's first full collection is chance, hence a process
// lands in the fast or the slow state, and stays there.
//
// The fix: keep one real tick object alive for the life of the process, so that its chain of maps is
// never collected (a map keeps the maps before it alive). It is taken from an async_hooks `init` hook
// that is enabled around a single `process.nextTick` and disabled at once. It must run before the
// first full collection that follows the first tick, so it is the first thing the server does
// (main.ts), and buildApp calls it too (for servers built in-process); a second call does nothing.
//
// Why not something cheaper:
// - A look-alike literal built here with the same keys does not share Node's maps: V8 chooses a field's
//   representation from the first values stored (Node's ids are doubles), and a look-alike that gets one
//   wrong makes V8 deprecate the real maps, which causes the very slow state it meant to prevent (seen on
//   Node 24). It would also have to follow each Node version's layout.
// - `async_hooks.executionAsyncResource()` inside a tick returns the tick object without a hook, but it
//   tells Node's native layer, for the rest of the process, to route every callback into JavaScript
//   through its async-hooks trampoline: a cost on every request.
// The hook's own cost: enabling any async hook makes V8 give up, once and for all, its assumption that no
// promise hooks exist (its "PromiseHook protector"), so optimised code no longer inlines promise
// operations. The check answers without promises and counts the same instructions with the fix as in the
// fast state without it; code that awaits pays a little more (docs/performance.md gives the figures).
//
// Everything here leans on Node internals, so it fails safe: if a later Node no longer reports ticks as
// "TickObject", or builds them differently, this keeps one small object or nothing, and changes no
// behaviour. bench/upstream-nexttick-repro/ reproduces the state without Flagstaff, for Node.js.
import { createHook } from "node:async_hooks";

let kept: object | undefined;
let done = false;

/**
 * Keeps one of Node's own tick objects alive for the rest of the process (see above). Returns it, or
 * undefined when this Node reported none. Idempotent: later calls return the same object.
 */
export function keepNextTickMapsAlive(): object | undefined {
  if (done) return kept;
  done = true;
  const hook = createHook({
    init(_asyncId, type, _triggerAsyncId, resource) {
      if (type === "TickObject" && kept === undefined) kept = resource;
    },
  });
  hook.enable();
  try {
    process.nextTick(() => {});
  } finally {
    hook.disable();
  }
  return kept;
}
