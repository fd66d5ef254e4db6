import { existsSync, mkdirSync, readFileSync } from "node:fs";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  browserSkip,
  CHROMIUM,
  closeBrowser,
  launchChromium as launchHarnessChromium,
  track,
} from "@flagstaff/test-harness";
import type { Browser } from "playwright-core";

/** Screenshots of the browser tests, replaced on every run, for a person to look at. */
export const SCREENSHOTS = join(tmpdir(), "flagstaff-screenshots");

/** Launches Chromium (see the harness) with the screenshot folder ready. */
export async function launchChromium(extraArgs: string[] = []): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  return launchHarnessChromium(extraArgs);
}

export { browserSkip, CHROMIUM, closeBrowser };

export interface StaticFile {
  readonly type: string;
  readonly body: string | Buffer;
}

export interface StaticSite {
  /** `http://127.0.0.1:<port>`, as the browser sends it in `Origin`. */
  readonly origin: string;
  close(): Promise<void>;
}

/** A tiny static web server on its own loopback port: another origin than the API's. */
export async function serveStatic(files: ReadonlyMap<string, StaticFile>): Promise<StaticSite> {
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  const untrack = track({ label: "static web server", dispose: close });
  const server = createServer((request, response) => {
    const file = files.get(new URL(request.url ?? "/", "http://x").pathname);
    if (file === undefined) {
      response.writeHead(404, { "content-type": "text/plain" }).end("not found");
      return;
    }
    response.writeHead(200, { "content-type": file.type, "cache-control": "no-store" }).end(file.body);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    origin: `http://127.0.0.1:${port}`,
    close: async () => {
      await close();
      untrack();
    },
  };
}

/**
 * The ES module build of an installed package, as browsers load it: its `module` field, else its
 * `exports.import`. The packages used here are plain ES modules that import only bare package names,
 * so an import map pointing each name at its file is all a browser needs; no bundler.
 */
function esmBuild(name: string, fromDir: string): string {
  let dir = fromDir;
  for (;;) {
    const candidate = join(dir, "node_modules", name, "package.json");
    if (existsSync(candidate)) {
      const pkg = JSON.parse(readFileSync(candidate, "utf8"));
      const entry = pkg.module ?? pkg.exports?.import;
      if (typeof entry !== "string") throw new Error(`${name} has no ES module build`);
      return join(dirname(candidate), entry);
    }
    const parent = dirname(dir);
    if (parent === dir) throw new Error(`${name} is not installed (looked up from ${fromDir})`);
    dir = parent;
  }
}

/**
 * The stock OpenFeature web SDK and OFREP web provider as browser modules: the files to serve, and the
 * import map that resolves their bare imports to those files.
 */
export function openFeatureModules(): { files: Map<string, StaticFile>; importMap: string } {
  const here = dirname(fileURLToPath(import.meta.url));
  const provider = esmBuild("@openfeature/ofrep-web-provider", here);
  // The provider may need its own copy of ofrep-core (a newer one than the Node.js provider's).
  const providerDir = dirname(provider);
  const paths: Record<string, string> = {
    "@openfeature/core": esmBuild("@openfeature/core", here),
    "@openfeature/web-sdk": esmBuild("@openfeature/web-sdk", here),
    "@openfeature/ofrep-core": esmBuild("@openfeature/ofrep-core", providerDir),
    "@openfeature/ofrep-web-provider": provider,
  };
  const files = new Map<string, StaticFile>();
  const imports: Record<string, string> = {};
  for (const [name, path] of Object.entries(paths)) {
    const url = `/modules/${name}.js`;
    imports[name] = url;
    files.set(url, { type: "text/javascript", body: readFileSync(path) });
  }
  return { files, importMap: JSON.stringify({ imports }) };
}
