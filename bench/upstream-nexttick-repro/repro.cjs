// process.nextTick's object literal loses its maps in a full GC and its property sites turn megamorphic.
//
//   node --expose-gc repro.cjs         # prints MEGAMORPHIC for the literal's sites
//   node --expose-gc repro.cjs keep    # one tick object kept alive: MONOMORPHIC
//
// No dependencies. See README.md in this folder.

// Same as --allow-natives-syntax on the command line, for the code compiled below.
require("node:v8").setFlagsFromString("--allow-natives-syntax");
const debugPrint = new Function("value", "%DebugPrint(value)");

if (process.argv[2] === "keep") {
  // The workaround: hold one real tick object for the life of the process, so that the maps of
  // nextTick's literal stay alive.
  const { createHook } = require("node:async_hooks");
  let kept;
  const hook = createHook({
    init(asyncId, type, triggerAsyncId, resource) {
      if (type === "TickObject") kept ??= resource;
    },
  });
  hook.enable();
  process.nextTick(() => {});
  hook.disable();
  globalThis.keptTickObject = kept;
}

let ticks = 0;

// A thousand ticks, so that nextTick gets its feedback, then back to the event loop.
function spin(done) {
  if (++ticks % 1000 === 0) return setImmediate(done);
  process.nextTick(spin, done);
}

function collectAndSpinAgain() {
  // An immediate runs outside the tick queue: no tick object is alive during these full GCs, so the maps
  // that only tick objects hold are collected. The next ticks build an identical new chain of maps.
  gc();
  gc();
  spin(report);
}

function report() {
  // Look for the DefineKeyedOwnPropertyInLiteral slots of `const tickObject = { … }`.
  debugPrint(process.nextTick);
}

spin(collectAndSpinAgain);
