import { contextOptions, type Noun } from "../command.js";

export const check: Noun = {
  name: "check",
  summary:
    "Check a flag, optionally for actors and attributes: prints enabled or disabled, and a typed flag's variant and value (exit code 0 either way)",
  command: {
    args: "<flag>",
    summary: "Check whether a flag is on (for any of the actors given), and which variant it serves",
    options: contextOptions(" for the flag's rules"),
    async run(ctx) {
      const options = ctx.evaluationContext();
      const flag = ctx.arg(0);
      const client = ctx.client();
      const answer = await client.flags.evaluate(ctx.project(), flag, options);
      // Only a boolean flag serves boolean values (on/off): printed as the seed's CLI always has.
      if (typeof answer.value === "boolean") {
        ctx.print({ enabled: answer.enabled }, (a) => (a.enabled ? "enabled" : "disabled"));
        return;
      }
      ctx.print(answer, (a) =>
        a.variant === null
          ? "disabled (the flag could not be evaluated)"
          : `${a.enabled ? "enabled" : "disabled"}: ${a.variant} = ${JSON.stringify(a.value)}`,
      );
    },
  },
};
