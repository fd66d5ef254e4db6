// Which way imports may run, checked by `npm run lint` (dependency-cruiser). docs/architecture.md draws
// the layers. A back-up import fails the lint with the rule it breaks: there is no list of known ones to
// add to (the 28 the server had when the check came in were paid in issue 33).
const S = "^packages/server/src/";
const C = "^packages/core/src/";

// The server, bottom to top, one layer per folder: the kernel (kernel/: ids, clock, config, errors, the
// request and page shapes features share; db/: the database, its tables' shared helpers and the targeting
// columns); the domain (the caller as plain values in access/, the unit of work with its events and the
// change log in write-path/, each feature's services and repositories in features/<feature>/); the read
// model (the change feed, the snapshot, the checker, streams, metrics), which consumes the domain's events;
// the HTTP shell (http/: authentication, the fast path, OpenAPI, and every route in http/routes/; OFREP's
// answers in features/ofrep/); the composition (app.ts, main.ts, the admin-key command, and each feature's
// module in modules/), which nothing but the composition imports.
const kernel = `${S}(kernel|db)/`;
const httpShell = [`${S}http/`, `${S}features/ofrep/`];
const readModel = `${S}features/(evaluation|stream|metrics)/`;
const domain = [
  `${S}access/`,
  `${S}write-path/`,
  `${S}features/(flags|segments|environments|keys|people|projects|actors|history|webhooks|change-requests)/`,
];
const composition = [`${S}(app|main|admin-key-command)\\.ts$`, `${S}modules/`];

module.exports = {
  forbidden: [
    {
      name: "no-circular",
      comment: "No module imports itself through others.",
      severity: "error",
      from: { path: "^packages/(server|core)/src/" },
      to: { circular: true },
    },
    {
      name: "no-folder-cycle",
      comment:
        "No folder imports itself through other folders: each folder sits on a floor of its own (the features' order among themselves included: projects, then environments, keys, actors, segments, flags, people, …).",
      severity: "error",
      scope: "folder",
      from: { path: "^packages/(server|core)/src/" },
      to: { circular: true },
    },
    {
      name: "kernel-imports-nothing-above",
      severity: "error",
      from: { path: kernel },
      to: { path: S, pathNot: kernel },
    },
    {
      name: "domain-does-not-import-the-read-model",
      comment: "The read model consumes the domain's events; the domain does not know it.",
      severity: "error",
      from: { path: domain },
      to: { path: readModel },
    },
    {
      name: "domain-does-not-import-http",
      comment: "Services receive plain values (the caller, the environment); HTTP is the shell around them.",
      severity: "error",
      from: { path: domain },
      to: { path: httpShell },
    },
    {
      name: "read-model-imports-no-feature",
      comment:
        "The evaluation read model and its streams consume the domain's events and read rows through the narrow interfaces they declare (FlagRows, SegmentNames), which the modules satisfy with the features' repositories. (metrics/ reports the domain's own figures, such as webhooks' DeliveryMetrics, so it may name their types.)",
      severity: "error",
      from: { path: `${S}features/(evaluation|stream)/` },
      to: { path: domain, pathNot: [`${S}access/`, `${S}write-path/`] },
    },
    {
      name: "read-model-does-not-import-http",
      severity: "error",
      from: { path: readModel },
      to: { path: httpShell },
    },
    {
      name: "nothing-imports-the-composition",
      severity: "error",
      from: { path: S, pathNot: composition },
      to: { path: composition },
    },
    // Core, bottom to top: the contract (ids, limits, enums); the engine (rules, evaluation, bucketing);
    // the wire's schemas; the index.
    {
      name: "core-contract-imports-nothing-above",
      severity: "error",
      from: { path: `${C}contract/` },
      to: { path: C, pathNot: `${C}contract/` },
    },
    {
      name: "core-engine-does-not-import-the-wire",
      severity: "error",
      from: { path: `${C}(rules/|evaluation\\.ts|project-state\\.ts)` },
      to: { path: `${C}(schemas/|index\\.ts$|api-errors\\.ts$)` },
    },
    {
      name: "core-rules-import-no-root-module",
      comment:
        "rules/ is the engine's floor (with contract/ below it): the root's modules build on it, never the reverse, so core's folders import in no loop.",
      severity: "error",
      from: { path: `${C}rules/` },
      to: { path: `${C}[^/]+\\.ts$` },
    },
    {
      name: "core-nothing-imports-the-index",
      severity: "error",
      from: { path: C, pathNot: `${C}index\\.ts$` },
      to: { path: `${C}index\\.ts$` },
    },
  ],
  options: {
    tsPreCompilationDeps: true,
    tsConfig: { fileName: "tsconfig.base.json" },
    doNotFollow: { path: "node_modules" },
    exclude: { path: "/(dist|test)/" },
  },
};
