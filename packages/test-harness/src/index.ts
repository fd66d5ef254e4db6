// The test harness every package's tests use. Importing it registers the file-level cleanup (cleanup.ts).
export { type Resource, track } from "./cleanup.js";
export { DIALECTS, type FreshDatabase, freshDatabase, POSTGRES_URL } from "./database.js";
export { DATABASE_PREFIX, databaseOwner, newDatabaseName } from "./database-names.js";
export {
  ADMIN_KEY,
  type ApiResponse,
  checkState,
  DEFAULT_REQUEST_TIMEOUT_MS,
  expectProblem,
  expectStatus,
  httpRequest,
  type RequestOptions,
} from "./http.js";
export { createKey, createProject, type StartOptions, startServer, type TestServer } from "./in-process.js";
export { ManualClock } from "./manual-clock.js";
export {
  assertConforms,
  ConformanceError,
  forgetDocument,
  loadDocument,
  OpenApiDocument,
} from "./openapi-conformance.js";
export { freePort } from "./ports.js";
export {
  type Exit,
  type LaunchOptions,
  launchServer,
  SERVER_MAIN,
  ServerProcess,
  type SpawnOptions,
  spawnServer,
} from "./server-process.js";
export { TcpProxy } from "./tcp-proxy.js";
export { timeUntil, type WaitOptions, waitFor, withDeadline } from "./wait.js";
export { type Answer, type ReceivedWebhook, WebhookReceiver } from "./webhook-receiver.js";
export { EventStreamClient, type OpenStreamOptions, type StreamEvent } from "./event-stream.js";
export { browserSkip, CHROMIUM, closeBrowser, launchChromium } from "./chromium.js";
export {
  cancelSignInAt,
  type OidcProviderOptions,
  type OidcTestAccount,
  type OidcTestClient,
  type OidcTestProvider,
  signInAt,
  signInInBrowser,
  startOidcProvider,
} from "./oidc-provider.js";
