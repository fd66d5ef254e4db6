// A flag's page: its header (status in each environment, Copy to…), then tabs (Targeting, Variants,
// Evaluate, Settings, History) over one set of pending changes with one Save (flag-pending.tsx). Every tab
// stays mounted while another is shown, so edits in one survive a look at another.
import type { Flag, UpdateFlagInput } from "@flagstaff/sdk";
import type { KeyboardEvent } from "react";
import { targetingSummary } from "../targeting-text.js";
import { oneOf, useUrlQuery } from "../url-state.js";
import { ListRows, usePaged } from "../lists.js";
import {
  ConfigurationRights,
  DeleteZone,
  ErrorText,
  enc,
  Loading,
  navigate,
  Pager,
  StatusBadge,
  useApp,
  useTagged,
} from "../ui.js";
import { when } from "../format.js";
import { EventList } from "./events.js";
import { CopyTo } from "./flag-copy.js";
import { EvaluatePanel, Snippets } from "./flag-evaluate.js";
import { Description, Percentages, StatusControl } from "./flag-fields.js";
import { FLAG_TABS, type FlagTab, PendingChanges } from "./flag-pending.js";
import { SegmentsPanel } from "./flag-segments.js";
import { attachedSummary } from "./flags.js";
import { Lifecycle, ArchivedNote } from "./flag-lifecycle.js";
import { StaleBadge, UsagePanel } from "./usage.js";
import { MembersPanel } from "./members.js";
import { AttributeSuggestions } from "./conditions-editor.js";
import { TargetingPanel } from "./targeting.js";
import { RolloutPlan } from "./rollout-plan.js";
import { VariantsPanel } from "./variants-editor.js";

const TAB_LABELS: Record<FlagTab, string> = {
  targeting: "Targeting",
  variants: "Variants",
  evaluate: "Evaluate",
  usage: "Usage",
  settings: "Settings",
  history: "History",
};

export function FlagPage(props: { name: string }) {
  const { conn, project, canWrite, environment, environments, protectedReason } = useApp();
  const [query, setQuery] = useUrlQuery();
  const tab = oneOf(query.get("tab"), FLAG_TABS, "targeting");
  const showTab = (next: FlagTab) => setQuery({ tab: next === "targeting" ? undefined : next });
  const {
    data: flag,
    etag,
    patch,
  } = useTagged(
    () => conn.client.flags.getWithETag(project, props.name),
    (input: UpdateFlagInput, ifMatch) => conn.client.flags.updateWithETag(project, props.name, input, { ifMatch }),
    [project, props.name],
  );

  if (flag.data === undefined) {
    return flag.error ? (
      <section>
        <h1>Flag {props.name}</h1>
        <ErrorText error={flag.error} />
      </section>
    ) : (
      <Loading what="the flag" />
    );
  }
  const f = flag.data;
  const panel = (id: FlagTab) => ({
    id: `flag-tab-${id}`,
    role: "tabpanel",
    "aria-labelledby": `flag-tab-${id}-label`,
    hidden: tab !== id,
    tabIndex: 0,
  });
  return (
    <article aria-labelledby="flag-title" className="flag-page">
      <p className="crumbs">
        <a
          href={`/console/p/${enc(project)}/flags`}
          onClick={(e) => {
            e.preventDefault();
            navigate(`/p/${enc(project)}/flags`);
          }}
        >
          Flags
        </a>{" "}
        /
      </p>
      <div className="title-row">
        <h1 id="flag-title">{f.name}</h1>
        <StatusBadge status={f.status} />
        <StaleBadge flag={f} />
        {f.archived && <span className="badge archived">archived</span>}
      </div>
      {f.archived && <ArchivedNote flag={f} etag={etag} changed={() => void flag.reload()} />}
      <div className="environment-row">
        <p data-testid="flag-environment">
          Editing <strong>{environment?.name}</strong>: the status, percentages, targeting and attached actors and
          segments are {environment?.name}'s only. The description and the variants are shared by every environment.
          {canWrite && protectedReason && (
            <>
              {" "}
              <strong data-testid="protected-note">{environment?.name} is protected</strong>: only admins of this
              project change its configurations.
            </>
          )}
          {(environment?.requiredApprovals ?? 0) > 0 && (
            <>
              {" "}
              <strong data-testid="approvals-note">
                {environment?.name} requires {environment?.requiredApprovals} approval
                {environment?.requiredApprovals === 1 ? "" : "s"}
              </strong>
              : saving opens a change request.
            </>
          )}
        </p>
        <CopyTo flag={f} changed={() => void flag.reload()} />
      </div>
      {environments.length > 1 && (
        <ul className="plain environment-statuses" aria-label="Status in each environment">
          {environments.map((e) => (
            <li key={e.id}>
              {e.name}: <StatusBadge status={f.environments[e.id]?.status ?? "unknown"} />
            </li>
          ))}
        </ul>
      )}
      <ErrorText error={flag.error} />
      <p className="muted">
        <span data-testid="targeting-summary">{targetingSummary(f)}</span> ·{" "}
        <span data-testid="attached-counts">{attachedSummary(f)}</span> · updated {when(f.updatedAt)} · last checked{" "}
        {when(f.latestCheckedAt)}
      </p>
      {/* The attribute names offered by the rules' and the Evaluate tab's attribute boxes. */}
      <AttributeSuggestions />
      <PendingChanges
        flag={f}
        etag={etag}
        patch={patch}
        request={async (input, options) => {
          const { comment: _comment, ...change } = input;
          const created = await conn.client.changeRequests.create(project, {
            environment: environment?.id ?? f.environment,
            title: options.title,
            ...(options.description ? { description: options.description } : {}),
            ...(options.scheduledAt ? { scheduledAt: options.scheduledAt } : {}),
            changes: [{ flag: f.name, patch: change, ...(options.basis ? { ifMatch: options.basis } : {}) }],
          });
          return `/p/${enc(project)}/changes/${enc(created.id)}`;
        }}
        onShowTab={showTab}
      >
        {(changed, atOnce) => (
          <>
            <Tabs selected={tab} changed={changed} onSelect={showTab} />
            <div {...panel("targeting")}>
              <ConfigurationRights>
                <StatusControl flag={f} />
                <Percentages flag={f} />
                <RolloutPlan flag={f} />
                <TargetingPanel flag={f} />
                <MembersPanel
                  id="flag-actors"
                  title="Attached actors"
                  noun="actor"
                  count={f.actorsCount}
                  load={(q, page) => conn.client.flags.actors(project, f.name, { q }).page(page)}
                  add={(ids) => atOnce({ addActors: ids })}
                  remove={(id) => atOnce({ removeActors: [id] })}
                  changed={() => void flag.reload()}
                />
                <SegmentsPanel flag={f} patch={atOnce} />
              </ConfigurationRights>
            </div>
            <div {...panel("variants")}>
              <VariantsPanel flag={f} />
            </div>
            <div {...panel("evaluate")}>
              <EvaluatePanel flag={f} />
              <Snippets flag={f} />
            </div>
            <div {...panel("usage")}>{tab === "usage" && <UsagePanel flag={f} />}</div>
            <div {...panel("settings")}>
              <Description flag={f} />
              <Lifecycle flag={f} etag={etag} patch={atOnce} changed={() => void flag.reload()} />
              {canWrite && <DeleteFlag flag={f} etag={etag} />}
            </div>
            <div {...panel("history")}>{tab === "history" && <FlagHistory flag={f} />}</div>
          </>
        )}
      </PendingChanges>
    </article>
  );
}

