import type { CreatedWebhook, Webhook, WebhookEventPattern } from "@flagstaff/sdk";
import { useState } from "react";
import {
  Confirm,
  CopyButton,
  type Cursor,
  ErrorText,
  Loading,
  Pager,
  useAction,
  useApp,
  useData,
  when,
} from "../ui.js";

export function WebhooksPage() {
  const { conn, project } = useApp();
  const [cursor, setCursor] = useState<Cursor>({});
  const [created, setCreated] = useState<CreatedWebhook | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState<Webhook | undefined>(undefined);
  const list = useData(
    () => conn.client.webhooks.list(project).page({ limit: 20, ...cursor }),
    [project, cursor.before, cursor.after],
  );
  const action = useAction();
  const create = useAction();
  const [url, setUrl] = useState("");
  const [events, setEvents] = useState("*");
  const [description, setDescription] = useState("");
  return (
    <section aria-labelledby="webhooks-title">
      <h1 id="webhooks-title">Webhooks</h1>
      <form
        className="card"
        aria-labelledby="new-webhook-title"
        onSubmit={async (e) => {
          e.preventDefault();
          // Patterns are checked by the server, which answers a 400 on /events for an unknown one.
          const patterns = events.split(/[\s,]+/).filter(Boolean) as WebhookEventPattern[];
          let made: CreatedWebhook | undefined;
          if (
            await create.run(async () => {
              made = await conn.client.webhooks.create(project, { url: url.trim(), events: patterns, description });
            })
          ) {
            setCreated(made);
            setUrl("");
            setDescription("");
            await list.reload();
          }
        }}
      >
        <h2 id="new-webhook-title">New webhook</h2>
        <div className="grid2">
          <p>
            <label htmlFor="webhook-url">URL</label>
            <input id="webhook-url" type="url" required value={url} onChange={(e) => setUrl(e.target.value)} />
          </p>
          <p>
            <label htmlFor="webhook-events">Events</label>
            <input
              id="webhook-events"
              value={events}
              onChange={(e) => setEvents(e.target.value)}
              aria-describedby="webhook-events-help"
            />
            <span id="webhook-events-help" className="help">
              Event types or patterns, separated by spaces: <code>*</code>, <code>flag.*</code>,{" "}
              <code>segment.updated</code>…
            </span>
          </p>
          <p>
            <label htmlFor="webhook-description">Description</label>
            <input id="webhook-description" value={description} onChange={(e) => setDescription(e.target.value)} />
          </p>
        </div>
        <ErrorText error={create.error} />
        <button type="submit" className="primary" disabled={create.busy}>
          Create webhook
        </button>
      </form>
      {created && (
        <div className="card secret" role="alert">
          <h2>Webhook created</h2>
          <p className="warning">Copy the signing secret now: it is shown this once.</p>
          <p>
            <code>{created.secret}</code> <CopyButton text={created.secret} label="Copy signing secret" />
          </p>
          <button type="button" onClick={() => setCreated(undefined)}>
            I stored it
          </button>
        </div>
      )}
      <ErrorText error={list.error} />
      <ErrorText error={action.error} />
      {list.data === undefined && list.loading && <Loading what="webhooks" />}
      {list.data && list.data.data.length === 0 && <p>No webhooks.</p>}
      {list.data?.data.map((w) => (
        <section key={w.id} className="card" aria-label={`Webhook ${w.url}`}>
          <h2 className="small-h">
            <code>{w.url}</code>{" "}
            <span className={`badge ${w.enabled ? "status-enabled" : "status-disabled"}`}>
              {w.enabled ? "enabled" : "disabled"}
            </span>
          </h2>
          <p className="muted">
            {w.events.join(", ")} {w.description && `· ${w.description}`}{" "}
            {w.disabledReason && `· turned off: ${w.disabledReason}`}
          </p>
          <div className="row">
            <button
              type="button"
              onClick={() =>
                void action.run(async () => {
                  await conn.client.webhooks.update(project, w.id, { enabled: !w.enabled });
                  await list.reload();
                })
              }
            >
              {w.enabled ? "Disable" : "Enable"}
            </button>
            <button
              type="button"
              onClick={() =>
                void action.run(async () => {
                  await conn.client.webhooks.test(project, w.id);
                  setOpen(w.id);
                })
              }
            >
              Send test
            </button>
            <button
              type="button"
              aria-expanded={open === w.id}
              onClick={() => setOpen(open === w.id ? undefined : w.id)}
            >
              Recent deliveries
            </button>
            <button type="button" className="danger" onClick={() => setDeleting(w)}>
              Delete
            </button>
          </div>
          {open === w.id && <Deliveries id={w.id} />}
        </section>
      ))}
      <Pager
        page={list.data}
        label="Webhooks"
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
      <Confirm
        open={deleting !== undefined}
        danger
        title="Delete this webhook?"
        confirmLabel="Delete webhook"
        onCancel={() => setDeleting(undefined)}
        onConfirm={async () => {
          const w = deleting;
          setDeleting(undefined);
          if (w)
            await action.run(async () => {
              await conn.client.webhooks.delete(project, w.id);
              await list.reload();
            });
        }}
      >
        <p>{deleting?.url} receives nothing more.</p>
      </Confirm>
    </section>
  );
}

function Deliveries(props: { id: string }) {
  const { conn, project } = useApp();
  const [cursor, setCursor] = useState<Cursor>({});
  const list = useData(
    () => conn.client.webhooks.deliveries(project, props.id).page({ limit: 10, ...cursor }),
    [project, props.id, cursor.before, cursor.after],
    2000,
  );
  return (
    <div>
      <ErrorText error={list.error} />
      {list.data && list.data.data.length === 0 && <p>No deliveries yet.</p>}
      {list.data && list.data.data.length > 0 && (
        <table aria-label="Deliveries">
          <thead>
            <tr>
              <th scope="col">Event</th>
              <th scope="col">Status</th>
              <th scope="col">Attempts</th>
              <th scope="col">Last answer</th>
              <th scope="col">Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((d) => (
              <tr key={d.id}>
                <td>{d.eventType}</td>
                <td>{d.status}</td>
                <td>{d.attempts}</td>
                <td>{d.lastStatusCode ?? d.lastError ?? "—"}</td>
                <td>{when(d.createdAt)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {list.data === undefined && <Loading what="deliveries" />}
      <Pager
        page={list.data}
        label="Deliveries"
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
    </div>
  );
}
