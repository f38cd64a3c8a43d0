/**
 * Where a webhook may point. https only, and every address the host resolves to must be public:
 * no private, loopback, link-local, CGNAT, multicast, unspecified or documentation ranges. The
 * check runs after DNS resolution and the POST connects to the very address that was checked, so
 * a name that resolves to a public address once and a private one later (DNS rebinding) cannot
 * reach inside. WEBHOOK_ALLOW_PRIVATE=true (development, tests) allows http and any address.
 */
import dns from 'node:dns/promises';
import net from 'node:net';

export class WebhookTargetError extends Error {
  constructor(
    message: string,
    readonly reason: 'invalid_url' | 'scheme' | 'credentials' | 'private_address' | 'dns',
  ) {
    super(message);
  }
}

const blocked = new net.BlockList();
for (const [prefix, bits] of [
  ['0.0.0.0', 8], // "this network", unspecified
  ['10.0.0.0', 8],
  ['100.64.0.0', 10], // CGNAT
  ['127.0.0.0', 8],
  ['169.254.0.0', 16], // link-local (cloud metadata)
  ['172.16.0.0', 12],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['192.88.99.0', 24],
  ['192.168.0.0', 16],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  ['224.0.0.0', 4], // multicast
  ['240.0.0.0', 4], // reserved, broadcast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv4');
}
for (const [prefix, bits] of [
  ['::', 128], // unspecified
  ['::1', 128], // loopback
  ['64:ff9b:1::', 48],
  ['100::', 64], // discard
  ['2001::', 23], // IETF protocol assignments (Teredo, ORCHID…)
  ['2001:db8::', 32], // documentation
  ['2002::', 16], // 6to4 can embed any IPv4
  ['fc00::', 7], // unique local
  ['fe80::', 10], // link-local
  ['fec0::', 10], // site-local (deprecated)
  ['ff00::', 8], // multicast
] as const) {
  blocked.addSubnet(prefix, bits, 'ipv6');
}

/** The IPv4 address an IPv6 one embeds (mapped ::ffff:a.b.c.d, compatible ::a.b.c.d, NAT64 64:ff9b::/96), if any. */
function embeddedIpv4(ip: string): string | null {
  const lower = ip.toLowerCase();
  const dotted = lower.match(/^(?:::ffff:|::|64:ff9b::)(\d+\.\d+\.\d+\.\d+)$/);
  if (dotted) return dotted[1];
  const hex = lower.match(/^(?:::ffff:|64:ff9b::)([0-9a-f]{1,4}):([0-9a-f]{1,4})$/);
  if (hex) {
    const hi = parseInt(hex[1], 16);
    const lo = parseInt(hex[2], 16);
    return `${hi >> 8}.${hi & 255}.${lo >> 8}.${lo & 255}`;
  }
  return null;
}

/** True for an address a webhook must never reach (anything not plainly public unicast). */
export function isPrivateAddress(ip: string): boolean {
  const family = net.isIP(ip);
  if (family === 4) return blocked.check(ip, 'ipv4');
  if (family === 6) {
    const v4 = embeddedIpv4(ip);
    if (v4) return blocked.check(v4, 'ipv4');
    return blocked.check(ip, 'ipv6');
  }
  return true; // not an address at all: refuse
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
    if (bad) throw new WebhookTargetError(`the host ${host} resolves to ${bad.address}, a private, loopback, link-local or reserved address.`, 'private_address');
  }
  const first = addresses[0];
  return { url, address: first.address, family: first.family === 6 ? 6 : 4 };
}
