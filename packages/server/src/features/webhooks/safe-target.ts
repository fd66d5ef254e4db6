import { lookup as dnsLookup, type LookupAddress, type LookupOptions } from "node:dns";
import { isIP } from "node:net";
import ipaddr from "ipaddr.js";

/**
 * Where a webhook may send: http(s) URLs whose every address is public (global unicast). Loopback,
 * private, link-local (cloud metadata at 169.254.169.254), unique-local, CGNAT, multicast, reserved and
 * unspecified addresses are refused unless private networks are allowed. ipaddr.js names the ranges; an
 * IPv6 address that embeds an IPv4 address (mapped, compatible, NAT64, 6to4, Teredo) is judged by it.
 */
export class UnsafeTargetError extends Error {
  override name = "UnsafeTargetError";
}

const cidr = (text: string) => ipaddr.parseCIDR(text) as [ipaddr.IPv6, number];
const COMPATIBLE = cidr("::/96");
const MAPPED = cidr("::ffff:0:0/96");
const TRANSLATED = cidr("::ffff:0:0:0/96");
const NAT64 = cidr("64:ff9b::/96");
const SIX_TO_FOUR = cidr("2002::/16");
const TEREDO = cidr("2001::/32");

/** The IPv4 address in two 16-bit parts of an IPv6 address. */
const ipv4 = (high: number, low: number) => new ipaddr.IPv4([high >> 8, high & 0xff, low >> 8, low & 0xff]);

/**
 * The IPv4 addresses an IPv6 address stands for, or undefined when it embeds none. A packet to such an
 * address may reach the IPv4 address (a host's own stack, a NAT64 gateway, a 6to4 or Teredo relay), so
 * it is only as safe as what it embeds: IPv4-compatible (::/96, deprecated but still routed by some
 * stacks), IPv4-mapped (::ffff:0:0/96), IPv4-translated (::ffff:0:0:0/96), NAT64 (64:ff9b::/96, RFC
 * 6052), 6to4 (2002::/16, bits 16–47) and Teredo (2001::/32: the server in bits 32–63, the client in the
 * last 32 bits, inverted). ipaddr.js names these ranges but only unwraps the mapped one, and sees
 * `::7f00:1` (how URL spells [::127.0.0.1]) as global unicast.
 */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4[] | undefined {
  const p = address.parts as number[];
  const last32 = [ipv4(p[6] as number, p[7] as number)];
  if (address.match(MAPPED) || address.match(TRANSLATED) || address.match(NAT64) || address.match(COMPATIBLE)) {
    return last32;
  }
  if (address.match(SIX_TO_FOUR)) return [ipv4(p[1] as number, p[2] as number)];
  if (address.match(TEREDO)) {
    return [ipv4(p[2] as number, p[3] as number), ipv4(~(p[6] as number) & 0xffff, ~(p[7] as number) & 0xffff)];
  }
  return undefined;
}

/**
 * Whether an address is a public unicast one. An IPv6 address that embeds IPv4 addresses counts as
 * those addresses: public only when every one of them is.
 */
export function isPublicAddress(address: string): boolean {
  if (!ipaddr.isValid(address)) return false;
  const parsed = ipaddr.parse(address);
  if (parsed.kind() === "ipv4") return parsed.range() === "unicast";
  const embedded = embeddedIPv4(parsed as ipaddr.IPv6);
  if (embedded !== undefined) return embedded.every((v4) => v4.range() === "unicast");
  return parsed.range() === "unicast";
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
