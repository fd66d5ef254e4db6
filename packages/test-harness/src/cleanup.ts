// Everything the harness starts (child processes, servers in this process, databases, proxies) is
// registered here the moment it exists, before anything is awaited. A suite's own `after` hook cannot be
// trusted with it: node:test runs that hook as soon as a test times out, while the test goes on and may
// still be starting a server nobody will ever stop; the orphan then keeps the test run waiting forever.
// So this file releases whatever is left when the whole test file ends, releases at once anything started
// after that, and SIGKILLs the child processes when this process exits or is signalled.
import { after } from "node:test";

export interface Resource {
  /** What it is, for reports: "server process http://127.0.0.1:4312 (pid 123)". */
  readonly label: string;
  /** Releases it for good; safe to call more than once, and after it went away by itself. */
  dispose(): Promise<void>;
  /** The synchronous last resort when this process exits or is signalled (SIGKILL a child). */
  killNow?(): void;
  /** Released after everything else (a database, which the servers using it must have let go first). */
  readonly last?: boolean;
}

/** How long releasing one leftover may take before it is reported as stuck. */
const DISPOSE_DEADLINE_MS = 20_000;

const live = new Set<Resource>();
let fileOver = false;

/** Registers a resource; answers the function that forgets it once its owner has released it. */
export function track(resource: Resource): () => void {
  if (fileOver) {
    // A test that timed out went on and started this after the file's cleanup: nobody would release it.
    resource.killNow?.();
    resource.dispose().catch(() => {});
    throw new Error(`${resource.label} was started after this test file ended; it was released at once`);
  }
  live.add(resource);
  return () => {
    live.delete(resource);
  };
}

async function disposeWithin(resource: Resource, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const stuck = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`releasing ${resource.label} took over ${ms} ms`)), ms);
  });
  try {
    await Promise.race([resource.dispose(), stuck]);
  } finally {
    clearTimeout(timer);
  }
}

/** Releases every registered resource, those marked `last` after the others, each wave at once; answers the failures. */
async function releaseAll(): Promise<Error[]> {
  const failures: Error[] = [];
  const release = async (resource: Resource) => {
    try {
      await disposeWithin(resource, DISPOSE_DEADLINE_MS);
    } catch (error) {
      resource.killNow?.();
      failures.push(error instanceof Error ? error : new Error(String(error)));
    }
    live.delete(resource);
  };
  const resources = [...live];
  await Promise.all(resources.filter((resource) => !resource.last).map(release));
  await Promise.all(resources.filter((resource) => resource.last).map(release));
  return failures;
}

function killAllNow(): void {
  for (const resource of live) {
    try {
      resource.killNow?.();
    } catch {
      // Exiting anyway: the next one matters more than this error.
    }
  }
}

// A root-level hook: it runs once every suite of the file has finished or been cancelled.
after(async () => {
  fileOver = true;
  const failures = await releaseAll();
  if (failures.length > 0) {
    throw new AggregateError(failures, `the harness could not release: ${failures.map((e) => e.message).join("; ")}`);
  }
});

process.on("exit", killAllNow);
for (const signal of ["SIGINT", "SIGTERM", "SIGHUP"] as const) {
  process.once(signal, () => {
    killAllNow();
    // Then die of the signal as if nobody had listened (node's test runner sends SIGTERM on its timeout).
    if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
  });
}