/**
 * The tab list (WAI-ARIA tabs: arrow keys, Home and End move between tabs, and choose as they move). A tab
 * whose forms hold unsaved edits says so.
 */
function Tabs(props: { selected: FlagTab; changed: ReadonlySet<FlagTab>; onSelect: (tab: FlagTab) => void }) {
  const onKeyDown = (event: KeyboardEvent<HTMLButtonElement>) => {
    const at = FLAG_TABS.indexOf(props.selected);
    const to =
      event.key === "ArrowRight"
        ? (at + 1) % FLAG_TABS.length
        : event.key === "ArrowLeft"
          ? (at - 1 + FLAG_TABS.length) % FLAG_TABS.length
          : event.key === "Home"
            ? 0
            : event.key === "End"
              ? FLAG_TABS.length - 1
              : undefined;
    if (to === undefined) return;
    event.preventDefault();
    const next = FLAG_TABS[to] as FlagTab;
    props.onSelect(next);
    document.getElementById(`flag-tab-${next}-label`)?.focus();
  };
  return (
    <div role="tablist" aria-label="The flag's parts" className="tabs">
      {FLAG_TABS.map((id) => (
        <button
          key={id}
          type="button"
          role="tab"
          id={`flag-tab-${id}-label`}
          aria-controls={`flag-tab-${id}`}
          aria-selected={props.selected === id}
          tabIndex={props.selected === id ? 0 : -1}
          onClick={() => props.onSelect(id)}
          onKeyDown={onKeyDown}
        >
          {TAB_LABELS[id]}
          {props.changed.has(id) && (
            <span className="unsaved-dot" title="Unsaved changes">
              <span className="visually-hidden"> (unsaved changes)</span>
            </span>
          )}
        </button>
      ))}
    </div>
  );
}

function FlagHistory(props: { flag: Flag }) {
  const { conn, project } = useApp();
  const events = usePaged(
    (page) => conn.client.events.listForFlag(project, props.flag.name).page(page),
    [project, props.flag.name],
    { limit: 10 },
  );
  return (
    <section className="card" aria-labelledby="flag-history-title">
      <h2 id="flag-history-title">History</h2>
      <ErrorText error={events.error} />
      <ListRows rows={events.data?.data} empty="No events.">
        {(rows) => <EventList events={rows} />}
      </ListRows>
      <Pager {...events.paging} label="History" />
    </section>
  );
}

function DeleteFlag(props: { flag: Flag; etag: () => string | undefined }) {
  const { conn, project } = useApp();
  return (
    <DeleteZone
      noun="flag"
      name={props.flag.name}
      etag={props.etag}
      remove={(ifMatch) => conn.client.flags.delete(project, props.flag.name, { ifMatch })}
      after={`/p/${enc(project)}/flags`}
    >
      <p>
        It is deleted in every environment, not only in this one: every check of it will answer 404 from now on. Its
        history stays.
      </p>
    </DeleteZone>
  );
}
