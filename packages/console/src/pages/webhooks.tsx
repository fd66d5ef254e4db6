import type { CreatedWebhook, Webhook, WebhookDelivery, WebhookEventPattern } from "@flagstaff/sdk";
import { Fragment, useState } from "react";
import { ListRows, usePaged } from "../lists.js";
import { Confirm, CopyButton, ErrorText, Loading, Pager, useAction, useApp, useData } from "../ui.js";
import { ago, when } from "../format.js";

export function WebhooksPage() {
  const { conn, project } = useApp();
  const [created, setCreated] = useState<CreatedWebhook | undefined>(undefined);
  const [open, setOpen] = useState<string | undefined>(undefined);
  const [deleting, setDeleting] = useState<Webhook | undefined>(undefined);
  const list = usePaged((page) => conn.client.webhooks.list(project).page(page), [project]);
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
      <ListRows rows={list.data?.data} loading={list.loading} what="webhooks" empty="No webhooks.">
        {(rows) =>
          rows.map((w) => (
            <section key={w.id} className="card" aria-label={`Webhook ${w.url}`}>
              <h2 className="small-h">
                <code>{w.url}</code>{" "}
                <span className={`badge ${w.enabled ? "status-enabled" : "status-disabled"}`}>
                  {w.enabled ? "enabled" : "disabled"}
                </span>
              </h2>
              <DeliveryHealth id={w.id} />
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
          ))
        }
      </ListRows>
      <Pager {...list.paging} label="Webhooks" />
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

/** How many of the newest deliveries the health badge looks at. */
const RECENT = 5;

/**
 * Whether the webhook's receiver is failing: of its newest deliveries, every one that was tried has
 * failed (given up, or waiting for a retry after a failed attempt). Then the last error and when the next
 * attempt is due, so a broken receiver is seen on the list without opening the deliveries.
 */
export function deliveryHealth(
  recent: readonly WebhookDelivery[],
):
  | { failing: false }
  | { failing: true; lastError: string; lastAttemptAt: string | null; nextAttemptAt: string | null } {
  const tried = recent.filter((d) => d.attempts > 0 && d.lastAttemptAt !== null);
  if (tried.length === 0 || tried.some((d) => d.status === "succeeded")) return { failing: false };
  const newest = [...tried].sort((a, b) => (b.lastAttemptAt ?? "").localeCompare(a.lastAttemptAt ?? ""))[0]!;
  const retries = tried
    .filter((d) => d.status === "pending" && d.nextAttemptAt !== null)
    .map((d) => d.nextAttemptAt as string)
    .sort();
  return {
    failing: true,
    lastError: newest.lastError ?? (newest.lastStatusCode === null ? "no answer" : `HTTP ${newest.lastStatusCode}`),
    lastAttemptAt: newest.lastAttemptAt,
    nextAttemptAt: retries[0] ?? null,
  };
}

/** "in 12 s", "in 3 min", or "now" for a time due already. */
function dueIn(iso: string, now = Date.now()): string {
  const seconds = Math.round((Date.parse(iso) - now) / 1000);
  if (seconds <= 0) return "now";
  if (seconds < 90) return `in ${seconds} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 90) return `in ${minutes} min`;
  return `in ${Math.round(minutes / 60)} h`;
}

function DeliveryHealth(props: { id: string }) {
  const { conn, project } = useApp();
  const recent = useData(
    () => conn.client.webhooks.deliveries(project, props.id).page({ limit: RECENT }),
    [project, props.id],
  );
  if (!recent.data) return null;
  const health = deliveryHealth(recent.data.data);
  if (!health.failing) return null;
  return (
    <p className="failing-note" data-testid="webhook-failing">
      <span className="badge failing">failing</span> Its recent deliveries all failed. Last error:{" "}
      <strong>{health.lastError}</strong>
      {health.lastAttemptAt && ` (${ago(health.lastAttemptAt)})`}.{" "}
      {health.nextAttemptAt ? (
        <>
          Next retry{" "}
          <time dateTime={health.nextAttemptAt} title={when(health.nextAttemptAt)}>
            {dueIn(health.nextAttemptAt)}
          </time>
          .
        </>
      ) : (
        "No retry is pending: those deliveries were given up."
      )}
    </p>
  );
}

function Deliveries(props: { id: string }) {
  const { conn, project } = useApp();
  const [opened, setOpened] = useState<string | undefined>(undefined);
  const list = usePaged((page) => conn.client.webhooks.deliveries(project, props.id).page(page), [project, props.id], {
    limit: 10,
    pollMs: 2000,
  });
  return (
    <div>
      <ErrorText error={list.error} />
      {list.data && list.data.data.length === 0 && <p>No deliveries yet.</p>}
      {list.data && list.data.data.length > 0 && (
        <div className="table-scroll">
          <table aria-label="Deliveries">
            <thead>
              <tr>
                <th scope="col">Event</th>
                <th scope="col">Status</th>
                <th scope="col">Attempts</th>
                <th scope="col">Last answer</th>
                <th scope="col">Next attempt</th>
                <th scope="col">Created</th>
                <th scope="col">Payload</th>
              </tr>
            </thead>
            <tbody>
              {list.data.data.map((d) => (
                <Fragment key={d.id}>
                  <tr>
                    <td>{d.eventType}</td>
                    <td>{d.status}</td>
                    <td>{d.attempts}</td>
                    <td>{d.lastError ?? d.lastStatusCode ?? "—"}</td>
                    <td>{d.nextAttemptAt ? when(d.nextAttemptAt) : "—"}</td>
                    <td>{when(d.createdAt)}</td>
                    <td>
                      <button
                        type="button"
                        aria-expanded={opened === d.id}
                        aria-controls={opened === d.id ? `payload-${d.id}` : undefined}
                        aria-label={`Payload of ${d.eventType} ${d.id}`}
                        onClick={() => setOpened(opened === d.id ? undefined : d.id)}
                      >
                        {opened === d.id ? "Hide" : "Open"}
                      </button>
                    </td>
                  </tr>
                  {opened === d.id && (
                    <tr>
                      <td colSpan={7} id={`payload-${d.id}`}>
                        <Payload webhookId={props.id} deliveryId={d.id} />
                      </td>
                    </tr>
                  )}
                </Fragment>
              ))}
            </tbody>
          </table>
        </div>
      )}
      {list.data === undefined && <Loading what="deliveries" />}
      <Pager {...list.paging} label="Deliveries" />
    </div>
  );
}

/** The JSON body a delivery POSTs (GET …/deliveries/{id}); it never changes, so it is loaded once. */
function Payload(props: { webhookId: string; deliveryId: string }) {
  const { conn, project } = useApp();
  const delivery = useData(
    () => conn.client.webhooks.delivery(project, props.webhookId, props.deliveryId),
    [project, props.webhookId, props.deliveryId],
    0,
  );
  if (delivery.error) return <ErrorText error={delivery.error} />;
  if (!delivery.data) return <Loading what="the payload" />;
  return <pre data-testid="payload">{JSON.stringify(delivery.data.payload, null, 2)}</pre>;
}
