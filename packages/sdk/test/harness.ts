// The server's test harness. Its types come from the server's sources (tsc -b builds them through the
// project reference); at run time the compiled harness is loaded relative to this compiled file,
// packages/sdk/dist/test/harness.js → packages/server/dist/test/helpers/server.js.
import type * as ServerHarness from "../../server/test/helpers/server.js";

const harnessUrl = new URL("../../../server/dist/test/helpers/server.js", import.meta.url);

/** The server package's test harness: startServer, DIALECTS, ADMIN_KEY, createProject, createKey. */
export const harness: typeof ServerHarness = await import(harnessUrl.href);

export type { TestServer } from "../../server/test/helpers/server.js";
