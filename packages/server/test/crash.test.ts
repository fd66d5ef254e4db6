// A real server process is killed with SIGKILL in the middle of a stream of writes, then a new process is
// started on the same database. Every write that was acknowledged with a 2xx must be there; writes that
// got no answer may or may not be. Repeated at several points of the stream, on every dialect.
import assert from "node:assert/strict";
import { performance } from "node:perf_hooks";
import { after, before, describe, test } from "node:test";
import {
  ADMIN_KEY,
  type ApiResponse,
  httpRequest as call,
  DIALECTS,
  expectStatus as must,
  type FreshDatabase,
  freshDatabase,
  launchServer,
  type ServerProcess,
} from "@flagstaff/test-harness";
import type { Dialect } from "../src/kernel/config.js";

/** Runs `fn` over `items` with at most `limit` at a time. */
async function pool<T>(items: readonly T[], limit: number, fn: (item: T) => Promise<void>) {
  let next = 0;
  await Promise.all(
    Array.from({ length: limit }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

const ROUNDS = [40, 100, 170];
const STREAM = 300;
const CONCURRENCY = 10;

for (const dialect of DIALECTS as Dialect[]) {
  // The deadline bounds a stuck run on a loaded machine; a quiet one needs about 10 s.
  describe(`crash (${dialect}): SIGKILL in the middle of a write stream loses no acknowledged write`, {
    timeout: 180_000,
  }, () => {
    let database: FreshDatabase | undefined;
    const procs = new Set<ServerProcess>();
    const p = `crash-${dialect}`;

    const start = async () => {
      assert.ok(database);
      const proc = await launchServer({ env: { DATABASE_URL: database.url, ADMIN_API_KEY: ADMIN_KEY } });
      procs.add(proc);
      return proc;
    };

    before(async () => {
      database = await freshDatabase(dialect);
    });

    after(async () => {
      for (const proc of procs) await proc.stop("SIGKILL", 2000);
      await database?.drop();
    });

    test(`${ROUNDS.length} rounds: kill after ${ROUNDS.join(", ")} acknowledgements, restart, verify`, async (t) => {
      let server = await start();
      await must(201, server.url, "POST", "/projects", { body: { id: p, name: "crash" } });
      await must(201, server.url, "POST", `/projects/${p}/flags/stream`, { body: {} });
      await must(200, server.url, "PATCH", `/projects/${p}/flags/stream`, { body: { status: "conditional" } });

      const acknowledgedActors: string[] = [];
      const acknowledgedSegments = new Map<string, string>();

      for (const [round, killAfter] of ROUNDS.entries()) {
        // Op n: every tenth creates a segment, the others attach a distinct actor to the flag.
        const ops = Array.from({ length: STREAM }, (_, n) =>
          n % 10 === 9
            ? { kind: "segment" as const, name: `seg-${round}-${n}` }
            : { kind: "actor" as const, name: `r${round}-a${n}` },
        );
        let acks = 0;
        let killed = false;
        let killedAt = 0;
        let unanswered = 0;
        const refused: string[] = [];
        const victim = server;
        await pool(ops, CONCURRENCY, async (op) => {
          if (killed) return;
          let res: ApiResponse;
          try {
            res =
              op.kind === "actor"
                ? await call(victim.url, "PATCH", `/projects/${p}/flags/stream`, {
                    body: { addActors: [op.name] },
                    timeoutMs: 10_000,
                  })
                : await call(victim.url, "POST", `/projects/${p}/segments`, {
                    body: { name: op.name },
                    timeoutMs: 10_000,
                  });
          } catch {
            unanswered++;
            return;
          }
          if (res.status < 200 || res.status > 299) {
            refused.push(`${op.kind} ${op.name}: ${res.status} ${res.text}`);
            return;
          }
          if (op.kind === "actor") acknowledgedActors.push(op.name);
          else acknowledgedSegments.set(op.name, res.body.id);
          if (++acks === killAfter && !killed) {
            killed = true;
            killedAt = performance.now();
            victim.child.kill("SIGKILL");
          }
        });
        assert.deepEqual(refused, [], `round ${round + 1}: no write was refused before the kill`);
        assert.ok(killed, `round ${round + 1}: the process was killed`);
        await victim.stop("SIGKILL", 5000);
        procs.delete(victim);
        t.diagnostic(
          `round ${round + 1}: killed after ${killAfter} acks; ${unanswered} requests in flight got no answer, ${refused.length} refused; ` +
            `acknowledged so far: ${acknowledgedActors.length} actors, ${acknowledgedSegments.size} segments`,
        );

        // A new process on the same database has every acknowledged write.
        const restartStart = performance.now();
        server = await start();
        t.diagnostic(
          `round ${round + 1}: new process healthy ${(performance.now() - restartStart).toFixed(0)} ms after its start ` +
            `(the kill was ${(restartStart - killedAt).toFixed(0)} ms earlier)`,
        );
        const missingInChecks: string[] = [];
        const missingActors: string[] = [];
        await pool(acknowledgedActors, 20, async (actor) => {
          const check = await call(server.url, "GET", `/projects/${p}/flags/stream/check?actorIds=${actor}`);
          if (check.status !== 200 || check.body.enabled !== true)
            missingInChecks.push(`${actor}: ${check.status} ${check.text}`);
          const stored = await call(server.url, "GET", `/projects/${p}/actors/${actor}`);
          if (stored.status !== 200) missingActors.push(`${actor}: ${stored.status}`);
        });
        assert.deepEqual(missingInChecks, [], `round ${round + 1}: every acknowledged actor is attached`);
        assert.deepEqual(missingActors, [], `round ${round + 1}: every acknowledged actor exists`);

        const listed = new Map<string, string>();
        let after: string | null = null;
        for (let page = 0; page < 100; page++) {
          const query: string = after === null ? "?limit=100" : `?limit=100&after=${encodeURIComponent(after)}`;
          const body = await must(200, server.url, "GET", `/projects/${p}/segments${query}`);
          for (const segment of body.data as { id: string; name: string }[]) listed.set(segment.name, segment.id);
          after = body.pagination.after;
          if (after === null) break;
        }
        const missingSegments = [...acknowledgedSegments]
          .filter(([name, id]) => listed.get(name) !== id)
          .map(([name]) => name);
        assert.deepEqual(missingSegments, [], `round ${round + 1}: every acknowledged segment is listed`);
        // The restarted process takes writes again.
        await must(200, server.url, "PATCH", `/projects/${p}/flags/stream`, {
          body: { addActors: [`after-round-${round}`] },
        });
        acknowledgedActors.push(`after-round-${round}`);
      }
      await server.stop("SIGTERM", 5000);
      procs.delete(server);
    });
  });
}
