// The clients as people install them: `npm pack` core, the SDK, the OpenFeature provider and the CLI, install
// the tarballs into a fresh project outside any workspace (with @openfeature/server-sdk from the registry),
// and use each one from there against a real server started in this process.
//
// It lives with the CLI because the CLI is the last client built (the suite runs after `npm run build`, so
// every package's dist/ is ready) and its tests already use the server's test harness.
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join, posix } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { harness, type TestServer } from "./harness.js";

const { ADMIN_KEY, createKey, createProject, startServer } = harness;

/** The repository: packages/cli/dist/test/install.test.js → the root. */
const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const PACKAGES = ["core", "sdk", "openfeature", "cli"] as const;
/** What installing the clients must never bring: the server and its drivers, or the build tools. */
const NOT_INSTALLED = ["@flagstaff/server", "fastify", "pg", "better-sqlite3", "kysely", "pino", "typescript"];

const children = new Set<ChildProcess>();
let work: string;
let tarballs: string;
let project: string;
let server: TestServer | undefined;
const packed = new Map<string, { filename: string; files: string[] }>();

interface Ran {
  code: number | null;
  stdout: string;
  output: string;
}

/** This process's environment without npm's own variables (they would steer the npm under test) or node --test's. */
function cleanEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) {
    if (
      value === undefined ||
      /^npm_/i.test(name) ||
      ["INIT_CWD", "NODE_TEST_CONTEXT", "NODE_OPTIONS"].includes(name)
    ) {
      continue;
    }
    env[name] = value;
  }
  return { ...env, ...extra };
}

/** Runs a command to its end; past `timeoutMs` it is killed with everything it started, and this throws. */
function run(
  command: string,
  args: readonly string[],
  options: { cwd: string; env?: Record<string, string>; timeoutMs: number },
): Promise<Ran> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, {
      cwd: options.cwd,
      env: options.env ?? cleanEnv(),
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    children.add(child);
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (stdout += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (stderr += chunk));
    const output = () =>
      `$ ${command} ${args.join(" ")}\n--- stdout ---\n${stdout.slice(-3000)}\n--- stderr ---\n${stderr.slice(-3000)}`;
    const timer = setTimeout(() => {
      killTree(child);
      reject(new Error(`timed out after ${options.timeoutMs} ms\n${output()}`));
    }, options.timeoutMs);
    child.once("error", (error) => {
      clearTimeout(timer);
      children.delete(child);
      reject(error);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      children.delete(child);
      resolve({ code, stdout, output: output() });
    });
  });
}

function killTree(child: ChildProcess): void {
  if (child.pid === undefined || child.exitCode !== null || child.signalCode !== null) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    child.kill("SIGKILL");
  }
}

async function runOk(command: string, args: readonly string[], options: Parameters<typeof run>[2]): Promise<Ran> {
  const result = await run(command, args, options);
  assert.equal(result.code, 0, result.output);
  return result;
}

before(() => {
  work = mkdtempSync(join(tmpdir(), "flagstaff-install-"));
  tarballs = join(work, "tarballs");
  project = join(work, "project");
  mkdirSync(tarballs);
  mkdirSync(project);
});

after(async () => {
  for (const child of children) killTree(child);
  await server?.close();
  if (work !== undefined) rmSync(work, { recursive: true, force: true });
});

