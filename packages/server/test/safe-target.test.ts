import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  checkLiteralAddress,
  checkTarget,
  isPublicAddress,
  UnsafeTargetError,
} from "../src/features/webhooks/safe-target.js";

// Addresses are only judged here: nothing is sent anywhere (literal addresses need no lookup).

/** IPv6 forms that embed an IPv4 address, each with the embedded address it stands for. */
const embedding: [form: string, address: string, embeds: string][] = [
  ["IPv4-compatible", "::7f00:1", "127.0.0.1"],
  ["IPv4-compatible", "::127.0.0.1", "127.0.0.1"],
  ["IPv4-compatible", "::a9fe:a9fe", "169.254.169.254"],
  ["IPv4-compatible", "::a00:1", "10.0.0.1"],
  ["IPv4-mapped", "::ffff:7f00:1", "127.0.0.1"],
  ["IPv4-mapped", "::ffff:127.0.0.1", "127.0.0.1"],
  ["IPv4-translated", "::ffff:0:7f00:1", "127.0.0.1"],
  ["NAT64", "64:ff9b::a00:1", "10.0.0.1"],
  ["NAT64", "64:ff9b::7f00:1", "127.0.0.1"],
  ["NAT64", "64:ff9b::a9fe:a9fe", "169.254.169.254"],
  ["6to4", "2002:7f00:1::", "127.0.0.1"],
  ["6to4", "2002:a9fe:a9fe::1", "169.254.169.254"],
  ["6to4", "2002:c0a8:101:1::1", "192.168.1.1"],
  // Teredo: server 65.54.227.120, client 127.0.0.1 stored inverted (0x80fffffe).
  ["Teredo", "2001:0:4136:e378:8000:63bf:80ff:fffe", "127.0.0.1 (client)"],
  // Teredo: server 10.0.0.1, client 8.8.8.8 (inverted 0xf7f7f7f7).
  ["Teredo", "2001:0:a00:1:8000:63bf:f7f7:f7f7", "10.0.0.1 (server)"],
];

/** The same forms embedding public addresses. */
const publicEmbedding: [form: string, address: string][] = [
  ["IPv4-compatible", "::808:808"],
  ["IPv4-mapped", "::ffff:8.8.8.8"],
  ["IPv4-translated", "::ffff:0:808:808"],
  ["NAT64 (what a DNS64 resolver answers for an IPv4-only host)", "64:ff9b::808:808"],
  ["6to4", "2002:808:808::1"],
  ["Teredo (server 65.54.227.120, client 8.8.8.8)", "2001:0:4136:e378:8000:63bf:f7f7:f7f7"],
];

describe("safe targets: IPv6 addresses that embed an IPv4 address", () => {
  test("are judged by the IPv4 address they embed", () => {
    for (const [form, address, embeds] of embedding)
      assert.equal(isPublicAddress(address), false, `${form} ${address} embeds ${embeds}`);
    for (const [form, address] of publicEmbedding) assert.equal(isPublicAddress(address), true, `${form} ${address}`);
  });

  test("prefixes whose embedding is not fixed, and the unspecified and loopback forms, stay refused", () => {
    // 64:ff9b:1::/48 is local-use NAT64 (RFC 8215): its IPv4 address may sit at any of several offsets.
    for (const address of ["64:ff9b:1::808:808", "::", "::1", "::ffff:0:0", "2002::", "2001::"])
      assert.equal(isPublicAddress(address), false, address);
  });

  test("webhook URLs naming such addresses are refused at creation and before each delivery", async () => {
    for (const [form, address, embeds] of embedding) {
      const url = `http://[${address}]/hook`;
      await assert.rejects(checkTarget(url, false), (error: unknown) => {
        assert.ok(error instanceof UnsafeTargetError, `${form} ${address} (${embeds}): ${String(error)}`);
        assert.match(error.message, /non-public address/);
        return true;
      });
      assert.throws(() => checkLiteralAddress(new URL(url)), UnsafeTargetError, `${form} ${address}`);
    }
    // The probes of the report, spelled as sent.
    for (const url of ["http://[::127.0.0.1]/", "http://[::169.254.169.254]/", "http://[::10.0.0.1]/"])
      await assert.rejects(checkTarget(url, false), UnsafeTargetError, url);
    for (const [form, address] of publicEmbedding) {
      const url = `http://[${address}]/hook`;
      assert.equal((await checkTarget(url, false)).hostname, new URL(url).hostname, form);
      checkLiteralAddress(new URL(url));
    }
    // WEBHOOK_ALLOW_PRIVATE_NETWORKS still lets them all through.
    for (const [, address] of embedding) await checkTarget(`http://[${address}]/`, true);
  });
});
