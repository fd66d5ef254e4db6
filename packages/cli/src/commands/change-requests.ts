import type {
  ChangeRequest,
  ChangeRequestPerson,
  ChangeRequestState,
  ScheduleEntry,
  UpdateFlagInput,
} from "@flagstaff/sdk";
import type { Noun } from "../command.js";
import { PAGE_MAX } from "../lists.js";
import { clip, type Column, record, table } from "../output.js";

const person = (p: ChangeRequestPerson | null) => (p === null ? "-" : (p.email ?? p.name ?? p.id ?? "-"));

const COLUMNS: Column<ChangeRequest>[] = [
  ["ID", (r) => r.id],
  ["TITLE", (r) => clip(r.title, 40)],
  ["ENVIRONMENT", (r) => r.environment],
  ["STATE", (r) => r.state],
  ["APPROVALS", (r) => `${r.approvals}/${r.requiredApprovals}`],
  ["FLAGS", (r) => clip(r.changes.map((c) => c.flag).join(", "), 32)],
  ["AUTHOR", (r) => person(r.author)],
  ["SCHEDULED", (r) => r.scheduledAt ?? ""],
];

const show = (r: ChangeRequest) => {
  const head = record({
    id: r.id,
    title: r.title,
    environment: r.environment,
    state: r.state,
    approvals: `${r.approvals} of ${r.requiredApprovals}`,
    author: person(r.author),
    scheduledAt: r.scheduledAt,
    appliedAt: r.appliedAt,
    appliedBy: r.appliedBy === null ? null : person(r.appliedBy),
    overrideReason: r.overrideReason,
    failureReason: r.failureReason,
    description: r.description || null,
  });
  const diff = r.changes.flatMap((c) =>
    (c.diff ?? []).map((d) => ({ flag: c.flag, field: d.field, now: d.current, proposed: d.proposed, stale: c.stale })),
  );
  const changes = table(
    diff,
    [
      ["FLAG", (d) => d.flag + (d.stale ? " (changed since)" : "")],
      ["FIELD", (d) => d.field],
      ["NOW", (d) => clip(JSON.stringify(d.now ?? null), 40)],
      ["PROPOSED", (d) => clip(JSON.stringify(d.proposed ?? null), 40)],
    ],
    "Nothing differs from the flags now.",
  );
  const reviews = table(
    r.reviews,
    [
      ["REVIEWER", (v) => person(v.reviewer)],
      ["DECISION", (v) => v.decision + (v.counts || v.decision === "reject" ? "" : " (does not count)")],
      ["COMMENT", (v) => clip(v.comment ?? "", 40)],
      ["AT", (v) => v.createdAt],
    ],
    "No review yet.",
  );
  return `${head}\n\nChanges:\n${changes}\n\nReviews:\n${reviews}`;
};

const SCHEDULE: Column<ScheduleEntry>[] = [
  ["AT", (e) => e.at],
  ["ENVIRONMENT", (e) => e.environment],
  ["WHAT", (e) => (e.kind === "change_request" ? `${e.changeRequest?.id}: ${e.description}` : e.description)],
];

export const changeRequests: Noun = {
  name: "change-requests",
  summary: "Reviewed, optionally scheduled changes to flags in one environment; the project's schedule",
  verbs: {
    list: {
      summary: "List the project's change requests, newest first",
      options: {
        state: {
          type: "string",
          value: "<states>",
          description: "Only these states, comma-separated (open, approved, …)",
        },
        environment: { type: "string", value: "<id>", description: "Only this environment's" },
        author: { type: "string", value: "<id>", description: "Only this person's (usr_…) or key's" },
      },
      async run(ctx) {
        const state = ctx
          .string("state")
          ?.split(",")
          .map((s) => s.trim()) as ChangeRequestState[] | undefined;
        const rows = await ctx
          .client()
          .changeRequests.list(ctx.project(), {
            state,
            environment: ctx.string("environment"),
            author: ctx.string("author"),
            limit: PAGE_MAX,
          })
          .toArray();
        ctx.print(rows, (data) => table(data, COLUMNS, "No change requests."));
      },
    },
    get: {
      args: "<id>",
      summary: "Show a change request with the diff of each change against the flag now, and its reviews",
      async run(ctx) {
        ctx.print(await ctx.client().changeRequests.get(ctx.project(), ctx.arg(0)), show);
      },
    },
    create: {
      summary: "Open a change request for one flag's change (its PATCH as JSON)",
      options: {
        environment: { type: "string", value: "<id>", description: "The environment it changes", required: true },
        title: { type: "string", value: "<text>", description: "What it does", required: true },
        description: { type: "string", value: "<text>", description: "Why, for the reviewers" },
        flag: { type: "string", value: "<name>", description: "The flag it changes", required: true },
        patch: {
          type: "string",
          value: "<json>",
          description: 'The flag\'s PATCH body, e.g. \'{"status":"enabled"}\' or \'{"percentageActors":25}\'',
          required: true,
        },
        at: { type: "string", value: "<time>", description: "Apply it at this time (ISO 8601), once approved" },
      },
      async run(ctx) {
        const patch = ctx.jsonOption<UpdateFlagInput>("patch") as UpdateFlagInput;
        const request = await ctx.client().changeRequests.create(ctx.project(), {
          environment: ctx.required("environment"),
          title: ctx.required("title"),
          description: ctx.string("description"),
          scheduledAt: ctx.string("at"),
          changes: [{ flag: ctx.required("flag"), patch }],
        });
        ctx.print(request, show);
      },
    },
    approve: {
      args: "<id>",
      summary: "Approve a change request (people only: sign in, or use your personal key)",
      options: { comment: { type: "string", value: "<text>", description: "What you say with it" } },
      async run(ctx) {
        const comment = ctx.string("comment");
        const input = { decision: "approve" as const, ...(comment === undefined ? {} : { comment }) };
        ctx.print(await ctx.client().changeRequests.review(ctx.project(), ctx.arg(0), input), show);
      },
    },
    reject: {
      args: "<id>",
      summary: "Reject a change request (people only)",
      options: { comment: { type: "string", value: "<text>", description: "Why" } },
      async run(ctx) {
        const comment = ctx.string("comment");
        const input = { decision: "reject" as const, ...(comment === undefined ? {} : { comment }) };
        ctx.print(await ctx.client().changeRequests.review(ctx.project(), ctx.arg(0), input), show);
      },
    },
    apply: {
      args: "<id>",
      summary: "Apply an approved change request now (--override: a project admin, without approval)",
      options: {
        override: { type: "string", value: "<reason>", description: "Apply it unapproved, recorded with this reason" },
      },
      async run(ctx) {
        const reason = ctx.string("override");
        const applied = await ctx
          .client()
          .changeRequests.apply(ctx.project(), ctx.arg(0), reason === undefined ? undefined : { reason });
        ctx.print(applied, show);
      },
    },
    cancel: {
      args: "<id>",
      summary: "Cancel a change request (its author or a project admin)",
      async run(ctx) {
        ctx.print(await ctx.client().changeRequests.cancel(ctx.project(), ctx.arg(0)), show);
      },
    },
    schedule: {
      summary: "What is due, soonest first: scheduled change requests and timed rollout steps",
      options: { environment: { type: "string", value: "<id>", description: "Only this environment's" } },
      async run(ctx) {
        const rows = await ctx.client().changeRequests.schedule(ctx.project(), ctx.string("environment"));
        ctx.print(rows, (data) => table(data, SCHEDULE, "Nothing is scheduled."));
      },
    },
  },
};
