import type { Project } from "@flagstaff/sdk";
import { useState } from "react";
import { Confirm, type Cursor, ErrorText, enc, Link, Loading, Pager, useAction, useApp, useData, when } from "../ui.js";

export function ProjectsPage() {
  const { conn } = useApp();
  const [cursor, setCursor] = useState<Cursor>({});
  const [deleting, setDeleting] = useState<Project | undefined>(undefined);
  const list = useData(() => conn.client.projects.list().page({ limit: 20, ...cursor }), [cursor.before, cursor.after]);
  const remove = useAction();
  const create = useAction();
  const [id, setId] = useState("");
  const [name, setName] = useState("");
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
      </form>
      <ErrorText error={list.error} />
      <ErrorText error={remove.error} />
      {list.data === undefined && list.loading && <Loading what="projects" />}
      {list.data && list.data.data.length === 0 && <p>No projects yet.</p>}
      {list.data && list.data.data.length > 0 && (
        <table aria-label="Projects">
          <thead>
            <tr>
              <th scope="col">Id</th>
              <th scope="col">Name</th>
              <th scope="col">Created</th>
              <th scope="col">
                <span className="visually-hidden">Actions</span>
              </th>
            </tr>
          </thead>
          <tbody>
            {list.data.data.map((p) => (
              <tr key={p.id}>
                <td>
                  <Link to={`/p/${enc(p.id)}/flags`}>{p.id}</Link>
                </td>
                <td>{p.name}</td>
                <td>{when(p.createdAt)}</td>
                <td>
                  <button
                    type="button"
                    className="danger"
                    aria-label={`Delete project ${p.id}`}
                    onClick={() => setDeleting(p)}
                  >
                    Delete
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      <Pager
        page={list.data}
        label="Projects"
        onPrevious={(before) => setCursor({ before })}
        onNext={(after) => setCursor({ after })}
      />
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
