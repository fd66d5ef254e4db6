import type { Project } from "@flagstaff/sdk";
import { useState } from "react";
import { notAdminReason, roleIn } from "../api/access.js";
import { ListTable, usePaged } from "../lists.js";
import { Confirm, ErrorText, enc, Link, Pager, useAction, useApp } from "../ui.js";
import { when } from "../format.js";

/** Why a project's Delete is disabled for someone who may open it. */
const DELETE_REASON = "Only admins of a project delete it.";

export function ProjectsPage() {
  const { conn, session } = useApp();
  // Only admins create projects; a project's admins may delete it (docs/people.md, "Roles").
  const createBlocked = notAdminReason(session);
  const mayDelete = (id: string) => roleIn(session, id) === "admin";
  const [deleting, setDeleting] = useState<Project | undefined>(undefined);
  const list = usePaged((page) => conn.client.projects.list().page(page), []);
  const remove = useAction();
  const create = useAction();
  const [id, setId] = useState("");
  const [name, setName] = useState("");
  // A member granted no project yet has nothing to do here but ask: say so, rather than show a form they
  // may not use and an empty list.
  if (createBlocked && session.user && (session.grants ?? []).length === 0) {
    return (
      <section aria-labelledby="projects-title">
        <h1 id="projects-title">Projects</h1>
        <p className="notice" data-testid="no-project">
          You have no project yet. Ask a Flagstaff admin, or an admin of the project you work on, to give you access on
          its <strong>Access</strong> page: they will find you as <strong>{session.user.email}</strong>. The project
          then shows here, without signing in again.
        </p>
      </section>
    );
  }
  return (
    <section aria-labelledby="projects-title">
      <h1 id="projects-title">Projects</h1>
      <form
        className="card"
        aria-labelledby="new-project-title"
        onSubmit={async (e) => {
          e.preventDefault();
          if (
            await create.run(async () => {
              await conn.client.projects.create({ id: id.trim(), name: name.trim() });
            })
          ) {
            setId("");
            setName("");
            await list.reload();
          }
        }}
      >
        <h2 id="new-project-title">New project</h2>
        <fieldset
          disabled={createBlocked !== undefined}
          className="plain-fieldset"
          aria-describedby={createBlocked ? "new-project-blocked" : undefined}
        >
          <div className="grid2">
            <p>
              <label htmlFor="project-new-id">Project id</label>
              <input
                id="project-new-id"
                required
                value={id}
                onChange={(e) => setId(e.target.value)}
                aria-describedby="project-new-id-help"
              />
              <span id="project-new-id-help" className="help">
                Letters, digits, <code>. _ -</code>; it is used in URLs and cannot change.
              </span>
            </p>
            <p>
              <label htmlFor="project-new-name">Project name</label>
              <input id="project-new-name" required value={name} onChange={(e) => setName(e.target.value)} />
            </p>
          </div>
          <ErrorText error={create.error} />
          <button type="submit" className="primary" disabled={create.busy}>
            Create project
          </button>
        </fieldset>
        {createBlocked && (
          <p id="new-project-blocked" className="help">
            {createBlocked}
          </p>
        )}
      </form>
      <ErrorText error={list.error} />
      <ErrorText error={remove.error} />
      <ListTable
        rows={list.data?.data}
        loading={list.loading}
        what="projects"
        empty={
          createBlocked
            ? "You have access to no project yet. An admin, or an admin of a project, can give you access."
            : "No projects yet."
        }
        label="Projects"
        columns={["Id", "Name", session.user && "Your role", "Created"]}
        actions
        row={(p) => (
          <tr key={p.id}>
            <td>
              <Link to={`/p/${enc(p.id)}/flags`}>{p.id}</Link>
            </td>
            <td>{p.name}</td>
            {session.user && <td>{roleIn(session, p.id) ?? "—"}</td>}
            <td>{when(p.createdAt)}</td>
            <td>
              <button
                type="button"
                className="danger"
                aria-label={`Delete project ${p.id}`}
                disabled={!mayDelete(p.id)}
                aria-describedby={mayDelete(p.id) ? undefined : "project-delete-reason"}
                onClick={() => setDeleting(p)}
              >
                Delete
              </button>
            </td>
          </tr>
        )}
      />
      {list.data?.data.some((p) => !mayDelete(p.id)) && (
        <p id="project-delete-reason" className="help">
          {DELETE_REASON}
        </p>
      )}
      <Pager {...list.paging} label="Projects" />
      <Confirm
        open={deleting !== undefined}
        danger
        title={`Delete project ${deleting?.id ?? ""}?`}
        confirmLabel="Delete project"
        typeToConfirm={deleting?.id ?? ""}
        onCancel={() => setDeleting(undefined)}
        onConfirm={async () => {
          const p = deleting;
          setDeleting(undefined);
          if (p && (await remove.run(() => conn.client.projects.delete(p.id)))) await list.reload();
        }}
      >
        <p>Its flags, segments, actors and keys are deleted with it. This cannot be undone.</p>
      </Confirm>
    </section>
  );
}
