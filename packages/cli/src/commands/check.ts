import type { Noun } from "../command.js";

export const check: Noun = {
  name: "check",
  summary: "Check a flag, optionally for actors: prints enabled or disabled (exit code 0 either way)",
  command: {
    args: "<flag>",
    summary: "Check whether a flag is on (for any of the actors given)",
    options: {
      actor: { type: "string", multiple: true, short: "a", value: "<id>", description: "An actor id (repeatable)" },
    },
    async run(ctx) {
      const enabled = await ctx.client().flags.check(ctx.project(), ctx.arg(0), { actorIds: ctx.strings("actor") });
      ctx.print({ enabled }, (answer) => (answer.enabled ? "enabled" : "disabled"));
    },
  },
};
