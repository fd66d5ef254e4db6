// Release safety in the console (docs/change-requests.md): the project's schedule (change requests with a
// time, timed rollout steps), its change requests with their states, and one request's page: the diff of
// each change against the flag now, its reviews, and what the person shown may do with it (approve or
// reject with a comment, apply, apply with an override's reason, cancel). The server decides who may do
// what; a refusal is shown where the button is.
import type { ChangeRequest, ChangeRequestPerson, ChangeRequestState, ScheduleEntry } from "@flagstaff/sdk";
import { COMMENT_MAX_LENGTH } from "@flagstaff/sdk";
import { useState } from "react";
import { when } from "../format.js";
import { ListTable, usePaged } from "../lists.js";
import { Confirm, ErrorText, enc, Link, Loading, Pager, TextField, useAction, useApp, useData } from "../ui.js";

const STATES: readonly ("" | ChangeRequestState)[] = [
  "",
  "open",
  "approved",
  "scheduled",
  "rejected",
  "applied",
  "cancelled",
  "conflict",
  "failed",
];

/** What each state means, in words. */
const STATE_TEXT: Record<ChangeRequestState, string> = {
  open: "waiting for approvals",
  approved: "approved: ready to apply",
  scheduled: "approved: applied at its time",
  rejected: "rejected",
  applied: "applied",
  cancelled: "cancelled",
  conflict: "in conflict: a flag changed since; nothing was applied",
  failed: "failed",
};

const WAITING: readonly ChangeRequestState[] = ["open", "approved", "rejected", "scheduled"];

export const personName = (p: ChangeRequestPerson | null) =>
  p === null ? "—" : p.type === "system" ? `the service (${p.name})` : p.name || p.email || p.id || "?";

export function StateBadge(props: { state: ChangeRequestState }) {
  return <span className={`badge state-${props.state}`}>{props.state}</span>;
}

