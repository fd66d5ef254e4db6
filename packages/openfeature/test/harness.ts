// The server's test helpers. Their types come from the server's sources (tsc -b builds them through the
// project reference); at run time the compiled helpers are loaded relative to this compiled file,
// packages/openfeature/dist/test/harness.js → packages/server/dist/test/helpers/*.js.
import type * as ServerHarness from "../../server/test/helpers/server.js";
import type * as ProxyModule from "../../server/test/helpers/tcp-proxy.js";

const helpers = new URL("../../../server/dist/test/helpers/", import.meta.url);

/** The server package's test harness: startServer, DIALECTS, ADMIN_KEY, createProject, createKey. */
export const harness: typeof ServerHarness = await import(new URL("server.js", helpers).href);

/** A TCP proxy tests can cut and restore, to take the server away from a provider and give it back. */
export const { TcpProxy }: typeof ProxyModule = await import(new URL("tcp-proxy.js", helpers).href);

export type { TestServer } from "../../server/test/helpers/server.js";
