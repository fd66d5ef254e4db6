import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { DIALECTS, startServer, type TestServer } from "@flagstaff/test-harness";

describe(`interactive API reference [${DIALECTS[0]}]`, () => {
  let server: TestServer;
  before(async () => {
    server = await startServer({ dialect: DIALECTS[0] ?? "sqlite" });
  });
  after(() => server.close());

  test("/docs serves Swagger UI without a key, from the same document as /openapi.json", async () => {
    const page = await server.request("GET", "/docs/", { key: null });
    assert.equal(page.status, 200);
    assert.match(page.headers.get("content-type") ?? "", /text\/html/);
    assert.match(page.text, /swagger-ui/i);
    const served = await server.request("GET", "/docs/json", { key: null });
    const canonical = await server.request("GET", "/openapi.json", { key: null });
    assert.equal(served.status, 200);
    assert.deepEqual(served.body.paths, canonical.body.paths);
  });

  test("the page's CSP stays strict but never upgrades to https, so /docs works over plain HTTP on any host", async () => {
    for (const path of ["/docs/", "/docs/static/swagger-initializer.js"]) {
      const csp = (await server.request("GET", path, { key: null })).headers.get("content-security-policy") ?? "";
      assert.doesNotMatch(csp, /upgrade-insecure-requests/, path);
      for (const directive of [
        "default-src 'self'",
        "object-src 'none'",
        "script-src-attr 'none'",
        "base-uri 'self'",
      ]) {
        assert.ok(csp.includes(directive), `${path}: ${directive} in ${csp}`);
      }
    }
  });

  test("the UI's own assets are served locally (no CDN)", async () => {
    const page = await server.request("GET", "/docs/", { key: null });
    for (const src of page.text.matchAll(/(?:src|href)="\.?\/?([^"]+\.(?:js|css))"/g)) {
      const asset = await server.request("GET", `/docs/${src[1]?.replace(/^docs\//, "")}`, { key: null });
      assert.equal(asset.status, 200, `asset ${src[1]}`);
    }
  });
});
