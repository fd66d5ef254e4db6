// Loaded into a real server process with `--import` (and `--expose-gc`) by next-tick-maps.test.ts. On
// SIGUSR2 it forces a full garbage collection at a moment when no tick object of the server's own is
// alive, lets `process.nextTick` run again, and prints V8's feedback for `process.nextTick` with
// %DebugPrint, then "probe: done". Without next-tick-maps.ts's fix the literal's property sites turn
// MEGAMORPHIC here, every time (the same as the start-up collection does by chance).
import { setFlagsFromString } from "node:v8";

setFlagsFromString("--allow-natives-syntax");
// V8's natives syntax is only parsed in code compiled after the flag is set, hence a Function.
const debugPrint = new Function("value", "%DebugPrint(value)") as (value: unknown) => void;
const gc = (globalThis as { gc?: () => void }).gc;

process.on("SIGUSR2", () => {
  // An immediate runs outside the tick queue: no tick object is alive while it collects.
  setImmediate(() => {
    if (gc === undefined) throw new Error("next-tick-probe needs --expose-gc");
    gc();
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
