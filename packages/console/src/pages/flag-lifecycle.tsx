// A flag's lifecycle on its page (docs/lifecycle.md): what it is for (its kind), whether it stays
// (permanent), why it is stale, and archiving and restoring it.
import { FLAG_KINDS, type Flag, type FlagKind, type UpdateFlagInput } from "@flagstaff/sdk";
import { ErrorText, useAction, useApp } from "../ui.js";
import { STALE_WORDS } from "./usage.js";

const KIND_WORDS: Record<FlagKind, string> = {
  release: "Release: ships a change gradually, then goes",
  experiment: "Experiment: an A/B test, then goes",
  operational: "Operational: a switch operators keep",
  "kill-switch": "Kill switch: turns a feature off in an incident",
  permission: "Permission: an entitlement that stays",
};

/** Kind, permanence and staleness, changed at once (they change nothing an environment serves), and Archive. */
export function Lifecycle(props: {
  flag: Flag;
  etag: () => string | undefined;
  patch: (input: UpdateFlagInput) => Promise<void>;
  changed: () => void;
}) {
  const { conn, project, canWrite } = useApp();
  const { flag } = props;
  const action = useAction();
  const set = (input: UpdateFlagInput) => void action.run(() => props.patch(input));
  return (
    <section className="card" aria-labelledby="flag-lifecycle-title">
      <h2 id="flag-lifecycle-title">Lifecycle</h2>
      <p className="help">
        A flag that outlives its kind's expected lifetime, that nothing evaluated for a month, or that answered one
        variant to everyone for a month is marked stale (the server's settings say how long): time to remove it from the
        code.
      </p>
      <label>
        Kind{" "}
        <select
          value={flag.kind}
          disabled={!canWrite || flag.archived || action.busy}
          onChange={(e) => set({ kind: e.target.value as FlagKind })}
        >
          {FLAG_KINDS.map((kind) => (
            <option key={kind} value={kind}>
              {KIND_WORDS[kind]}
            </option>
          ))}
        </select>
      </label>
      <p>
        <label className="check">
          <input
            type="checkbox"
            checked={flag.permanent}
            disabled={!canWrite || flag.archived || action.busy}
            onChange={(e) => set({ permanent: e.target.checked })}
          />{" "}
          Permanent: meant to stay, never stale
        </label>
      </p>
      <p data-testid="stale-state">
        {flag.stale && flag.staleReason !== null ? (
          <>
            <strong>Stale</strong> since {new Date(flag.staleSince ?? flag.updatedAt).toLocaleDateString()}:{" "}
            {STALE_WORDS[flag.staleReason]}.
          </>
        ) : (
          "Not stale."
        )}
      </p>
      {canWrite && !flag.archived && (
        <p>
          <button
            type="button"
            disabled={action.busy}
            onClick={() =>
              void action.run(async () => {
                await conn.client.flags.archive(project, flag.name, { ifMatch: props.etag() });
                props.changed();
              })
            }
          >
            Archive flag
          </button>{" "}
          <span className="muted small">
            Every environment then answers it as not found; its configuration, history and name are kept, and it can be
            restored.
          </span>
        </p>
      )}
      <ErrorText error={action.error} />
    </section>
  );
}

/** What an archived flag's page says first, with Restore. */
export function ArchivedNote(props: { flag: Flag; etag: () => string | undefined; changed: () => void }) {
  const { conn, project, canWrite } = useApp();
  const action = useAction();
  return (
    <div className="notice" role="status" data-testid="archived-note">
      <p>
        <strong>Archived</strong>
        {props.flag.archivedAt ? ` on ${new Date(props.flag.archivedAt).toLocaleString()}` : ""}: every environment
        answers it as not found, and it cannot be changed. Restore it to serve it again as it was, or delete it for good
        in Settings.
      </p>
      {canWrite && (
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            void action.run(async () => {
              await conn.client.flags.restore(project, props.flag.name, { ifMatch: props.etag() });
              props.changed();
            })
          }
        >
          Restore flag
        </button>
      )}
      <ErrorText error={action.error} />
    </div>
  );
}
