import { stat } from "node:fs/promises";
import { join, normalize, sep } from "node:path";
import { fileURLToPath } from "node:url";
import fastifyStatic from "@fastify/static";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { AppError } from "../kernel/errors.js";
import { sendProblem } from "./problem.js";

/** Where `npm run build` puts the web console (packages/console/dist/web), from this file in dist/src/http. */
export const CONSOLE_DIR = fileURLToPath(new URL("../../../../console/dist/web/", import.meta.url));

/**
 * The console's pages load scripts, styles and data from this origin only: no inline script or style,
 * nothing from elsewhere, and no framing.
 */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

async function isFile(path: string): Promise<boolean> {
  try {
    return (await stat(path)).isFile();
  } catch {
    return false;
  }
}

/**
 * Serves the web console's static files at /console/ (no key: the app signs in with one itself), with
 * unknown paths under it answered by index.html so that the app's own routes survive a reload, and
 * `GET /` redirected there. Hashed files under assets/ are cached for good; index.html is revalidated.
 */
export async function registerConsole(app: FastifyInstance, root = CONSOLE_DIR): Promise<void> {
  await app.register(fastifyStatic, { root, serve: false, cacheControl: false, etag: true, lastModified: true });
  const route = { config: { access: "public" as const }, schema: { hide: true } };

  app.get("/", route, async (_request, reply) => reply.redirect("/console/", 302));

  const serve = async (request: FastifyRequest, reply: FastifyReply) => {
    const wanted = ((request.params as { "*"?: string })["*"] ?? "").replace(/^\/+/, "");
    reply.header("content-security-policy", CONSOLE_CSP);
    reply.header("referrer-policy", "no-referrer");
    reply.header("x-frame-options", "DENY");
    const relative = normalize(wanted);
    const inside = relative !== "" && relative !== "." && !relative.startsWith("..") && !relative.includes(`${sep}..`);
    if (inside && relative !== ".built" && (await isFile(join(root, relative)))) {
      reply.header(
        "cache-control",
        relative.startsWith(`assets${sep}`) ? "public, max-age=31536000, immutable" : "no-cache",
      );
      return reply.sendFile(relative);
    }
    if (!(await isFile(join(root, "index.html")))) {
      return sendProblem(
        reply,
        new AppError(404, "not_found", "The web console is not built on this server: run `npm run build`."),
      );
    }
    // A file that looks like an asset but is missing is a 404, not the app: a stale page would load HTML as a script.
    if (relative.startsWith(`assets${sep}`)) {
      return sendProblem(reply, new AppError(404, "not_found", `No console file at ${request.url.split("?", 1)[0]}.`));
    }
    reply.header("cache-control", "no-cache");
    return reply.type("text/html; charset=utf-8").sendFile("index.html");
  };
  app.get("/console", route, serve);
  app.get("/console/*", route, serve);
}
