// The README's quickstart, run verbatim in bash against a real server process on a fresh database: the curl
// block and the CLI block after it, as one terminal session. Only two values are put in, as the reader does:
// the server's address (for http://127.0.0.1:8080) and the admin key the server printed at its first start.
// curl and npx are wrapped by shell functions that record what they were given, so the test sees which key
// each check went out with: an application checks with its check key, never with the admin key.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { DIALECTS, freshDatabase, launchServer, type ServerProcess, track } from "@flagstaff/test-harness";

const REPO = fileURLToPath(new URL("../../../../", import.meta.url));
const README = readFileSync(join(REPO, "README.md"), "utf8");
const KEY = /fsk_[A-Za-z0-9_-]{43}/;
/** Field, record-part and record separators of the recordings (never in a URL, a header or JSON). */
const FIELD = "\x1f";
const PART = "\x1e";
const RECORD = "\x1d";

/** The ```sh block of the README that contains `marker`. */
function shellBlock(marker: string): string {
  const block = [...README.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((m) => m[1] as string)
    .find((b) => b.includes(marker));
  assert.ok(block, `the README has a sh block with ${marker}`);
  return block;
}

/** Records each call's arguments (and curl's answer, npx's FLAGSTAFF_API_KEY), then runs the real command. */
const WRAPPERS = `
curl() {
  local answer status
  answer=$(command curl "$@"); status=$?
  { printf '%s${FIELD}' "$@"; printf '${PART}%s${RECORD}' "$answer"; } >> "$QUICKSTART_RECORD/curl"
  printf '%s\\n' "$answer"
  return $status
}
npx() {
  { printf '%s${FIELD}' "$@"; printf '${PART}%s${RECORD}' "\${FLAGSTAFF_API_KEY-}"; } >> "$QUICKSTART_RECORD/npx"
  command npx --no "$@"
}
`;

interface Call {
  args: string[];
  /** curl: its answer; npx: FLAGSTAFF_API_KEY in its environment. */
  extra: string;
}

function recorded(file: string): Call[] {
  return readFileSync(file, "utf8")
    .split(RECORD)
    .filter((record) => record !== "")
    .map((record) => {
      const [args = "", extra = ""] = record.split(PART);
      return { args: args.split(FIELD).slice(0, -1), extra };
    });
}

/** The Authorization header a curl call sent. */
function bearer(call: Call): string | undefined {
  const index = call.args.findIndex((arg, i) => call.args[i - 1] === "-H" && /^authorization:/i.test(arg));
  return index === -1 ? undefined : call.args[index]?.replace(/^authorization: *bearer +/i, "");
}

describe(`the README's quickstart, run verbatim [${DIALECTS[0] ?? "sqlite"}]`, () => {
  let server: ServerProcess;
  let adminKey: string;
  let work: string;

  before(
    async () => {
      work = mkdtempSync(join(tmpdir(), "flagstaff-quickstart-"));
      const database = await freshDatabase(DIALECTS[0] ?? "sqlite");
      server = await launchServer({ env: { DATABASE_URL: database.url, LOG_LEVEL: undefined } });
      // The key as the reader copies it: from the box that ends the start-up output.
      adminKey = (await server.waitForOutput(new RegExp(`│ +(${KEY.source}) +│\\n`)))[1] as string;
    },
    { timeout: 60_000 },
  );
  after(async () => {
    await server?.stop("SIGTERM");
    if (work !== undefined) rmSync(work, { recursive: true, force: true });
  });

  test("sets up the flag with the admin key, then checks with the check key it created", {
    timeout: 180_000,
  }, async () => {
    const setup = shellBlock("export FLAGSTAFF=");
    const cli = shellBlock("npx flagstaff check");
    assert.ok(
      setup.includes("export FLAGSTAFF=http://127.0.0.1:8080\n"),
      "the address the server listens on by default",
    );
    assert.match(setup, /^export ADMIN_KEY=fsk_… /m, "where the reader pastes the admin key");
    const script = [
      "set -euo pipefail",
      WRAPPERS,
      setup
        .replace("export FLAGSTAFF=http://127.0.0.1:8080\n", `export FLAGSTAFF=${server.url}\n`)
        .replace(/^export ADMIN_KEY=fsk_… /m, `export ADMIN_KEY=${adminKey} `),
      cli,
    ].join("\n");
    const file = join(work, "quickstart.sh");
    writeFileSync(file, script);

    const child = spawn("bash", [file], {
      cwd: REPO,
      env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? work, QUICKSTART_RECORD: work },
      stdio: ["ignore", "pipe", "pipe"],
    });
    const untrack = track({ label: "quickstart script", dispose: async () => void child.kill("SIGKILL") });
    let output = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    child.stderr.setEncoding("utf8").on("data", (chunk: string) => (output += chunk));
    const code = await new Promise<number | null>((resolve) => child.once("close", resolve));
    untrack();
    assert.equal(code, 0, `the quickstart failed:\n${output}`);

    // Every curl check, answered as its comment in the README says, with a key that is not the admin key.
    const expected = new Map(
      [...setup.matchAll(/check\?actorIds=(\w+)".*# (\{"enabled":(?:true|false)\})/g)].map((m) => [m[1], m[2]]),
    );
    assert.deepEqual([...expected.keys()], ["carol", "alice", "dave"]);
    const checks = recorded(join(work, "curl")).filter((call) => call.args.some((arg) => arg.includes("/check?")));
    assert.equal(checks.length, 3, `three checks:\n${output}`);
    const checkKeys = new Set<string>();
    for (const call of checks) {
      const actor = /actorIds=(\w+)/.exec(call.args.find((arg) => arg.includes("/check?")) as string)?.[1];
      assert.equal(call.extra, expected.get(actor), `the check for ${actor}`);
      const key = bearer(call);
      assert.ok(key, "the check sends a key");
      assert.notEqual(key, adminKey, `the check for ${actor} must use the check key, not the admin key`);
      checkKeys.add(key);
    }
    assert.equal(checkKeys.size, 1, "one check key for the three checks");
    const [checkKey] = checkKeys as Set<string> & [string];

    // The CLI's check too: with --key, or FLAGSTAFF_API_KEY, being that check key.
    const cliCheck = recorded(join(work, "npx")).find(
      (call) => call.args[0] === "flagstaff" && call.args[1] === "check",
    );
    assert.ok(cliCheck, "the CLI block runs a check");
    const keyFlag = cliCheck.args.indexOf("--key");
    assert.equal(
      keyFlag === -1 ? cliCheck.extra : cliCheck.args[keyFlag + 1],
      checkKey,
      "the CLI checks with the check key",
    );
    assert.match(output, /enabled/);

    // And that key is what the README says: a key of the shop project that may only run checks.
    assert.match(checkKey, KEY);
    const read = await server.request("GET", "/projects/shop/flags", { key: checkKey });
    assert.equal(read.status, 403, read.text);
    const check = await server.request("GET", "/projects/shop/flags/new-checkout/check?actorIds=carol", {
      key: checkKey,
    });
    assert.deepEqual(check.body, { enabled: true });
  });
});

describe("the README, where a newcomer first meets the install and the port", () => {
  test("says how long npm install takes, and, where 8080 first appears, that PORT changes it (FLAGSTAFF_URL for the CLI)", () => {
    const install = README.indexOf("npm install\nnpm start\n");
    assert.ok(install !== -1, "the quickstart installs and starts");
    const first8080 = README.indexOf("8080");
    // The paragraph the port first appears in.
    const paragraph = README.slice(README.lastIndexOf("\n\n", first8080), README.indexOf("\n\n", first8080));
    assert.match(paragraph, /`PORT=\d+ npm\s+start`/, `PORT next to the first 8080:\n${paragraph}`);
    assert.match(paragraph, /`FLAGSTAFF_URL`/, "and the CLI's setting");
    const afterInstall = README.slice(install, README.indexOf("\n\n", install + 30));
    assert.match(afterInstall, /`npm install` takes about \w+ minutes? on \d cores/, "how long npm install takes");
  });
});