describe("the client packages, packed and installed like from npm", () => {
  test("npm pack: built JS and types, the sources their maps name, no tests or build info", async () => {
    // Each package's prepack runs tsc -b, which finds the suite's build up to date.
    const workspaces = PACKAGES.flatMap((name) => ["-w", `packages/${name}`]);
    const result = await runOk("npm", ["pack", "--json", "--pack-destination", tarballs, ...workspaces], {
      cwd: REPO,
      timeoutMs: 120_000,
    });
    const reports = JSON.parse(result.stdout) as { name: string; filename: string; files: { path: string }[] }[];
    for (const name of PACKAGES) {
      const report = reports.find((r) => r.name === `@flagstaff/${name}`);
      assert.ok(report, `packed @flagstaff/${name}`);
      const files = report.files.map((f) => f.path);
      packed.set(name, { filename: report.filename, files });
      const dir = join(REPO, "packages", name);
      const manifest = JSON.parse(readFileSync(join(dir, "package.json"), "utf8"));

      const entry = name === "cli" ? "dist/src/cli" : "dist/src/index";
      for (const file of ["package.json", "README.md", `${entry}.js`, `${entry}.d.ts`]) {
        assert.ok(files.includes(file), `${name}: the tarball has ${file}`);
      }
      // Core ships its language-neutral test vectors (evaluation and rules), for ports to other languages.
      const vectors = new Set(["test/vectors.json", "test/rule-vectors.json"]);
      const tests = files.filter((f) => /(^|\/)test\//.test(f) && !(name === "core" && vectors.has(f)));
      assert.deepEqual(tests, [], `${name}: no tests (core ships only its test vectors, for ports)`);
      assert.deepEqual(
        files.filter((f) => f.endsWith(".tsbuildinfo")),
        [],
        `${name}: no build info`,
      );
      for (const file of files.filter((f) => /^dist\/src\/.*\.js$/.test(f))) {
        const source = file.replace(/^dist\//, "").replace(/\.js$/, ".ts");
        assert.ok(
          files.includes(source),
          `${name}: ${file} has no source ${source}: a stale build output? rm -rf packages/${name}/dist && npm run build`,
        );
      }
      for (const map of files.filter((f) => f.endsWith(".map"))) {
        const { sources } = JSON.parse(readFileSync(join(dir, map), "utf8")) as { sources: string[] };
        for (const source of sources) {
          const resolved = posix.normalize(posix.join(posix.dirname(map), source));
          assert.ok(files.includes(resolved), `${name}: ${map} names ${source}, which is not in the tarball`);
        }
      }

      assert.equal(manifest.private, undefined, `${name} is not private`);
      assert.equal(manifest.version, "0.1.0");
      assert.equal(manifest.license, "MIT");
      assert.equal(manifest.engines?.node, ">=22.12");
      assert.equal(manifest.repository?.directory, `packages/${name}`);
      assert.equal(manifest.publishConfig?.access, "public");
      assert.ok(Array.isArray(manifest.keywords) && manifest.keywords.length > 0);
    }
    const openfeature = JSON.parse(readFileSync(join(REPO, "packages/openfeature/package.json"), "utf8"));
    assert.deepEqual(Object.keys(openfeature.dependencies), ["@flagstaff/sdk"], "OpenFeature packages are peers only");
    assert.ok(openfeature.peerDependencies["@openfeature/server-sdk"]);
    const cli = JSON.parse(readFileSync(join(REPO, "packages/cli/package.json"), "utf8"));
    // yaml: `flagstaff export` writes YAML (no dependencies of its own); @flagstaff/core: `flagstaff import
    // --flagd` converts with core's flagd mapping (the SDK depends on core already).
    assert.deepEqual(Object.keys(cli.dependencies).sort(), ["@flagstaff/core", "@flagstaff/sdk", "cli-table3", "yaml"]);
  });

  test("installed into a fresh project: core, the SDK, the OpenFeature provider and the CLI work against a server", async (t) => {
    assert.equal(packed.size, PACKAGES.length, "the packing test ran first");
    const tarball = (name: string) => `file:${join(tarballs, packed.get(name)?.filename as string)}`;
    const dependencies: Record<string, string> = Object.fromEntries(
      PACKAGES.map((name) => [`@flagstaff/${name}`, tarball(name)]),
    );
    dependencies["@openfeature/server-sdk"] = "^1.23.0";
    writeFileSync(
      join(project, "package.json"),
      JSON.stringify({
        name: "flagstaff-install-check",
        private: true,
        type: "module",
        dependencies,
        // The packages depend on each other by version; these tarballs stand in for the registry's copies.
        overrides: { "@flagstaff/core": "$@flagstaff/core", "@flagstaff/sdk": "$@flagstaff/sdk" },
      }),
    );
    const installing = performance.now();
    await runOk("npm", ["install", "--prefer-offline", "--no-audit", "--no-fund", "--no-package-lock"], {
      cwd: project,
      timeoutMs: 180_000,
    });
    t.diagnostic(`npm install of the tarballs: ${Math.round(performance.now() - installing)} ms`);
    const modules = join(project, "node_modules");
    for (const name of NOT_INSTALLED) {
      assert.ok(!existsSync(join(modules, name)), `installing the clients brought ${name}`);
    }
    for (const name of ["@flagstaff/core", "@flagstaff/sdk", "@flagstaff/openfeature", "@flagstaff/cli", "ky"]) {
      assert.ok(existsSync(join(modules, name, "package.json")), `${name} is installed`);
    }

    // The types resolve from the installed packages alone, and are real (not `any`).
    writeFileSync(
      join(project, "types.ts"),
      `import { type EvaluableFlag, evaluate } from "@flagstaff/core";
import { run } from "@flagstaff/cli";
import { FlagstaffProvider } from "@flagstaff/openfeature";
import { type Flag, FlagstaffClient } from "@flagstaff/sdk";
import { OpenFeature } from "@openfeature/server-sdk";

const flag: EvaluableFlag = { name: "f", status: "enabled", percentageActors: 0, percentageCalls: 0, actors: new Set(), segments: new Set() };
export const on: boolean = evaluate(flag, [], () => false, () => 0).enabled;
export const got: Promise<Flag> = new FlagstaffClient({ baseUrl: "http://127.0.0.1:1" }).flags.get("p", "f");
OpenFeature.setProvider(new FlagstaffProvider({ baseUrl: "http://127.0.0.1:1", apiKey: "k", projectId: "p" }));
export const code: Promise<number> = run(["--version"], { env: {}, stdout: { write: () => true }, stderr: { write: () => true } });
// @ts-expect-error a flag's status is one of three
export const bad: Flag["status"] = "maybe";
`,
    );
    writeFileSync(
      join(project, "tsconfig.json"),
      JSON.stringify({
        compilerOptions: {
          target: "ES2022",
          module: "NodeNext",
          moduleResolution: "NodeNext",
          lib: ["ES2022", "DOM"],
          types: [],
          strict: true,
          noEmit: true,
          skipLibCheck: true,
        },
        files: ["types.ts"],
      }),
    );
    const tsc = createRequire(join(REPO, "package.json")).resolve("typescript/bin/tsc");
    await runOk(process.execPath, [tsc, "-p", project], { cwd: project, timeoutMs: 120_000 });

    // A real server, in this process.
    server = await startServer({ dialect: "sqlite" });
    const projectId = await createProject(server, "shop");
    const { key } = await createKey(server, projectId, "write");
    const env = cleanEnv({ FLAGSTAFF_URL: server.url, FLAGSTAFF_KEY: key, FLAGSTAFF_PROJECT: projectId });

    writeFileSync(
      join(project, "check.mjs"),
      `import { readFileSync } from "node:fs";
import { actorBucket, evaluate } from "@flagstaff/core";
import { run } from "@flagstaff/cli";
import { FlagstaffProvider } from "@flagstaff/openfeature";
import { FlagstaffClient } from "@flagstaff/sdk";
import { OpenFeature } from "@openfeature/server-sdk";

const { FLAGSTAFF_URL: baseUrl, FLAGSTAFF_KEY: apiKey, FLAGSTAFF_PROJECT: projectId } = process.env;
const out = {};

// @flagstaff/core against the test vectors it ships.
const vectors = JSON.parse(readFileSync("node_modules/@flagstaff/core/test/vectors.json", "utf8"));
out.bucketing = vectors.bucketing.filter((v) => actorBucket(v.flagName, v.actorId) !== v.bucket).length;
out.evaluation = vectors.evaluation.filter((v) => {
  const flag = { ...v.flag, actors: new Set(v.flag.actors), segments: new Set(v.flag.segments) };
  const isMember = (segment, actor) => (v.segmentMembers[segment] ?? []).includes(actor);
  const draw = v.randomDraw ?? (v.expected.enabled ? 1 - 2 ** -53 : 0);
  const result = evaluate(flag, v.actorIds, isMember, () => draw);
  return result.enabled !== v.expected.enabled || result.reason !== v.expected.reason;
}).length;
out.vectors = vectors.bucketing.length + vectors.evaluation.length;

// @flagstaff/sdk
const client = new FlagstaffClient({ baseUrl, apiKey });
await client.flags.create(projectId, "new-checkout", { description: "One-page checkout" });
await client.flags.update(projectId, "new-checkout", { status: "conditional", addActors: ["alice"] });
out.sdk = {
  alice: await client.flags.check(projectId, "new-checkout", { actorIds: ["alice"] }),
  bob: await client.flags.check(projectId, "new-checkout", { actorIds: ["bob"] }),
};

// @flagstaff/openfeature with @openfeature/server-sdk
await OpenFeature.setProviderAndWait(new FlagstaffProvider({ baseUrl, apiKey, projectId }));
const details = await OpenFeature.getClient().getBooleanDetails("new-checkout", false, { targetingKey: "alice" });
out.openfeature = { value: details.value, reason: details.reason };
await OpenFeature.close();

// @flagstaff/cli's exported entry
let written = "";
const io = { env: {}, stdout: { write: (text) => (written += text) }, stderr: { write: () => true } };
out.cli = { code: await run(["--version"], io), stdout: written };

console.log(JSON.stringify(out));
`,
    );
    const script = await runOk(process.execPath, ["check.mjs"], { cwd: project, env, timeoutMs: 60_000 });
    const out = JSON.parse(script.stdout);
    assert.deepEqual(out, {
      bucketing: 0,
      evaluation: 0,
      vectors: out.vectors,
      sdk: { alice: true, bob: false },
      openfeature: { value: true, reason: "TARGETING_MATCH" },
      cli: { code: 0, stdout: "0.1.0\n" },
    });
    assert.ok(out.vectors > 100, `only ${out.vectors} vectors`);

    // The installed `flagstaff` command.
    const bin = join(modules, ".bin", "flagstaff");
    const flagstaff = (...args: string[]) =>
      run(bin, ["--url", server?.url as string, "--project", projectId, ...args], { cwd: project, timeoutMs: 30_000 });
    assert.equal((await flagstaff("--key", key, "check", "new-checkout", "--actor", "alice")).stdout, "enabled\n");
    const listed = await flagstaff("--key", ADMIN_KEY, "flags", "list", "--json");
    assert.equal(listed.code, 0, listed.output);
    assert.deepEqual(
      JSON.parse(listed.stdout).map((f: { name: string }) => f.name),
      ["new-checkout"],
    );
    const moved = await flagstaff("admin-key", "list");
    assert.equal(moved.code, 2, moved.output);
    assert.match(moved.output, /flagstaff-server admin-key/);
  });
});
