import type { Segment, UpdateSegmentInput } from "@flagstaff/sdk";
import { useEffect, useRef, useState } from "react";
import { FlagList, ListRows, ListTable, NewButton, usePaged } from "../lists.js";
import {
  DeleteZone,
  ErrorText,
  enc,
  Link,
  Loading,
  navigate,
  Pager,
  SubmitOrCancel,
  useAction,
  useApp,
  useTagged,
} from "../ui.js";
import { when } from "../format.js";
import { MembersPanel } from "./members.js";
import { SegmentConditionsPanel } from "./segment-conditions.js";

export function SegmentsPage() {
  const { conn, project } = useApp();
  const [creating, setCreating] = useState(false);
  const list = usePaged((page) => conn.client.segments.list(project).page(page), [project]);
  return (
    <section aria-labelledby="segments-title">
      <div className="title-row">
        <h1 id="segments-title">Segments</h1>
        <NewButton label="New segment" reasonId="segments-ro" onClick={() => setCreating(true)} />
      </div>
      {creating && <NewSegment onDone={() => setCreating(false)} />}
      <ErrorText error={list.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what="segments"
        empty="No segments yet."
        label="Segments"
        columns={["Name", "Description", "Members", "Created"]}
        row={(s) => (
          <tr key={s.id}>
            <td>
              <Link to={`/p/${enc(project)}/segments/${enc(s.id)}`}>{s.name}</Link>
            </td>
            <td>{s.description}</td>
            <td>{s.actorsCount.toLocaleString()}</td>
            <td>{when(s.createdAt)}</td>
          </tr>
        )}
      />
      <Pager {...list.paging} label="Segments" />
    </section>
  );
}

function NewSegment(props: { onDone: () => void }) {
  const { conn, project } = useApp();
  const [name, setName] = useState("");
  const [description, setDescription] = useState("");
  const action = useAction();
  return (
    <form
      className="card"
      aria-label="New segment"
      onSubmit={async (e) => {
        e.preventDefault();
        let id = "";
        const ok = await action.run(async () => {
          id = (await conn.client.segments.create(project, { name, description })).id;
        });
        if (ok) navigate(`/p/${enc(project)}/segments/${enc(id)}`);
      }}
    >
      <h2>New segment</h2>
      <p>
        <label>
          Name
          <input required value={name} onChange={(e) => setName(e.target.value)} />
        </label>
      </p>
      <p>
        <label>
          Description
          <input value={description} onChange={(e) => setDescription(e.target.value)} />
        </label>
      </p>
      <ErrorText error={action.error} />
      <SubmitOrCancel label="Create segment" busy={action.busy} onCancel={props.onDone} />
    </form>
  );
}

export function SegmentPage(props: { id: string }) {
  const { conn, project, canWrite, environment } = useApp();
  const {
    data: segment,
    etag,
    patch,
    conflicts,
  } = useTagged(
    () => conn.client.segments.getWithETag(project, props.id),
    (input: UpdateSegmentInput, ifMatch) => conn.client.segments.updateWithETag(project, props.id, input, { ifMatch }),
    [project, props.id],
  );
  const flags = usePaged((page) => conn.client.flags.listForSegment(project, props.id).page(page), [project, props.id]);
  // The members and the flags load beside the segment itself, not after it: on a very large segment the
  // segment's own answer may be the slowest of the three.
  const s = segment.data;
  if (s === undefined && segment.error) {
    return (
      <section>
        <h1>Segment</h1>
        <ErrorText error={segment.error} />
      </section>
    );
  }
  return (
    <article aria-labelledby="segment-title">
      <p className="crumbs">
        <Link to={`/p/${enc(project)}/segments`}>Segments</Link> /
      </p>
      <h1 id="segment-title">{s?.name ?? "Segment"}</h1>
      {s === undefined && <Loading what="the segment" />}
      {s && (
        <p className="muted">
          {s.actorsCount.toLocaleString()} member{s.actorsCount === 1 ? "" : "s"} · created {when(s.createdAt)} · id{" "}
          <code>{s.id}</code>
        </p>
      )}
      {s && <SegmentFields segment={s} patch={patch} etag={etag} conflicts={conflicts} />}
      {s && <SegmentConditionsPanel segment={s} patch={patch} etag={etag} />}
      <MembersPanel
        id="segment-members"
        title="Members"
        noun="member"
        count={s?.actorsCount}
        load={(q, page) => conn.client.segments.actors(project, props.id, { q }).page(page)}
        add={(ids) => patch({ addActors: ids })}
        remove={(id) => patch({ removeActors: [id] })}
        changed={() => void segment.reload()}
      />
      <section className="card" aria-labelledby="segment-flags-title">
        <h2 id="segment-flags-title">Flags that use it</h2>
        <p className="help">Flags on for every member of this segment in {environment?.name}.</p>
        <ErrorText error={flags.error} />
        <ListRows rows={flags.data?.data} empty="No flag uses this segment.">
          {(rows) => <FlagList flags={rows} />}
        </ListRows>
        <Pager {...flags.paging} label="Flags of the segment" />
      </section>
      {canWrite && s && <DeleteSegment segment={s} etag={etag} />}
    </article>
  );
}

function SegmentFields(props: {
  segment: Segment;
  patch: (input: UpdateSegmentInput, basis?: string) => Promise<void>;
  etag: () => string | undefined;
  conflicts: number;
}) {
  const { canWrite, readOnlyReason } = useApp();
  const [name, setName] = useState(props.segment.name);
  const [description, setDescription] = useState(props.segment.description);
  const [dirty, setDirtyState] = useState(false);
  // The version the edits started from: a change made elsewhere since then is refused (412), not overwritten.
  const basis = useRef<string | undefined>(undefined);
  const setDirty = (on: boolean) => {
    if (on && !dirty) basis.current = props.etag();
    setDirtyState(on);
  };
  useEffect(() => {
    if (props.conflicts > 0) setDirtyState(false);
  }, [props.conflicts]);
  const action = useAction();
  useEffect(() => {
    if (!dirty) {
      setName(props.segment.name);
      setDescription(props.segment.description);
    }
  }, [props.segment.name, props.segment.description, dirty]);
  return (
    <form
      className="card"
      aria-labelledby="segment-fields-title"
      onSubmit={async (e) => {
        e.preventDefault();
        const input: { name?: string; description?: string } = {};
        if (name !== props.segment.name) input.name = name;
        if (description !== props.segment.description) input.description = description;
        if (await action.run(() => props.patch(input, basis.current))) setDirty(false);
      }}
    >
      <h2 id="segment-fields-title">Name and description</h2>
      <div className="grid2">
        <p>
          <label htmlFor="segment-name">Name</label>
          <input
            id="segment-name"
            required
            disabled={!canWrite}
            value={name}
            onChange={(e) => {
              setDirty(true);
              setName(e.target.value);
            }}
          />
        </p>
        <p>
          <label htmlFor="segment-description">Description</label>
          <input
            id="segment-description"
            disabled={!canWrite}
            value={description}
            onChange={(e) => {
              setDirty(true);
              setDescription(e.target.value);
            }}
          />
        </p>
      </div>
      <ErrorText error={action.error} />
      <button type="submit" disabled={!canWrite || !dirty || action.busy}>
        Save
      </button>
      {!canWrite && <p className="help">{readOnlyReason}</p>}
    </form>
  );
}

function DeleteSegment(props: { segment: Segment; etag: () => string | undefined }) {
  const { conn, project } = useApp();
  return (
    <DeleteZone
      noun="segment"
      name={props.segment.name}
      etag={props.etag}
      remove={(ifMatch) => conn.client.segments.delete(project, props.segment.id, { ifMatch })}
      after={`/p/${enc(project)}/segments`}
    >
      <p>It is detached from every flag that uses it.</p>
    </DeleteZone>
  );
}
