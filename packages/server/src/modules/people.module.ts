import type { FastifyBaseLogger, FastifyRequest } from "fastify";
import type { Config } from "../kernel/config.js";
import type { TypedApp } from "../http/typed-app.js";
import type { FeatureDeps, FeatureModule } from "./feature-module.js";
import { authRoutes, oidcRoutes } from "../http/routes/auth.routes.js";
import type { PeopleState } from "../access/people-state.js";
import { peopleRoutes } from "../http/routes/people.routes.js";
import { PeopleService } from "../features/people/people.service.js";
import { Sessions } from "../features/people/sessions.js";
import { SignInService } from "../features/people/sign-in.service.js";

export interface PeopleModuleDeps extends FeatureDeps {
  readonly config: Config;
  /** The snapshot's people, which sessions and the people service keep current. */
  readonly people: PeopleState;
  readonly log: FastifyBaseLogger;
  /** The server's own origin for a request; authentication uses it too, so app.ts makes it. */
  readonly ownOrigin: (request: FastifyRequest) => string;
}

/**
 * People, sessions and signing in (password, link, OIDC). app.ts hands `sessions` to authentication (its
 * hook is registered after this is built) and to the streams, which end with a session.
 */
export function peopleModule({
  db,
  work,
  clock,
  config,
  people: peopleState,
  log,
  ownOrigin,
}: PeopleModuleDeps): FeatureModule<{ sessions: Sessions; people: PeopleService }> {
  const sessions = new Sessions(db, clock, peopleState, {
    idleMs: config.sessionIdleMs,
    maxMs: config.sessionMaxMs,
    secure: config.publicUrl?.startsWith("https:") ?? false,
    logger: log,
  });
  const people = new PeopleService(db, work, clock, peopleState, sessions);
  const signIn = new SignInService(db, clock);
  const routes = (app: TypedApp) => {
    peopleRoutes(app, people, sessions, signIn, { passwordSignIn: config.passwordSignIn });
    authRoutes(app, signIn, sessions, {
      passwordSignIn: config.passwordSignIn,
      oidcName: config.oidc?.name,
      ownOrigin,
    });
    if (config.oidc !== undefined && config.publicUrl !== undefined) {
      oidcRoutes(app, {
        settings: { ...config.oidc, redirectUri: `${config.publicUrl}/auth/oidc/callback` },
        secure: config.publicUrl.startsWith("https:"),
        clock,
        db,
        people,
        sessions,
        log,
      });
    }
  };
  return { services: { sessions, people }, routes };
}
