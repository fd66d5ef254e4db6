import { Type } from "typebox";
import { environmentNotFound, projectNotFound } from "../../kernel/errors.js";
import { requestEnvironment } from "../environment.js";
import { EnvironmentQuery, ProjectParams } from "../../kernel/schemas.js";
import { errorResponses } from "../schemas.js";
import type { TypedApp } from "../typed-app.js";
import type { Snapshot } from "../../features/evaluation/snapshot.js";
import type { ProjectStreams } from "../../features/stream/project-streams.js";
import {
  EventStreamAnswer,
  LastEventIdHeaders,
  lastEventId,
  openEventStream,
} from "../../features/stream/event-stream-response.js";
import { STREAM_ENCODING_HEADER, wantsGzip } from "../../features/stream/gzip-members.js";
import { admitStream } from "../../features/stream/stream-admission.js";

export function streamRoutes(app: TypedApp, streams: ProjectStreams, snapshot: Snapshot): void {
  app.get(
    "/projects/:projectId/stream",
    {
      config: { access: "read" },
      // A HEAD would open a stream with no end: only GET.
      exposeHeadRoute: false,
      schema: {
        tags: ["evaluation"],
        summary: "Follow a project's evaluation state as server-sent events (extension; read)",
        description:
          "text/event-stream. First a `snapshot` event (the whole state, `{version, state}`), or, with a " +
          "`Last-Event-ID` the change log still holds, the changes after it; then one `change` event " +
          "(`{version, changes}`) per committed change, its id the project version; a comment every 15 s. " +
          "A resume further behind than the replay bound gets a snapshot. Refused with 429 (this key holds " +
          "STREAM_MAX_PER_KEY streams here) or 503 (this instance holds STREAM_MAX_PER_INSTANCE), with Retry-After. " +
          "It never carries a key or any secret. It follows the key's environment (or the one named by `environment`, for a key bound to none; the " +
          "default's otherwise). It ends when the key is revoked, the session that opened it ends (within " +
          "STREAM_SESSION_CHECK_MS when it ends on another instance or by time), the project or its environment " +
          "deleted or the server stops; reconnect with Last-Event-ID (an id from before the project was created, such as " +
          "one of a deleted project of the same id, gets a fresh snapshot). A 401, 403 or 404 on reconnecting " +
          "means the key or the project is gone: stop. With `Flagstaff-Stream-Encoding: gzip` the answer is " +
          "`Content-Encoding: gzip`, each event a gzip member of its own (a reader must read every member: " +
          "Node.js does, Chromium does not). See docs/streaming.md.",
        params: ProjectParams,
        querystring: EnvironmentQuery,
        headers: Type.Object({
          ...LastEventIdHeaders.properties,
          [STREAM_ENCODING_HEADER]: Type.Optional(
            Type.String({ maxLength: 16, description: "gzip: each event as a gzip member of its own" }),
          ),
        }),
        response: {
          200: EventStreamAnswer,
          ...errorResponses(400, 401, 403, 404, 429, 500, 503),
        },
      },
    },
    async (request, reply) => {
      const { projectId } = request.params;
      const project = snapshot.projects.get(projectId);
      if (!project) throw projectNotFound(projectId);
      const environment = requestEnvironment(request);
      if (!project.state(environment)) throw environmentNotFound(project.resolve(environment));
      // A principal is always there: the route requires a read key.
      const holder = request.principal as NonNullable<typeof request.principal>;
      admitStream(streams, "state", holder.keyId, reply);
      const resumeFrom = lastEventId(request.headers["last-event-id"]);
      const gzip = wantsGzip(request.headers[STREAM_ENCODING_HEADER]);
      await streams.open(openEventStream(reply, gzip), projectId, environment, holder, resumeFrom, gzip);
    },
  );
}
