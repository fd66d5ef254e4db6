// Loaded into a running server with `--import`: on SIGUSR2 it forces a full GC while none of the server's
// tick objects is alive, lets process.nextTick run again, and prints V8's feedback for nextTick with
// %DebugPrint, then "probe: done". Without packages/server/src/kernel/next-tick-maps.ts the literal's sites turn
// MEGAMORPHIC here every time; with it they stay MONOMORPHIC. V8 prints through C's stdio: run the
// server under `stdbuf -o0` or with its output in a file, or the print may be lost. See README.md.
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--allow-natives-syntax");
// The natives syntax is parsed only in code compiled after the flag is set, hence a Function.
const debugPrint = new Function("value", "%DebugPrint(value)");

process.on("SIGUSR2", () => {
  // An immediate runs outside the tick queue: no tick object is alive while it collects.
  setImmediate(() => {
    if (typeof globalThis.gc !== "function") throw new Error("server-probe.mjs needs --expose-gc");
    globalThis.gc();
    let ticks = 0;
    const spin = () => {
      if (++ticks < 100) process.nextTick(spin);
      else
        setImmediate(() => {
          debugPrint(process.nextTick);
          process.stdout.write("probe: done\n");
        });
    };
    process.nextTick(spin);
  });
});
