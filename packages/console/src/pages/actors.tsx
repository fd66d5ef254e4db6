import { isFlagstaffError } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { type Cursor, ErrorText, enc, Link, Loading, navigate, Pager, StatusBadge, useApp, useData } from "../ui.js";
import { when } from "../format.js";

export function ActorsPage(props: { actorId: string | undefined }) {
  const { project } = useApp();
  const [text, setText] = useState(props.actorId ?? "");
  useEffect(() => setText(props.actorId ?? ""), [props.actorId]);
  return (
    <section aria-labelledby="actors-title">
      <h1 id="actors-title">Actors</h1>
      <search>
        <form
          className="inline"
          onSubmit={(e) => {
            e.preventDefault();
            if (text.trim()) navigate(`/p/${enc(project)}/actors/${enc(text.trim())}`);
          }}
        >
          <label htmlFor="actor-id">Actor id</label>
          <input id="actor-id" value={text} onChange={(e) => setText(e.target.value)} />
          <button type="submit">Look up</button>
        </form>
      </search>
      {props.actorId && <ActorDetails actorId={props.actorId} />}
    </section>
  );
}

function ActorDetails(props: { actorId: string }) {
  const { conn, project, environment } = useApp();
  const [flagCursor, setFlagCursor] = useState<Cursor>({});
  const [segmentCursor, setSegmentCursor] = useState<Cursor>({});
  const profile = useData(async () => {
    try {
      return await conn.client.actors.get(project, props.actorId);
    } catch (error) {
      if (isFlagstaffError(error, "actor_not_found")) return null;
      throw error;
    }
  }, [project, props.actorId]);
  const flags = useData(
    () => conn.client.flags.listForActor(project, props.actorId).page({ limit: 20, ...flagCursor }),
    [project, props.actorId, flagCursor.before, flagCursor.after],
  );
  const segments = useData(
    () => conn.client.segments.listForActor(project, props.actorId).page({ limit: 20, ...segmentCursor }),
    [project, props.actorId, segmentCursor.before, segmentCursor.after],
  );
  return (
    <article aria-labelledby="actor-title">
      <h2 id="actor-title">{props.actorId}</h2>
      <section className="card" aria-label="Profile">
        <ErrorText error={profile.error} />
        {profile.data === undefined && profile.loading && <Loading what="the profile" />}
        {profile.data === null && <p>This actor was never seen in this project: no profile, no segments.</p>}
        {profile.data && (
          <dl className="pairs">
            <dt>Name</dt>
            <dd>{profile.data.name ?? "—"}</dd>
            <dt>Image</dt>
            <dd>{profile.data.imageURL ?? "—"}</dd>
            <dt>First seen</dt>
            <dd>{when(profile.data.createdAt)}</dd>
          </dl>
        )}
      </section>
      <section className="card" aria-labelledby="actor-flags-title">
        <h3 id="actor-flags-title">Flags enabled for this actor in {environment?.name}</h3>
        <ErrorText error={flags.error} />
        {flags.data && flags.data.data.length === 0 && <p>No flag is enabled for this actor.</p>}
        {flags.data && flags.data.data.length > 0 && (
          <ul className="plain">
            {flags.data.data.map((f) => (
              <li key={f.id}>
                <Link to={`/p/${enc(project)}/flags/${enc(f.name)}`}>{f.name}</Link> <StatusBadge status={f.status} />
              </li>
            ))}
          </ul>
        )}
        <Pager
          page={flags.data}
          label="Flags of the actor"
          onPrevious={(before) => setFlagCursor({ before })}
          onNext={(after) => setFlagCursor({ after })}
        />
      </section>
      <section className="card" aria-labelledby="actor-segments-title">
        <h3 id="actor-segments-title">Segments this actor is in</h3>
        <ErrorText error={segments.error} />
        {segments.data && segments.data.data.length === 0 && <p>In no segment.</p>}
        {segments.data && segments.data.data.length > 0 && (
          <ul className="plain">
            {segments.data.data.map((s) => (
              <li key={s.id}>
                <Link to={`/p/${enc(project)}/segments/${enc(s.id)}`}>{s.name}</Link>
              </li>
            ))}
          </ul>
        )}
        <Pager
          page={segments.data}
          label="Segments of the actor"
          onPrevious={(before) => setSegmentCursor({ before })}
          onNext={(after) => setSegmentCursor({ after })}
        />
      </section>
    </article>
  );
}
