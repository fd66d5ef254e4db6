import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Where a webhook may send: http(s) URLs whose every address is public (global unicast). Loopback,
 * private, link-local (cloud metadata at 169.254.169.254), unique-local, CGNAT, multicast, reserved and
 * unspecified addresses are refused unless private networks are allowed. ipaddr.js names the ranges.
 */
export class UnsafeTargetError extends Error {
  override name = "UnsafeTargetError";
}

/** Whether an address is a public unicast one (an IPv4-mapped IPv6 address counts as its IPv4 address). */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  return ipaddr.process(address).range() === "unicast";
}

/** The URL's host as an address or a name, without IPv6 brackets. */
function hostOf(url: URL): string {
  return url.hostname.startsWith("[") ? url.hostname.slice(1, -1) : url.hostname;
}

/** Parses a webhook URL; throws UnsafeTargetError naming what is wrong. Does not resolve names. */
export function parseTargetUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new UnsafeTargetError("url is not a valid absolute URL.");
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new UnsafeTargetError(`url must use http or https, not ${url.protocol.slice(0, -1)}.`);
  }
  return url;
}

function refuse(host: string, address: string): never {
  const shown = host === address ? address : `${host} (${address})`;
  throw new UnsafeTargetError(
    `url points to ${shown}, a loopback, private, link-local or otherwise non-public address; ` +
      "set WEBHOOK_ALLOW_PRIVATE_NETWORKS=true to allow such targets.",
  );
}

/**
 * Checks a URL at creation: scheme, and every address its host resolves to. A name that does not exist
 * is refused (a typo is likelier than a record still to come); a resolver that cannot answer now lets
 * it through, as every delivery checks again.
 */
export async function checkTarget(text: string, allowPrivate: boolean): Promise<URL> {
  const url = parseTargetUrl(text);
  if (allowPrivate) return url;
  const host = hostOf(url);
  if (isIP(host)) {
    if (!isPublicAddress(host)) refuse(host, host);
    return url;
  }
  let addresses: LookupAddress[];
  try {
    addresses = await new Promise((resolve, reject) =>
      dnsLookup(host, { all: true }, (error, found) => (error ? reject(error) : resolve(found))),
    );
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOTFOUND") {
      throw new UnsafeTargetError(`url's host ${host} does not resolve.`);
    }
    return url;
  }
  for (const { address } of addresses) if (!isPublicAddress(address)) refuse(host, address);
  return url;
}

type LookupCallback = (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void;

/**
 * A `lookup` for http.request that refuses a name resolving to any non-public address. Checking the
 * addresses the socket will actually connect to (not an earlier lookup) leaves no gap for DNS to change.
 */
export function safeLookup(hostname: string, options: LookupOptions, callback: LookupCallback): void {
  dnsLookup(hostname, { ...options, all: true }, (error, addresses) => {
    if (error) return callback(error, []);
    const unsafe = addresses.find((a) => !isPublicAddress(a.address));
    if (unsafe) {
      try {
        refuse(hostname, unsafe.address);
      } catch (refusal) {
        return callback(refusal as NodeJS.ErrnoException, []);
      }
    }
    if (options.all) return callback(null, addresses);
    const first = addresses[0];
    if (!first) return callback(Object.assign(new Error(`${hostname} has no address`), { code: "ENOTFOUND" }), []);
    callback(null, first.address, first.family);
  });
}

/** Throws UnsafeTargetError when a URL's host is a literal non-public address (names go through safeLookup). */
export function checkLiteralAddress(url: URL): void {
  const host = hostOf(url);
  if (isIP(host) && !isPublicAddress(host)) refuse(host, host);
}
