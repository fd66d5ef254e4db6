import { isFlagstaffError } from "@flagstaff/sdk";
import { useEffect, useState } from "react";
import { FlagList, ListRows, usePaged } from "../lists.js";
import { ErrorText, enc, Link, Loading, navigate, Pager, useApp, useData } from "../ui.js";
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
  const profile = useData(async () => {
    try {
      return await conn.client.actors.get(project, props.actorId);
    } catch (error) {
      if (isFlagstaffError(error, "actor_not_found")) return null;
      throw error;
    }
  }, [project, props.actorId]);
  const flags = usePaged(
    (page) => conn.client.flags.listForActor(project, props.actorId).page(page),
    [project, props.actorId],
  );
  const segments = usePaged(
    (page) => conn.client.segments.listForActor(project, props.actorId).page(page),
    [project, props.actorId],
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
        <ListRows rows={flags.data?.data} empty="No flag is enabled for this actor.">
          {(rows) => <FlagList flags={rows} />}
        </ListRows>
        <Pager {...flags.paging} label="Flags of the actor" />
      </section>
      <section className="card" aria-labelledby="actor-segments-title">
        <h3 id="actor-segments-title">Segments this actor is in</h3>
        <ErrorText error={segments.error} />
        <ListRows rows={segments.data?.data} empty="In no segment.">
          {(rows) => (
            <ul className="plain">
              {rows.map((s) => (
                <li key={s.id}>
                  <Link to={`/p/${enc(project)}/segments/${enc(s.id)}`}>{s.name}</Link>
                </li>
              ))}
            </ul>
          )}
        </ListRows>
        <Pager {...segments.paging} label="Segments of the actor" />
      </section>
    </article>
  );
}
