/**
 * Where a webhook may point. https only, and every address the host resolves to must be public:
 * no private, loopback, link-local, CGNAT, multicast, unspecified or documentation ranges. The
 * check runs after DNS resolution and the POST connects to the very address that was checked, so
 * a name that resolves to a public address once and a private one later (DNS rebinding) cannot
 * reach inside. WEBHOOK_ALLOW_PRIVATE=true (development, tests) allows http and any address.
 */
import dns from 'node:dns/promises';
import net from 'node:net';
import ipaddr from 'ipaddr.js';

export class WebhookTargetError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalid_url' | 'scheme' | 'credentials' | 'private_address' | 'dns',
  ) {
    super(message);
  }
}

/**
 * Address classification is ipaddr.js's (its special-purpose ranges: private, loopback, link-local,
 * CGNAT, multicast, reserved, documentation, benchmarking, 6to4, Teredo, NAT64, IPv4-mapped and
 * -translated…): only plain `unicast` is public. ipaddr.js files the deprecated IPv4-compatible block
 * ::/96 (`[::127.0.0.1]`, which the URL parser rewrites to `[::7f00:1]`) under unicast, so it is
 * refused here too (issue #23); every address form that embeds an IPv4 one is refused whole.
 */
function isIpv4Compatible(v6: ipaddr.IPv6): boolean {
  return v6.parts.slice(0, 6).every((p) => p === 0);
}

/** True for an address a webhook must never reach (anything not plainly public unicast). */
export function isPrivateAddress(ip: string): boolean {
  if (!net.isIP(ip)) return true; // not an address at all (nor a shorthand like 127.1): refuse
  let addr: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    addr = ipaddr.parse(ip);
  } catch {
    return true;
  }
  if (addr.kind() === 'ipv6' && isIpv4Compatible(addr as ipaddr.IPv6)) return true;
  return addr.range() !== 'unicast';
}

export interface ResolvedTarget {
  url: URL;
  /** The checked address the POST connects to. */
  address: string;
  family: 4 | 6;
}

export type Resolver = (hostname: string) => Promise<{ address: string; family: number }[]>;

const systemResolver: Resolver = (hostname) => dns.lookup(hostname, { all: true, verbatim: true });

/** Checks the URL's form (scheme, no credentials); throws WebhookTargetError. */
export function checkWebhookUrl(raw: string, allowPrivate: boolean): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new WebhookTargetError('url is not an absolute URL.', 'invalid_url');
  }
  const schemes = allowPrivate ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new WebhookTargetError(`url must use ${allowPrivate ? 'https or http' : 'https'}.`, 'scheme');
  if (url.username || url.password) throw new WebhookTargetError('url must not contain a user name or password.', 'credentials');
  if (!url.hostname) throw new WebhookTargetError('url has no host.', 'invalid_url');
  return url;
}

/**
 * Resolves the host and checks every address it resolves to (all must be public unless
 * allowPrivate); returns the first, which the caller connects to.
 */
export async function resolveWebhookTarget(raw: string, allowPrivate: boolean, resolve: Resolver = systemResolver): Promise<ResolvedTarget> {
  const url = checkWebhookUrl(raw, allowPrivate);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addresses: { address: string; family: number }[];
  if (net.isIP(host)) addresses = [{ address: host, family: net.isIP(host) }];
  else {
    try {
      addresses = await resolve(host);
    } catch (err) {
      throw new WebhookTargetError(`the host ${host} does not resolve (${(err as NodeJS.ErrnoException).code ?? 'DNS error'}).`, 'dns');
    }
  }
  if (!addresses.length) throw new WebhookTargetError(`the host ${host} does not resolve.`, 'dns');
  if (!allowPrivate) {
    const bad = addresses.find((a) => isPrivateAddress(a.address));
    // Which address is not said: set_webhook must not become a way to resolve names from inside (issue #23).
    if (bad) {
      const what = net.isIP(host) ? `${host} is` : `the host ${host} resolves to`;
      throw new WebhookTargetError(`${what} a private, loopback, link-local or reserved address.`, 'private_address');
    }
  }
  const first = addresses[0];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