/** The project's schedule and change requests. */
export function ChangeRequestsPage() {
  const { conn, project } = useApp();
  const [state, setState] = useState<"" | ChangeRequestState>("");
  const list = usePaged(
    (page) => conn.client.changeRequests.list(project, { state: state || undefined }).page(page),
    [project, state],
    { limit: 25 },
  );
  const schedule = useData(() => conn.client.changeRequests.schedule(project), [project]);
  return (
    <section aria-labelledby="changes-title">
      <h1 id="changes-title">Changes</h1>
      <p className="help">
        Changes to flags that wait for a review or a time, in every environment. An environment that requires approvals
        takes its changes through a request here; any environment can take a change at a set time.
      </p>
      <h2 id="schedule-title">Schedule</h2>
      <ErrorText error={schedule.error} />
      <Timeline entries={schedule.data} loading={schedule.loading} />

      <h2 id="requests-title">Change requests</h2>
      <div className="row filters">
        <label>
          State{" "}
          <select
            value={state}
            onChange={(e) => {
              setState(e.target.value as "" | ChangeRequestState);
              list.first();
            }}
          >
            {STATES.map((s) => (
              <option key={s} value={s}>
                {s === "" ? "any" : s}
              </option>
            ))}
          </select>
        </label>
      </div>
      <ErrorText error={list.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what="change requests"
        empty="No change request yet. Changes made in an environment that requires approvals, or scheduled for later, appear here."
        label="Change requests"
        columns={["Request", "Environment", "State", "Approvals", "Author", "When"]}
        row={(r: ChangeRequest) => (
          <tr key={r.id}>
            <td>
              <Link to={`/p/${enc(project)}/changes/${enc(r.id)}`}>{r.title}</Link>
              <div className="muted">{r.changes.map((c) => c.flag).join(", ")}</div>
            </td>
            <td>{r.environment}</td>
            <td>
              <StateBadge state={r.state} />
            </td>
            <td>
              {r.approvals} of {r.requiredApprovals}
            </td>
            <td>{personName(r.author)}</td>
            <td>{r.scheduledAt ? `at ${when(r.scheduledAt)}` : when(r.createdAt)}</td>
          </tr>
        )}
      />
      <Pager {...list.paging} label="Change requests" />
    </section>
  );
}

/** The schedule as a timeline: one entry per thing due, by day. */
function Timeline(props: { entries: ScheduleEntry[] | undefined; loading: boolean }) {
  const { project } = useApp();
  if (props.entries === undefined) return props.loading ? <Loading what="the schedule" /> : null;
  if (props.entries.length === 0) return <p>Nothing is scheduled.</p>;
  const days = new Map<string, ScheduleEntry[]>();
  for (const entry of props.entries) {
    const day = new Date(entry.at).toLocaleDateString(undefined, { dateStyle: "full" });
    days.set(day, [...(days.get(day) ?? []), entry]);
  }
  return (
    <ol className="timeline" aria-labelledby="schedule-title">
      {[...days].map(([day, entries]) => (
        <li key={day} className="timeline-group">
          <h3 className="timeline-day">{day}</h3>
          <ul>
            {entries.map((e) => (
              <li key={`${e.at}-${e.changeRequest?.id ?? e.flag}-${e.description}`} className="timeline-entry">
                <time dateTime={e.at}>{new Date(e.at).toLocaleTimeString()}</time>{" "}
                <span className="badge">{e.environment}</span>{" "}
                {e.changeRequest ? (
                  <Link to={`/p/${enc(project)}/changes/${enc(e.changeRequest.id)}`}>{e.description}</Link>
                ) : (
                  <Link to={`/p/${enc(project)}/flags/${enc(e.flag ?? "")}?environment=${enc(e.environment)}`}>
                    {e.description}
                  </Link>
                )}
              </li>
            ))}
          </ul>
        </li>
      ))}
    </ol>
  );
}

const show = (value: unknown): string =>
  value === null || value === undefined ? "—" : typeof value === "string" ? value : JSON.stringify(value);

/** One change request: what it changes, who reviewed it, and what may be done with it now. */
export function ChangeRequestPage(props: { id: string }) {
  const { conn, project, session, canWrite, isProjectAdmin } = useApp();
  const request = useData(() => conn.client.changeRequests.get(project, props.id), [project, props.id]);
  const action = useAction();
  const [comment, setComment] = useState("");
  const [overriding, setOverriding] = useState(false);
  const [reason, setReason] = useState("");
  const r = request.data;
  if (r === undefined) {
    return request.error ? <ErrorText error={request.error} /> : <Loading what="the change request" />;
  }
  const waiting = WAITING.includes(r.state);
  const me = session.user?.id;
  const mine = me !== undefined && r.author.id === me;
  const run = (what: () => Promise<unknown>) =>
    action.run(async () => {
      await what();
      await request.reload();
    });
  const approved = r.state === "approved" || r.state === "scheduled";
  return (
    <section aria-labelledby="request-title">
      <p>
        <Link to={`/p/${enc(project)}/changes`}>← Changes</Link>
      </p>
      <h1 id="request-title">{r.title}</h1>
      <p>
        <StateBadge state={r.state} /> {STATE_TEXT[r.state]} · in <strong>{r.environment}</strong> · by{" "}
        {personName(r.author)} · {when(r.createdAt)}
      </p>
      {r.description && <p className="request-description">{r.description}</p>}
      <dl className="facts">
        <dt>Approvals</dt>
        <dd data-testid="approvals">
          {r.approvals} of {r.requiredApprovals} required
        </dd>
        <dt>Applies</dt>
        <dd>{r.scheduledAt ? `at ${when(r.scheduledAt)}, once approved` : "when someone applies it"}</dd>
        {r.appliedAt && (
          <>
            <dt>Applied</dt>
            <dd>
              {when(r.appliedAt)} by {personName(r.appliedBy)}
              {r.overrideReason ? ` without approval: ${r.overrideReason}` : ""}
            </dd>
          </>
        )}
        {r.failureReason && (
          <>
            <dt>Why</dt>
            <dd className="error">{r.failureReason}</dd>
          </>
        )}
      </dl>

      <h2>What it changes</h2>
      {r.changes.map((c) => (
        <div key={c.flag} className="card">
          <h3>
            <Link to={`/p/${enc(project)}/flags/${enc(c.flag)}?environment=${enc(r.environment)}`}>{c.flag}</Link>
          </h3>
          {c.stale && waiting && (
            <p className="warning" role="note">
              {c.flag} changed since this request was made: applying it now would find a conflict and change nothing.
            </p>
          )}
          {c.diff && c.diff.length > 0 ? (
            <div className="table-scroll">
              <table aria-label={`Changes to ${c.flag}`}>
                <thead>
                  <tr>
                    <th scope="col">Field</th>
                    <th scope="col">Now</th>
                    <th scope="col">Proposed</th>
                  </tr>
                </thead>
                <tbody>
                  {c.diff.map((d) => (
                    <tr key={d.field}>
                      <th scope="row">{d.field}</th>
                      <td>
                        <code>{show(d.current)}</code>
                      </td>
                      <td>
                        <code>{show(d.proposed)}</code>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          ) : (
            <p className="muted">{waiting ? "Nothing differs from the flag now." : <code>{show(c.patch)}</code>}</p>
          )}
        </div>
      ))}

      <h2>Reviews</h2>
      {r.reviews.length === 0 ? (
        <p>No review yet.</p>
      ) : (
        <ul className="reviews">
          {r.reviews.map((review) => (
            <li key={`${review.reviewer.id}`}>
              <strong>{personName(review.reviewer)}</strong> {review.decision === "approve" ? "approved" : "rejected"}{" "}
              {when(review.createdAt)}
              {!review.counts && review.decision === "approve" && (
                <span className="muted"> (does not count: they may not approve it now)</span>
              )}
              {review.comment && <blockquote>{review.comment}</blockquote>}
            </li>
          ))}
        </ul>
      )}

      {waiting && (
        <section aria-labelledby="request-actions" className="card">
          <h2 id="request-actions">Your part</h2>
          <ErrorText error={action.error} />
          {session.user && canWrite && (
            <>
              <TextField
                id="review-comment"
                label="Comment (optional)"
                field="comment"
                multiline
                maxLength={COMMENT_MAX_LENGTH}
                value={comment}
                onChange={setComment}
              />
              <div className="row">
                <button
                  type="button"
                  className="primary"
                  disabled={action.busy}
                  onClick={() =>
                    void run(() =>
                      conn.client.changeRequests.review(project, r.id, {
                        decision: "approve",
                        ...(comment.trim() ? { comment: comment.trim() } : {}),
                      }),
                    ).then((ok) => ok && setComment(""))
                  }
                >
                  Approve
                </button>
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    void run(() =>
                      conn.client.changeRequests.review(project, r.id, {
                        decision: "reject",
                        ...(comment.trim() ? { comment: comment.trim() } : {}),
                      }),
                    ).then((ok) => ok && setComment(""))
                  }
                >
                  Reject
                </button>
              </div>
            </>
          )}
          {!session.user && <p className="help">Reviews are people's: a service key cannot approve.</p>}
          <div className="row">
            {canWrite && approved && (
              <button
                type="button"
                className="primary"
                disabled={action.busy}
                onClick={() => void run(() => conn.client.changeRequests.apply(project, r.id))}
              >
                Apply now
              </button>
            )}
            {isProjectAdmin && !approved && (
              <button type="button" className="danger" disabled={action.busy} onClick={() => setOverriding(true)}>
                Apply without approval…
              </button>
            )}
            {(mine || isProjectAdmin) && (
              <button
                type="button"
                disabled={action.busy}
                onClick={() => void run(() => conn.client.changeRequests.cancel(project, r.id))}
              >
                Cancel request
              </button>
            )}
          </div>
        </section>
      )}
      <Confirm
        open={overriding}
        danger
        title={`Apply "${r.title}" without approval?`}
        confirmLabel="Apply without approval"
        confirmDisabled={reason.trim() === ""}
        onCancel={() => setOverriding(false)}
        onConfirm={() => {
          setOverriding(false);
          void run(() => conn.client.changeRequests.apply(project, r.id, { reason: reason.trim() })).then(
            (ok) => ok && setReason(""),
          );
        }}
      >
        <p>
          It is applied now as it is, recorded as an override with your reason, and announced to the project's webhooks.
        </p>
        <TextField
          id="override-reason"
          label="Reason"
          field="reason"
          multiline
          required
          maxLength={COMMENT_MAX_LENGTH}
          value={reason}
          onChange={setReason}
        />
      </Confirm>
    </section>
  );
}
